//===- Executor.h - run a compiled frame: guards and host program -*- C++ -*-===//
//
// One cache entry of a traced frame: its guards, evaluated in C++ straight on the Python
// objects (cheapest first), and its host program, interpreted here: graphs are compiled
// lazily on their first call, predicates are read back only where the host branches.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_EXECUTOR_H
#define DYNAMIR_RUNTIME_EXECUTOR_H

#include "dynamir/Runtime/GraphCompiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace dynamir::runtime {

/// A Dynamo-style source (`L['x']`, `G['np'].linalg`, `L['d']['w'][0]`, `type(L['self'])`)
/// compiled once into access steps.
class Source {
public:
  explicit Source(const std::string &text);
  pybind11::object resolve(pybind11::dict locals, pybind11::dict globals) const;
  const std::string &text() const { return source; }

private:
  struct Step {
    enum Kind { Attr, Item } kind;
    pybind11::object key; // the item's key, or the attribute's name as an interned str
  };
  std::string source;
  // The root: L[...] / G[...] (rootKey), or type(<typeOf>).
  bool fromGlobals = false;
  pybind11::object rootKey;
  std::shared_ptr<Source> typeOf;
  std::vector<Step> steps;

  Source() = default;
  static std::shared_ptr<Source> parse(const std::string &text, size_t &pos);
};

/// Runs a graph op by op with numpy (backend="eager"); results have the IR's dtypes and
/// shapes.
std::vector<pybind11::object> interpretGraph(mlir::func::FuncOp graph,
                                             const std::vector<pybind11::object> &inputs);

struct EntryStats {
  int64_t graphsCompiled = 0; // loaded, whether compiled now or found on disk
  int64_t graphsFromDisk = 0; // of those, found in the persistent cache
  int64_t hostSyncs = 0;
  int64_t cacheHits = 0; // calls whose guards held (call())
  double compileSeconds = 0;
};

/// How an entry runs its graphs: compiled for the CPU, op by op through numpy
/// (backend="eager"), or compiled for the GPU with copies in and out around each graph.
enum class Backend { CPU, Interpret, CUDA };

/// What Entry::run returns when a dyn.check fails: nothing the host program computed may be
/// used, and the frame runs eagerly from its start (where numpy or torch raises).
struct CheckFailed {
  std::string reason;
};

class Entry {
public:
  /// Takes a module after dyn-optimize and dyn-split-graphs; `function` is the host program.
  Entry(mlir::OwningOpRef<mlir::ModuleOp> module, const std::string &function,
        Backend backend = Backend::CPU);
  ~Entry();

  /// Evaluates the guards; on a failure returns false and describes the failing guard.
  bool check(pybind11::dict locals, pybind11::dict globals, std::string &failure) const;

  /// Runs the host program and returns its outputs (arrays and host scalars) in order, as a
  /// list; a host program that reaches its dyn.graph_break returns the break's live values
  /// (arrays) as a tuple instead, for the caller to resume the frame from; one whose dyn.check
  /// fails returns a CheckFailed.
  pybind11::object run(pybind11::dict locals, pybind11::dict globals);

  /// check() then run() in one pass: the failing guard's description (a str) if a guard
  /// fails, else what run() returns.
  pybind11::object call(pybind11::dict locals, pybind11::dict globals);

  const EntryStats &stats() const { return counters; }
  /// Names of the graphs of this entry and whether each has been compiled.
  std::vector<std::pair<std::string, bool>> graphs() const;
  std::string outputStructure() const;

private:
  struct Guard;
  /// A graph call of the host program with what each call needs, resolved once.
  struct CallSite {
    CompiledGraph *graph = nullptr;
    std::vector<pybind11::dtype> outputDtypes;
    std::vector<std::vector<pybind11::ssize_t>> outputShapes;
    /// The arrays this call site returned last time. When nothing else references one any
    /// more (the caller dropped it), its memory is reused instead of faulting in fresh pages.
    std::vector<pybind11::object> recycled; // null where nothing is kept
  };
  CallSite &callSite(mlir::func::CallOp call);
  /// Runs a graph call on the GPU. Host inputs are copied in once per call (`onDevice` keeps
  /// the copies for later graphs); results stay on the device as DeviceArrays in `env`.
  void runOnDevice(CallSite &site, mlir::func::CallOp call,
                   llvm::SmallDenseMap<mlir::Value, pybind11::object, 16> &env,
                   llvm::SmallDenseMap<mlir::Value, pybind11::object, 4> &onDevice);
  pybind11::object runWith(const std::vector<pybind11::object> &args);
  /// What keeps the host from writing the graph's final values back into the arguments the
  /// program stores into (`written` tensor guards), or "".
  std::string writeBackConflict(const std::vector<pybind11::object> &args) const;

  std::vector<Guard> guards;
  llvm::DenseMap<mlir::Operation *, CallSite> callSites;
  std::vector<Source> argSources;
  std::vector<size_t> writtenArgs;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp host;
  Backend backend = Backend::CPU;
  llvm::StringMap<std::unique_ptr<CompiledGraph>> compiled;
  EntryStats counters;
};

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_EXECUTOR_H
