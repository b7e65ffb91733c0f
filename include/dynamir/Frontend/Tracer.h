//===- Tracer.h - CPython bytecode to the dyn dialect ----------*- C++ -*-===//
//
// Dynamir's frontend: interprets a Python function's bytecode symbolically with fake tensors
// (dtype and shape only) and records a `dyn` function with guards, data-dependent `dyn.if`
// regions and graph breaks. It never asks numpy or torch to compute on data.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_FRONTEND_TRACER_H
#define DYNAMIR_FRONTEND_TRACER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace dynamir::frontend {

struct TraceOptions {
  /// Sizes of tensor arguments become `?`; only rank and dtype are guarded.
  bool dynamic = false;
  /// Recorded on the module for the passes: keep data-dependent ifs on the device.
  bool captureControlFlow = false;
  /// How deep user functions are inlined before the call becomes a graph break.
  unsigned maxInlineDepth = 8;
  /// Sources of Python float and int inputs that are graph inputs rather than constants
  /// guarded by value (their value changed between calls: Dynamo's automatic dynamic).
  std::vector<std::string> dynamicScalars;
};

struct GraphBreakInfo {
  std::string kind;
  std::string reason;
  std::string filename;
  int64_t line = 0;
};

struct TraceResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<GraphBreakInfo> graphBreaks;
  /// Non-empty when the frame can never be traced (generators, exceptions, another Python
  /// version): the function runs eagerly, for this reason.
  std::string eagerReason;
  /// Real Python calls the tracer made with an array, tensor or numpy scalar argument (counted
  /// where the tracer runs Python code on values; library functions on fake tensors only emit
  /// IR, so this stays 0 unless a Python-level computation touched real data).
  int64_t kernelCalls = 0;
  /// At a graph break: how the host goes on after it (see Tracer::resumePlan), a dict.
  pybind11::object resume;
  /// The Python objects the result structure names as `_k[i]` (constants that are no literal,
  /// such as nan or a dtype, and the very objects a frame returns, such as a module).
  pybind11::list constants;
  /// Dynamic scalars whose values the trace needed: trace again with them as constants.
  std::vector<std::string> specialize;
};

/// Traces `fn(*args, **kwargs)`. `fn` is a Python function or bound method. Python-level
/// problems in the traced program are reported in the result, never thrown.
TraceResult trace(mlir::MLIRContext *context, pybind11::handle fn, pybind11::tuple args,
                  pybind11::dict kwargs, const TraceOptions &options);

} // namespace dynamir::frontend

#endif // DYNAMIR_FRONTEND_TRACER_H
