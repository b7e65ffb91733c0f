//===- PythonConstants.h - dyn constants as numpy arrays -------*- C++ -*-===//
//
// The numpy array a dense constant stands for: the eager backend and the executor hand
// dyn.constant values to numpy, and the tracer reads the value of a tensor made of constants
// alone (`tolist()` of a constant array in numpy's own code), so all three convert the same way.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_SUPPORT_PYTHONCONSTANTS_H
#define DYNAMIR_SUPPORT_PYTHONCONSTANTS_H

#include "mlir/IR/BuiltinAttributes.h"

#include <pybind11/pybind11.h>

namespace dynamir::python {

/// `dense` as a numpy array of its dtype and shape. Throws std::runtime_error for an element
/// type numpy has no dtype for.
pybind11::object constantArray(mlir::DenseElementsAttr dense);

} // namespace dynamir::python

#endif // DYNAMIR_SUPPORT_PYTHONCONSTANTS_H
