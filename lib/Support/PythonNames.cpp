//===- PythonNames.cpp - names of Python types and dtypes -----------------===//

#include "dynamir/Support/PythonNames.h"

#include "mlir/IR/BuiltinTypes.h"

namespace py = pybind11;

std::string dynamir::python::typeName(py::handle obj) {
  py::handle type = py::type::handle_of(obj);
  std::string module = py::str(type.attr("__module__"));
  std::string name = py::str(type.attr("__qualname__"));
  return module == "builtins" ? name : module + "." + name;
}

std::string dynamir::python::dtypeName(py::handle dtype) {
  std::string name = py::str(dtype);
  if (name.rfind("torch.", 0) == 0)
    name = name.substr(6);
  return name;
}

std::string dynamir::python::numpyDtype(mlir::Type t) {
  if (auto complex = mlir::dyn_cast<mlir::ComplexType>(t)) {
    mlir::Type part = complex.getElementType();
    return part.isF32() ? "complex64" : part.isF64() ? "complex128" : "";
  }
  if (t.isF32())
    return "float32";
  if (t.isF64())
    return "float64";
  if (t.isF16())
    return "float16";
  if (t.isInteger(1))
    return "bool";
  if (t.isUnsignedInteger())
    return "uint" + std::to_string(t.getIntOrFloatBitWidth());
  if (t.isInteger(8))
    return "int8";
  if (t.isInteger(16))
    return "int16";
  if (t.isInteger(32))
    return "int32";
  if (t.isInteger(64))
    return "int64";
  return "";
}
