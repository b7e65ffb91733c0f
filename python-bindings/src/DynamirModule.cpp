//===- DynamirModule.cpp - the _dynamir Python extension ------------------===//

#include "Bindings.h"

namespace py = pybind11;

PYBIND11_MODULE(_dynamir, m) {
  m.doc() = "Dynamir's native core: MLIR IR handling and the bytecode frontend";
  py::register_exception<dynamir::python::MLIRError>(m, "MLIRError", PyExc_RuntimeError);
  dynamir::python::populateIRBindings(m);
}
