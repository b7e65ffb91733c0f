//===- PythonNames.h - names of Python types and dtypes --------*- C++ -*-===//
//
// The strings by which guards name what they check: the tracer writes them into the guards it
// emits, and the runtime compares a live object's against them, so both must compute them from
// this one definition.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_SUPPORT_PYTHONNAMES_H
#define DYNAMIR_SUPPORT_PYTHONNAMES_H

#include "mlir/IR/Types.h"

#include <pybind11/pybind11.h>

#include <string>

namespace dynamir::python {

/// The name of an object's exact type, `module.qualname` ("numpy.ndarray",
/// "torch.nn.parameter.Parameter"), bare for builtins ("int", "tuple").
std::string typeName(pybind11::handle obj);

/// The name of a numpy or torch dtype (or of a dtype name) in numpy's spelling: "float32" for
/// np.dtype("float32") and torch.float32 alike.
std::string dtypeName(pybind11::handle dtype);

/// numpy's name of an element type ("float32", "bool"), or "" when numpy has none (bf16).
std::string numpyDtype(mlir::Type type);

} // namespace dynamir::python

#endif // DYNAMIR_SUPPORT_PYTHONNAMES_H
