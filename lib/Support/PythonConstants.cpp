//===- PythonConstants.cpp - dyn constants as numpy arrays ----------------===//

#include "dynamir/Support/PythonConstants.h"

#include "dynamir/Support/PythonNames.h"

#include "mlir/IR/BuiltinTypes.h"

#include <complex>
#include <stdexcept>

using namespace mlir;
namespace py = pybind11;
using namespace dynamir::python;

py::object dynamir::python::constantArray(DenseElementsAttr dense) {
  py::module_ np = py::module_::import("numpy");
  std::string dtype = numpyDtype(dense.getElementType());
  if (dtype.empty())
    throw std::runtime_error("numpy has no dtype for this element type");
  py::list shape;
  for (int64_t size : dense.getType().getShape())
    shape.append(size);
  bool isFloat = isa<FloatType>(dense.getElementType());
  bool isComplex = isa<ComplexType>(dense.getElementType());
  bool isUnsigned = dense.getElementType().isUnsignedInteger();
  auto number = [&](auto v) -> py::object {
    if constexpr (std::is_same_v<decltype(v), APFloat>) {
      bool lost;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      return py::float_(v.convertToDouble());
    } else if constexpr (std::is_same_v<decltype(v), std::complex<APFloat>>) {
      bool lost;
      APFloat re = v.real(), im = v.imag();
      re.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      im.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      return py::reinterpret_steal<py::object>(
          PyComplex_FromDoubles(re.convertToDouble(), im.convertToDouble()));
    } else {
      // i1 is unsigned (true is 1, not -1), and so are the unsigned types; the others are
      // signed.
      return v.getBitWidth() == 1 || isUnsigned ? py::int_(v.getZExtValue())
                                                : py::int_(v.getSExtValue());
    }
  };
  if (dense.isSplat())
    return np.attr("full")(shape,
                           isComplex ? number(dense.getSplatValue<std::complex<APFloat>>())
                           : isFloat ? number(dense.getSplatValue<APFloat>())
                                     : number(dense.getSplatValue<APInt>()),
                           dtype);
  py::list values;
  if (isComplex)
    for (std::complex<APFloat> v : dense.getValues<std::complex<APFloat>>())
      values.append(number(v));
  else if (isFloat)
    for (APFloat v : dense.getValues<APFloat>())
      values.append(number(v));
  else
    for (APInt v : dense.getValues<APInt>())
      values.append(number(v));
  return np.attr("reshape")(np.attr("asarray")(values, dtype), shape);
}
