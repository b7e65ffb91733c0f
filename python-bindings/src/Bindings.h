//===- Bindings.h - pieces of the _dynamir extension -----------*- C++ -*-===//

#ifndef DYNAMIR_PYTHON_BINDINGS_H
#define DYNAMIR_PYTHON_BINDINGS_H

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

namespace dynamir::python {

/// Raised (as dynamir.MLIRError) for diagnostics from parsing, verification or passes.
struct MLIRError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Context and Module; the frontend's `trace`, which returns Modules, lives beside them.
void populateIRBindings(pybind11::module_ &m);

} // namespace dynamir::python

#endif // DYNAMIR_PYTHON_BINDINGS_H
