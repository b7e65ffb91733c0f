//===- LibraryReductions.cpp - Reductions of numpy and torch --------------===//
//
// sum, mean, prod, max, min, amax, amin, argmax and argmin over all or some axes (torch.max with a
// dim returns values and indices), and softmax and log_softmax along one.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// sum, mean, prod, max, min, amax, amin, argmax and argmin over an axis, several or all,
/// with keepdims/keepdim.
VarPtr reduction(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  VarPtr axis = c.take(1, {"axis", "dim"});
  VarPtr keep = c.take(2, {"keepdims", "keepdim"});
  if (keep && (keep->kind != VK::Const || !PyBool_Check(keep->obj.ptr())))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + ": keepdims must be a Python bool");
  bool keepdim = keep && keep->obj.cast<bool>();
  bool isArg = c.name == "argmax" || c.name == "argmin";
  SmallVector<int64_t> dims;
  if (isNone(axis)) {
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
  } else if (rank == 0 && c.lib == Lib::Torch) {
    // torch takes dim 0 or -1 of a 0-d tensor as the tensor itself (numpy raises).
    std::vector<VarPtr> named =
        axis->kind == VK::Tuple || axis->kind == VK::List ? axis->items : std::vector<VarPtr>{axis};
    for (const VarPtr &d : named)
      if (int64_t n = intOf(d); n != 0 && n != -1)
        breakTrace(dyn::BreakKind::unsupported_call, "dimension out of range");
  } else {
    if (isArg && axis->kind != VK::Const)
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " takes a single axis");
    dims = dimsOf(axis, rank);
    if (llvm::SmallDenseSet<int64_t>(dims.begin(), dims.end()).size() != dims.size())
      breakTrace(dyn::BreakKind::unsupported_call, "duplicate value in 'axis'");
  }
  Value v = x->value;
  Type element = t.elementTypeOf(v);
  RankedTensorType xType = t.typeOf(v);
  // Maxima, minima and their positions of nothing raise in numpy and torch.
  if (c.name != "sum" && c.name != "prod" && c.name != "mean")
    for (int64_t d : dims)
      if (xType.getDimSize(d) == 0)
        breakTrace(dyn::BreakKind::unsupported_call,
                   c.name + " of an empty array (a reduction without an identity)");
  auto attr = t.b.getDenseI64ArrayAttr(dims);
  // numpy and torch accumulate 16-bit floats in float32 and round once at the end; summing
  // in f16 loses 2-4 ulp over a few hundred elements.
  bool narrowFloat = element.isF16() || element.isBF16();
  if (c.name == "sum" || c.name == "prod") {
    if (!isa<FloatType>(element))
      v = t.castTo(v, t.i64());
    if (narrowFloat)
      v = t.castTo(v, t.f32());
    Value r = c.name == "sum" ? Value(dyn::SumOp::create(t.b, c.loc, v, attr, keepdim))
                              : Value(dyn::ProdOp::create(t.b, c.loc, v, attr, keepdim));
    return c.ufunc(narrowFloat ? t.castTo(r, element) : r);
  }
  if (c.name == "mean") {
    if (!isa<FloatType>(element) && c.lib == Lib::Torch)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "torch.mean of an integer tensor raises in eager torch");
    Type meanType = narrowFloat ? t.f32() : t.floatFor(c.lib, element);
    Value r = dyn::MeanOp::create(t.b, c.loc, t.castTo(v, meanType), attr, keepdim);
    return c.ufunc(narrowFloat ? t.castTo(r, element) : r);
  }
  if (element.isInteger(1))
    v = t.castTo(v, t.i64());
  if (isArg)
    return c.ufunc(c.name == "argmax" ? Value(dyn::ArgMaxOp::create(t.b, c.loc, v, attr, keepdim))
                                      : Value(dyn::ArgMinOp::create(t.b, c.loc, v, attr, keepdim)));
  bool isMax = c.name == "max" || c.name == "amax";
  Value values = isMax ? Value(dyn::MaxOp::create(t.b, c.loc, v, attr, keepdim))
                       : Value(dyn::MinOp::create(t.b, c.loc, v, attr, keepdim));
  values = t.castTo(values, element);
  // torch.max(x, dim) returns (values, indices).
  if (c.lib == Lib::Torch && !isNone(axis) && (c.name == "max" || c.name == "min")) {
    VarPtr pair = makeVar(VK::Tuple);
    pair->structType = "torch.return_types:" + c.name;
    pair->items = {c.result(values),
                   c.result(isMax ? Value(dyn::ArgMaxOp::create(t.b, c.loc, v, attr, keepdim))
                                  : Value(dyn::ArgMinOp::create(t.b, c.loc, v, attr, keepdim)))};
    return pair;
  }
  return c.ufunc(values);
}

/// softmax and log_softmax along an explicit dim.
VarPtr softmax(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr dim = c.take(1, {"dim", "axis"});
  if (isNone(dim))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " needs an explicit dim");
  int64_t d = singleDim(dim, t.typeOf(x->value).getRank());
  Value v = t.castTo(x->value, t.floatFor(c.lib, t.elementTypeOf(x->value)));
  return c.result(c.name == "softmax" ? Value(dyn::SoftmaxOp::create(t.b, c.loc, v, d))
                                      : Value(dyn::LogSoftmaxOp::create(t.b, c.loc, v, d)));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::reductionFunctions() {
  std::vector<LibraryFunction> functions = {
      {"sum", reduction},    {"mean", reduction},  {"prod", reduction},      {"max", reduction},
      {"min", reduction},    {"amax", reduction},  {"amin", reduction},      {"argmax", reduction},
      {"argmin", reduction}, {"softmax", softmax}, {"log_softmax", softmax},
  };
  return functions;
}
