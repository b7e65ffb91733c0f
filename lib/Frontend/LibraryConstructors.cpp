//===- LibraryConstructors.cpp - Array constructors of numpy and torch ----===//
//
// zeros, ones, full and empty (as zeros) of a shape or like another array, and arange: new arrays
// from constants, as dyn.full and dyn.arange.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// np.zeros_like(x), torch.ones_like(x), np.full_like(x, fill), np.empty_like(x) (zeros), with an
/// optional dtype.
VarPtr fullLike(LibraryCall &c) {
  Tracer &t = c.t;
  RankedTensorType type = t.typeOf(c.tensorArg(0)->value);
  if (!type.hasStaticShape())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a dynamically shaped tensor");
  VarPtr dtype = c.take(c.name == "full_like" ? 2 : 1, {"dtype"});
  Type element = isNone(dtype) ? type.getElementType() : t.dtypeArgument(c.lib, dtype);
  double fill = c.name == "ones_like" ? 1.0 : 0.0;
  if (c.name == "full_like")
    fill = constant(c.take(1, {"fill_value"}), "fill_value").cast<double>();
  TypedAttr value = isa<FloatType>(element)
                        ? TypedAttr(FloatAttr::get(element, fill))
                        : TypedAttr(IntegerAttr::get(element, static_cast<int64_t>(fill)));
  return c.result(dyn::FullOp::create(t.b, c.loc, type.clone(element), value));
}

/// np.zeros(shape), torch.ones(shape), np.full(shape, fill): a constant shape and fill.
VarPtr full(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr shapeArg = c.take(0, {"shape", "size"});
  if (!shapeArg ||
      (shapeArg->kind != VK::Const && shapeArg->kind != VK::Tuple && shapeArg->kind != VK::List))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " needs a constant shape");
  SmallVector<int64_t> shape;
  for (const VarPtr &d :
       shapeArg->kind == VK::Const ? std::vector<VarPtr>{shapeArg} : shapeArg->items) {
    shape.push_back(intOf(d));
    if (shape.back() < 0)
      breakTrace(dyn::BreakKind::unsupported_call, "negative dimensions are not allowed");
  }
  VarPtr fill = c.name == "full" ? c.take(1, {"fill_value"})
                                 : constVar(py::float_(c.name == "ones" ? 1.0 : 0.0));
  py::handle fillValue = constant(fill, "fill_value");
  VarPtr dtype = c.take(c.name == "full" ? 2 : 1, {"dtype"});
  Type element;
  if (!isNone(dtype))
    element = t.dtypeArgument(c.lib, dtype);
  else if (PyBool_Check(fillValue.ptr())) // full(shape, True) is a bool array
    element = t.i1();
  else if (PyLong_Check(fillValue.ptr()))
    element = t.i64();
  else if (PyFloat_Check(fillValue.ptr()))
    element = c.lib == Lib::Numpy ? t.f64() : t.f32();
  else
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + " with a fill of type " + python::typeName(fillValue));
  auto type = RankedTensorType::get(shape, element);
  TypedAttr value = isa<FloatType>(element)
                        ? TypedAttr(FloatAttr::get(element, fillValue.cast<double>()))
                        : TypedAttr(IntegerAttr::get(element, fillValue.cast<int64_t>()));
  return c.result(dyn::FullOp::create(t.b, c.loc, type, value));
}

/// np.arange / torch.arange with constant bounds.
VarPtr arange(LibraryCall &c) {
  Tracer &t = c.t;
  std::vector<double> bounds;
  bool allInts = true;
  for (const VarPtr &a : c.args) {
    if (a->kind != VK::Const)
      breakTrace(dyn::BreakKind::unsupported_call, "arange with non-constant bounds");
    allInts &= PyLong_Check(a->obj.ptr());
    bounds.push_back(a->obj.cast<double>());
  }
  if (bounds.empty() || bounds.size() > 3)
    breakTrace(dyn::BreakKind::unsupported_call, "arange takes 1 to 3 bounds");
  double start = bounds.size() > 1 ? bounds[0] : 0,
         stop = bounds.size() > 1 ? bounds[1] : bounds.at(0),
         stepSize = bounds.size() > 2 ? bounds[2] : 1;
  if (stepSize == 0 || !std::isfinite((stop - start) / stepSize))
    breakTrace(dyn::BreakKind::unsupported_call, "arange with a zero or infinite step count");
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / stepSize)));
  VarPtr dtype = c.take(99, {"dtype"});
  Type element = !isNone(dtype) ? t.dtypeArgument(c.lib, dtype)
                                : (allInts ? t.i64() : (c.lib == Lib::Numpy ? t.f64() : t.f32()));
  return c.result(dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({count}, element),
                                        t.b.getF64FloatAttr(start), t.b.getF64FloatAttr(stepSize)));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::constructorFunctions() {
  std::vector<LibraryFunction> functions = {
      {"zeros_like", fullLike}, {"ones_like", fullLike}, {"full_like", fullLike},
      {"empty_like", fullLike}, {"zeros", full},         {"ones", full},
      {"full", full},           {"arange", arange},
  };
  return functions;
}
