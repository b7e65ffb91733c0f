//===- LibraryMath.cpp - Elementwise math made of dyn ops -----------------===//
//
// Elementwise functions that are several dyn ops: sign, the float predicates (isnan, isinf,
// isfinite, isclose), nan_to_num and nansum, the logical functions (logical_and/or/xor/not),
// fmod, hypot, arctan2, outer, and torch's fused ones (lerp, addcmul, addcdiv: dyn.fma where
// torch fuses a multiply-add).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// A Python number (not a bool) argument, or nullopt.
std::optional<double> numberOf(const VarPtr &v) {
  if (!v || v->kind != VK::Const || PyBool_Check(v->obj.ptr()) ||
      !(PyLong_Check(v->obj.ptr()) || PyFloat_Check(v->obj.ptr())))
    return std::nullopt;
  return v->obj.cast<double>();
}

/// `compute` in float32 for 16-bit floats (torch's opmath type), rounded once to `element`.
Type opmathType(Tracer &t, Type element) {
  return element.getIntOrFloatBitWidth() == 16 ? t.f32() : element;
}

//===----------------------------------------------------------------------===//
// sign and the float predicates
//===----------------------------------------------------------------------===//

/// np.sign / torch.sign / torch.sgn (of real tensors): 1, -1 or 0 in x's dtype. numpy keeps NaN
/// and makes -0.0 a 0.0; torch's sign of NaN is 0.
VarPtr sign(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  Type element = t.elementTypeOf(x->value);
  if (element.isInteger(1)) {
    if (c.lib == Lib::Numpy)
      breakTrace(dyn::BreakKind::unsupported_call, "np.sign of booleans raises");
    return c.result(copyOf(t, c.loc, x)->value); // torch: the bools themselves, as a new tensor
  }
  Value v = x->value;
  Value zero = t.scalarConstant(py::int_(0), element);
  Value one = t.scalarConstant(py::int_(1), element);
  Value minusOne = t.scalarConstant(py::int_(-1), element);
  Value otherwise = zero;
  if (c.lib == Lib::Numpy && isa<FloatType>(element))
    otherwise = t.create<dyn::WhereOp>({t.create<dyn::EqOp>({v, zero}), zero, v});
  Value negative = t.create<dyn::WhereOp>({t.create<dyn::LtOp>({v, zero}), minusOne, otherwise});
  return c.ufunc(t.create<dyn::WhereOp>({t.create<dyn::GtOp>({v, zero}), one, negative}));
}

/// isnan, isinf or isfinite (`which`) of a tensor's elements, as an i1 tensor.
Value floatPredicate(Tracer &t, StringRef which, Value v) {
  Type element = t.elementTypeOf(v);
  if (!isa<FloatType>(element)) // integers are never NaN or infinite
    return which == "isfinite" ? t.create<dyn::EqOp>({v, v}) : t.create<dyn::NeOp>({v, v});
  if (which == "isnan")
    return t.create<dyn::NeOp>({v, v});
  Value magnitude = dyn::AbsOp::create(t.b, t.loc(), v);
  Value inf = t.scalarConstant(py::float_(INFINITY), element);
  return which == "isinf" ? t.create<dyn::EqOp>({magnitude, inf})
                          : t.create<dyn::LtOp>({magnitude, inf});
}

/// np.isnan / torch.isnan / x.isnan(), and isinf and isfinite.
VarPtr predicate(LibraryCall &c) {
  return c.ufunc(floatPredicate(c.t, c.name, c.tensorArg(0)->value));
}

/// The same predicate of a Var: a tensor's, or a Python number's as a constant.
VarPtr predicateOf(LibraryCall &c, StringRef which, const VarPtr &v) {
  if (v->kind == VK::Tensor)
    return c.ufunc(floatPredicate(c.t, which, v->value));
  double n = numberOf(v).value_or(0);
  bool r = which == "isnan" ? std::isnan(n) : which == "isinf" ? std::isinf(n) : std::isfinite(n);
  return constVar(py::bool_(r));
}

/// np.nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None) / torch.nan_to_num: NaN and
/// the infinities replaced by Python numbers (by default 0.0 and the dtype's largest and lowest
/// finite values) cast to x's dtype; integers and bools are copied unchanged. numpy's copy=False
/// (in place) is not modelled.
VarPtr nanToNum(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  bool numpy = c.lib == Lib::Numpy;
  if (VarPtr copy = numpy ? c.take(1, {"copy"}) : nullptr; !isNone(copy) && !flagOf(copy, "copy"))
    return nullptr;
  size_t at = numpy ? 2 : 1;
  VarPtr nan = c.take(at, {"nan"}), posinf = c.take(at + 1, {"posinf"});
  VarPtr neginf = c.take(at + 2, {"neginf"});
  if (c.args.size() > 1)
    return nullptr;
  Type element = t.elementTypeOf(x->value);
  Value v = dyn::CastOp::create(t.b, c.loc, x->value, TypeAttr::get(element)); // a copy
  if (auto real = dyn_cast<FloatType>(element)) {
    const llvm::fltSemantics &semantics = real.getFloatSemantics();
    auto replacement = [&](const VarPtr &arg, double fallback) {
      if (isNone(arg))
        return t.scalarConstant(py::float_(fallback), element);
      std::optional<double> n = arg->kind == VK::Const ? numberOf(arg) : std::nullopt;
      if (!n)
        breakTrace(dyn::BreakKind::unsupported_call, "nan_to_num with a value not a number");
      return t.scalarConstant(py::float_(*n), element);
    };
    Value inf = t.scalarConstant(py::float_(INFINITY), element);
    Value minusInf = t.scalarConstant(py::float_(-INFINITY), element);
    double largest = APFloat::getLargest(semantics).convertToDouble();
    v = t.create<dyn::WhereOp>({t.create<dyn::NeOp>({v, v}), replacement(nan, 0.0), v});
    v = t.create<dyn::WhereOp>({t.create<dyn::EqOp>({v, inf}), replacement(posinf, largest), v});
    v = t.create<dyn::WhereOp>(
        {t.create<dyn::EqOp>({v, minusInf}), replacement(neginf, -largest), v});
  }
  return c.ufunc(v);
}

/// np.nansum / torch.nansum: the sum with NaN counted as zero (the same arguments as sum).
VarPtr nanSum(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  Type element = t.elementTypeOf(x->value);
  if (isa<FloatType>(element))
    c.args[0] =
        c.result(t.create<dyn::WhereOp>({t.create<dyn::NeOp>({x->value, x->value}),
                                         t.scalarConstant(py::float_(0.0), element), x->value}));
  VarPtr r = t.callTensorOp(c.lib, "sum", c.args, std::move(c.kwargs));
  c.kwargs.clear();
  return r;
}

/// np.isclose(a, b, rtol, atol, equal_nan), as numpy composes it: b in a float type,
/// |a - b| <= atol + rtol * |b| where b is finite, or a == b (or both NaN).
VarPtr isCloseNumpy(LibraryCall &c, VarPtr x, VarPtr y, double rtol, double atol, bool nan) {
  Tracer &t = c.t;
  if (y->kind == VK::Tensor && !isa<FloatType>(t.elementTypeOf(y->value)))
    y = c.result(t.castTo(y->value, t.f64())); // np.result_type(b, 1.0)
  else if (y->kind == VK::Const)
    y = constVar(py::float_(*numberOf(y)));
  VarPtr yAbs = y->kind == VK::Tensor ? t.callTensorOp(c.lib, "abs", {y}, {})
                                      : constVar(py::float_(std::fabs(*numberOf(y))));
  VarPtr difference = t.callTensorOp(c.lib, "abs", {t.binary(NB_SUBTRACT, x, y)}, {});
  VarPtr tolerance = t.binary(NB_ADD, constVar(py::float_(atol)),
                              t.binary(NB_MULTIPLY, constVar(py::float_(rtol)), yAbs));
  VarPtr close =
      t.binary(NB_AND, t.compare(1, difference, tolerance), predicateOf(c, "isfinite", y));
  close = t.binary(NB_OR, close, t.compare(2, x, y));
  if (nan)
    close = t.binary(NB_OR, close,
                     t.binary(NB_AND, predicateOf(c, "isnan", x), predicateOf(c, "isnan", y)));
  return close;
}

/// torch.isclose(a, b, rtol, atol, equal_nan), as ATen composes it: a == b (or both NaN), or
/// |a - b| finite and at most atol + |rtol * b| (bools as the default float type).
VarPtr isCloseTorch(LibraryCall &c, VarPtr x, VarPtr y, double rtol, double atol, bool nan) {
  Tracer &t = c.t;
  if (x->kind != VK::Tensor || y->kind != VK::Tensor ||
      t.elementTypeOf(x->value) != t.elementTypeOf(y->value) || rtol < 0 || atol < 0)
    breakTrace(dyn::BreakKind::unsupported_call,
               "torch.isclose of different dtypes or with negative tolerances raises");
  Type element = t.elementTypeOf(x->value);
  VarPtr close = t.compare(2, x, y);
  if (nan && isa<FloatType>(element))
    close = t.binary(NB_OR, close,
                     t.binary(NB_AND, predicateOf(c, "isnan", x), predicateOf(c, "isnan", y)));
  if (rtol == 0 && atol == 0)
    return close;
  if (element.isInteger(1)) {
    x = c.result(t.castTo(x->value, t.floatFor(Lib::Torch, element)));
    y = c.result(t.castTo(y->value, t.floatFor(Lib::Torch, element)));
  }
  VarPtr allowed = t.binary(
      NB_ADD, constVar(py::float_(atol)),
      t.callTensorOp(c.lib, "abs", {t.binary(NB_MULTIPLY, constVar(py::float_(rtol)), y)}, {}));
  VarPtr actual = t.callTensorOp(c.lib, "abs", {t.binary(NB_SUBTRACT, x, y)}, {});
  VarPtr within =
      t.binary(NB_AND, predicateOf(c, "isfinite", actual), t.compare(1, actual, allowed));
  return t.binary(NB_OR, close, within);
}

/// np.isclose / torch.isclose / x.isclose(y): tolerances must be Python numbers.
VarPtr isClose(LibraryCall &c) {
  bool torchLib = c.lib == Lib::Torch;
  VarPtr x = c.take(0, {torchLib ? "input" : "a"}), y = c.take(1, {torchLib ? "other" : "b"});
  VarPtr rtolArg = c.take(2, {"rtol"}), atolArg = c.take(3, {"atol"});
  VarPtr nanArg = c.take(4, {"equal_nan"});
  if (!x || !y || c.args.size() > 5)
    return nullptr;
  for (const VarPtr &v : {x, y})
    if (v->kind != VK::Tensor && !numberOf(v))
      breakTrace(dyn::BreakKind::unsupported_call, "isclose of something not a number or array");
  if (x->kind != VK::Tensor && y->kind != VK::Tensor)
    return nullptr;
  std::optional<double> rtol = isNone(rtolArg) ? 1e-5 : numberOf(rtolArg);
  std::optional<double> atol = isNone(atolArg) ? 1e-8 : numberOf(atolArg);
  if (!rtol || !atol || !std::isfinite(*rtol) || !std::isfinite(*atol))
    breakTrace(dyn::BreakKind::unsupported_call, "isclose tolerances that are not finite numbers");
  bool nan = !isNone(nanArg) && constant(nanArg, "equal_nan").cast<bool>();
  return torchLib ? isCloseTorch(c, x, y, *rtol, *atol, nan)
                  : isCloseNumpy(c, x, y, *rtol, *atol, nan);
}

//===----------------------------------------------------------------------===//
// Logical functions
//===----------------------------------------------------------------------===//

/// An operand of a logical function as bools: a tensor tested for non-zero (NaN is true), or a
/// Python number's truth.
Value truthOf(LibraryCall &c, const VarPtr &v) {
  if (v->kind == VK::Tensor)
    return c.t.castTo(v->value, c.t.i1());
  bool isBool = v->kind == VK::Const && PyBool_Check(v->obj.ptr());
  if (c.lib == Lib::Torch || (!numberOf(v) && !isBool))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of " + c.t.describe(v));
  return c.t.scalarConstant(py::int_(v->obj.cast<bool>() ? 1 : 0), c.t.i1());
}

/// np.invert, np.bitwise_not, torch.bitwise_not: `~x`.
VarPtr bitwiseNot(LibraryCall &c) {
  if (c.args.size() != 1 || c.args[0]->kind != VK::Tensor)
    return nullptr;
  return c.ufunc(c.t.bitwiseNot(c.args[0]->value));
}

/// np.logical_and / or / xor / not, torch's and the methods: bools from any dtype.
VarPtr logical(LibraryCall &c) {
  Tracer &t = c.t;
  size_t arity = c.name == "logical_not" ? 1 : 2;
  if (c.args.size() != arity ||
      llvm::none_of(c.args, [](const VarPtr &v) { return v->kind == VK::Tensor; }))
    return nullptr;
  Value a = truthOf(c, c.args[0]);
  if (arity == 1)
    return c.ufunc(dyn::NotOp::create(t.b, c.loc, a));
  Value b = truthOf(c, c.args[1]);
  if (c.name == "logical_and")
    return c.ufunc(t.create<dyn::LogicalAndOp>({a, b}));
  if (c.name == "logical_or")
    return c.ufunc(t.create<dyn::LogicalOrOp>({a, b}));
  return c.ufunc(t.create<dyn::NeOp>({a, b})); // xor of bools
}

//===----------------------------------------------------------------------===//
// Binary functions
//===----------------------------------------------------------------------===//

/// np.fmod / torch.fmod / x.fmod(y): the remainder with the dividend's sign (dyn.fmod).
VarPtr fmod(LibraryCall &c) {
  Tracer &t = c.t;
  bool torchLib = c.lib == Lib::Torch;
  VarPtr x = torchLib ? c.take(0, {"input"}) : c.take(0, {});
  VarPtr y = torchLib ? c.take(1, {"other"}) : c.take(1, {});
  if (!x || !y || c.args.size() > 2 || (torchLib && x->kind != VK::Tensor) ||
      (x->kind != VK::Tensor && y->kind != VK::Tensor))
    return nullptr;
  Type element = t.promoted(c.lib, x, y);
  if (element.isInteger(1)) { // int8 in numpy; torch raises
    if (torchLib)
      breakTrace(dyn::BreakKind::unsupported_call, "fmod of booleans raises in torch");
    element = IntegerType::get(t.ctx, 8);
  }
  // torch raises for an integer division by zero, which a graph cannot.
  if (torchLib && !isa<FloatType>(element) && (y->kind == VK::Tensor || !y->obj.cast<bool>()))
    breakTrace(dyn::BreakKind::unsupported_call,
               "integer fmod of torch tensors by a tensor (zero divisors raise)");
  return c.ufunc(t.create<dyn::FModOp>({t.operandAs(x, element), t.operandAs(y, element)}));
}

/// np.hypot / torch.hypot of 32- and 16-bit floats: sqrt(x*x + y*y) in float64, rounded to
/// float32 (glibc's hypotf, which numpy calls and torch's vectorized kernel equals) and then
/// to a 16-bit type; infinite wherever either is. numpy's float64 (and integers, float64 in
/// numpy) is libm's own algorithm: dyn.hypot, a call of it. torch's float64 kernel is Sleef's
/// vectorized hypot, not modelled.
VarPtr hypot(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.args.size() != 2)
    return nullptr;
  VarPtr x = c.tensorArg(0), y = c.args[1];
  Type element = t.promoted(c.lib, x, y);
  if (c.lib == Lib::Numpy && isa<IntegerType>(element))
    element = t.ufuncFloat(c.lib, element); // numpy's float type of bools and integers
  if (c.lib == Lib::Numpy && element.isF64())
    return c.ufunc(t.create<dyn::HypotOp>({t.operandAs(x, element), t.operandAs(y, element)}));
  if (!isa<FloatType>(element) || element.isF64() ||
      (c.lib == Lib::Torch && (y->kind != VK::Tensor || t.elementTypeOf(y->value) != element ||
                               t.elementTypeOf(x->value) != element)))
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + " of torch's float64, integers or mixed dtypes");
  Value a = t.castTo(t.operandAs(x, element), t.f64());
  Value b = t.castTo(t.operandAs(y, element), t.f64());
  Value sum = t.create<dyn::AddOp>({t.create<dyn::MulOp>({a, a}), t.create<dyn::MulOp>({b, b})});
  Value r = dyn::SqrtOp::create(t.b, c.loc, sum);
  Value infinite =
      t.create<dyn::LogicalOrOp>({floatPredicate(t, "isinf", a), floatPredicate(t, "isinf", b)});
  r = t.create<dyn::WhereOp>({infinite, t.scalarConstant(py::float_(INFINITY), t.f64()), r});
  return c.ufunc(t.castTo(t.castTo(r, t.f32()), element));
}

/// np.arctan2(y, x) / torch.atan2 / torch.arctan2 / y.atan2(x): promoted as an operator is,
/// integers in the float type each library computes them in (numpy: float64, float16 for
/// bools); dyn.atan2 is libm's atan2f/atan2, which numpy calls (16-bit floats through float32,
/// as numpy computes them).
VarPtr atan2(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.args.size() != 2)
    return nullptr;
  VarPtr y = c.tensorArg(0), x = c.args[1];
  Type element = t.promoted(c.lib, y, x);
  if (isa<ComplexType>(element))
    breakTrace(dyn::BreakKind::unsupported_call, "arctan2 of complex numbers (numpy raises)");
  Type floatType = t.ufuncFloat(c.lib, element);
  Type computed = floatType.getIntOrFloatBitWidth() < 32 ? t.f32() : floatType;
  Value a = t.castTo(t.castTo(t.operandAs(y, element), floatType), computed);
  Value b = t.castTo(t.castTo(t.operandAs(x, element), floatType), computed);
  return c.ufunc(t.castTo(t.create<dyn::Atan2Op>({a, b}), floatType));
}

/// np.outer(a, b) (of the flattened arrays), torch.outer / torch.ger / x.outer (of vectors):
/// a[:, None] * b[None, :], promoted as the product is.
VarPtr outer(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.args.size() != 2)
    return nullptr;
  VarPtr x = c.tensorArg(0), y = c.tensorArg(1);
  if (c.lib == Lib::Torch &&
      (t.typeOf(x->value).getRank() != 1 || t.typeOf(y->value).getRank() != 1))
    breakTrace(dyn::BreakKind::unsupported_call, "torch.outer of tensors that are not vectors");
  VarPtr column = t.callTensorOp(c.lib, "reshape", {x, intTuple({-1, 1})}, {});
  VarPtr row = t.callTensorOp(c.lib, "reshape", {y, intTuple({1, -1})}, {});
  return t.binary(NB_MULTIPLY, column, row);
}

//===----------------------------------------------------------------------===//
// torch's fused functions
//===----------------------------------------------------------------------===//

/// The float dtype torch's lerp, addcmul and addcdiv compute in: all tensors one dtype.
Type sameDtype(LibraryCall &c, ArrayRef<VarPtr> tensors, bool floatOnly) {
  Tracer &t = c.t;
  Type element;
  for (const VarPtr &v : tensors) {
    if (!v || v->kind != VK::Tensor)
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " expects tensors");
    Type e = t.elementTypeOf(v->value);
    if (element && e != element)
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " of tensors of different dtypes");
    element = e;
  }
  if (element.isInteger(1) || (floatOnly && !isa<FloatType>(element)))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of integer or bool tensors raises");
  return element;
}

/// torch.lerp(start, end, weight): start + weight * (end - start) for |weight| < 0.5, else
/// end - (end - start) * (1 - weight), each a fused multiply-add as torch computes it.
VarPtr lerp(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr start = c.take(0, {"input"}), end = c.take(1, {"end"}), weight = c.take(2, {"weight"});
  if (!weight)
    return nullptr;
  bool scalarWeight = weight->kind != VK::Tensor;
  std::vector<VarPtr> tensors = {start, end};
  if (!scalarWeight)
    tensors.push_back(weight);
  Type element = sameDtype(c, tensors, /*floatOnly=*/true);
  Type compute = opmathType(t, element);
  Value s = t.castTo(start->value, compute), e = t.castTo(end->value, compute);
  Value diff = t.create<dyn::SubOp>({e, s});
  Value one = t.scalarConstant(py::float_(1.0), compute);
  Value r;
  if (scalarWeight) {
    std::optional<double> w = numberOf(weight);
    if (!w)
      breakTrace(dyn::BreakKind::unsupported_call, "lerp with a weight that is not a number");
    Value wv = t.scalarConstant(py::float_(*w), compute);
    // The weight as torch holds it (in the opmath type) decides the branch.
    double held = compute.isF32() ? double(float(*w)) : *w;
    if (std::fabs(held) < 0.5)
      r = t.create<dyn::FmaOp>({wv, diff, s});
    else
      r = t.create<dyn::FmaOp>(
          {dyn::NegOp::create(t.b, c.loc, diff), t.create<dyn::SubOp>({one, wv}), e});
  } else {
    Value wv = t.castTo(weight->value, compute);
    Value small = t.create<dyn::LtOp>(
        {dyn::AbsOp::create(t.b, c.loc, wv), t.scalarConstant(py::float_(0.5), compute)});
    Value low = t.create<dyn::FmaOp>({wv, diff, s});
    Value high = t.create<dyn::FmaOp>(
        {dyn::NegOp::create(t.b, c.loc, diff), t.create<dyn::SubOp>({one, wv}), e});
    r = t.create<dyn::WhereOp>({small, low, high});
  }
  return c.result(t.castTo(r, element));
}

/// torch.addcmul(x, t1, t2, value=v): fma(v * t1, t2, x) as torch fuses it (integers wrap);
/// torch.addcdiv: x + v * t1 / t2 (floats only).
VarPtr addcmulDiv(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  bool divide = c.name == "addcdiv";
  VarPtr x = c.take(0, {"input"}), t1 = c.take(1, {"tensor1"}), t2 = c.take(2, {"tensor2"});
  VarPtr valueArg = c.take(3, {"value"});
  Type element = sameDtype(c, {x, t1, t2}, /*floatOnly=*/divide);
  std::optional<double> value = isNone(valueArg) ? 1.0 : numberOf(valueArg);
  bool intValue = isNone(valueArg) || PyLong_Check(valueArg->obj.ptr());
  if (!value || (!isa<FloatType>(element) && !intValue))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " with this value");
  Type compute = opmathType(t, element);
  Value a = t.castTo(t1->value, compute), b = t.castTo(t2->value, compute);
  Value base = t.castTo(x->value, compute);
  Value v = isa<FloatType>(compute)
                ? t.scalarConstant(py::float_(*value), compute)
                : t.scalarConstant(isNone(valueArg) ? py::int_(1) : valueArg->obj, compute);
  Value scaled = t.create<dyn::MulOp>({v, a});
  Value r;
  if (divide)
    r = t.create<dyn::AddOp>({t.create<dyn::DivOp>({scaled, b}), base});
  else if (isa<FloatType>(compute))
    r = t.create<dyn::FmaOp>({scaled, b, base});
  else
    r = t.create<dyn::AddOp>({base, t.create<dyn::MulOp>({scaled, b})});
  return c.result(t.castTo(r, element));
}

/// torch.reciprocal(x) and np.reciprocal(x) of floats: 1 / x (torch computes integers in the
/// default float type).
VarPtr reciprocal(LibraryCall &c) {
  if (c.args.size() != 1)
    return nullptr;
  // numpy's reciprocal of integers is an integer (C's 1 / x): not modelled.
  if (c.lib == Lib::Numpy && !isa<FloatType>(c.t.elementTypeOf(c.tensorArg(0)->value)))
    return nullptr;
  return c.t.binary(NB_TRUE_DIVIDE, constVar(py::int_(1)), c.tensorArg(0));
}

/// np.allclose / torch.allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False): all of
/// isclose, a Python bool the graph computes, as bool() of a tensor is (numpy's own code is
/// `bool(all(isclose(...)))`). torch computes part of it in place in a tensor of a's shape (it
/// raises for some operands b broadcasts to a larger shape): modelled where isclose has a's
/// shape. numpy's other forms (lists, two numbers, keywords for the arrays) are numpy's own
/// code, traced as it is.
VarPtr allClose(LibraryCall &c) {
  auto modelled = [](const VarPtr &v) { return v->kind == VK::Tensor || numberOf(v); };
  if (c.lib == Lib::Numpy && (c.args.size() < 2 || !modelled(c.args[0]) || !modelled(c.args[1]) ||
                              (c.args[0]->kind != VK::Tensor && c.args[1]->kind != VK::Tensor))) {
    KwArgs kwargs;
    std::swap(kwargs, c.kwargs); // numpy's code takes them all
    return c.t.callNumpyImplementation(c.t.numpy.attr("allclose"), c.args, kwargs, 0);
  }
  std::optional<RankedTensorType> first;
  if (!c.args.empty() && c.args[0]->kind == VK::Tensor)
    first = c.t.typeOf(c.args[0]->value);
  VarPtr close = isClose(c);
  if (!close ||
      (c.lib == Lib::Torch && (!first || c.t.typeOf(close->value).getShape() != first->getShape())))
    return nullptr;
  return c.t.tensorTruth(c.t.callTensorOp(c.lib, "all", {close}, {}));
}

/// torch.cross / torch.linalg.cross(a, b, dim) and np.cross(a, b) of 3-vectors along a
/// dimension of size 3 in both (linalg.cross and numpy: the last; torch.cross without dim: the
/// first of size 3, as torch picks it), computed as both libraries do, on the broadcast
/// operands: (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0), where torch's vectorized kernel
/// fuses the first product of floats (fma(a1, b2, -(a2 b1)), 1 ulp from numpy's on random
/// data).
VarPtr cross(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr a = c.tensorArg(0), b = c.tensorArg(1);
  VarPtr dimArg = c.lib == Lib::Torch ? c.take(2, {"dim"}) : c.take(5, {"axis"});
  if (c.lib == Lib::Numpy)
    for (auto [position, name] : {std::pair{2, "axisa"}, {3, "axisb"}, {4, "axisc"}})
      if (VarPtr axis = c.take(position, {name}); !isNone(axis) && intOf(axis) != -1)
        return nullptr;
  if (c.args.size() > (c.lib == Lib::Torch ? 3u : 6u))
    return nullptr;
  ArrayRef<int64_t> as = staticShape(c, a->value), bs = staticShape(c, b->value);
  if (c.lib == Lib::Torch && t.elementTypeOf(a->value) != t.elementTypeOf(b->value))
    return nullptr; // torch raises for two dtypes
  int64_t rank = std::max(as.size(), bs.size());
  // The size of broadcast dimension d (from the left) in one operand, 1 where it has none.
  auto sizeIn = [&](ArrayRef<int64_t> s, int64_t d) {
    int64_t own = d - (rank - static_cast<int64_t>(s.size()));
    return own < 0 ? int64_t(1) : s[own];
  };
  int64_t dim = -1;
  if (!isNone(dimArg) || c.lib == Lib::Numpy || c.name == "linalg.cross") {
    dim = singleDim(isNone(dimArg) ? constVar(py::int_(-1)) : dimArg, rank);
  } else {
    for (int64_t d = 0; d < rank && dim < 0; ++d)
      if (sizeIn(as, d) == 3 && sizeIn(bs, d) == 3)
        dim = d;
  }
  if (dim < 0 || sizeIn(as, dim) != 3 || sizeIn(bs, dim) != 3)
    return nullptr; // numpy's 2-vectors, or sizes the libraries raise for
  auto component = [&](const VarPtr &v, ArrayRef<int64_t> s, int64_t k) {
    int64_t own = dim - (rank - static_cast<int64_t>(s.size()));
    return c.result(rangeOf(c, v->value, own, k, k + 1));
  };
  SmallVector<Value> parts;
  for (int64_t k = 0; k < 3; ++k) {
    int64_t i = (k + 1) % 3, j = (k + 2) % 3;
    VarPtr second = t.binary(NB_MULTIPLY, component(a, as, j), component(b, bs, i));
    if (c.lib == Lib::Torch && isa<FloatType>(t.elementTypeOf(a->value))) {
      Value negated = dyn::NegOp::create(t.b, c.loc, second->value);
      parts.push_back(
          t.create<dyn::FmaOp>({component(a, as, i)->value, component(b, bs, j)->value, negated}));
      continue;
    }
    VarPtr first = t.binary(NB_MULTIPLY, component(a, as, i), component(b, bs, j));
    parts.push_back(t.binary(NB_SUBTRACT, first, second)->value);
  }
  return c.result(dyn::ConcatOp::create(t.b, c.loc, parts, dim));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::mathFunctions() {
  std::vector<LibraryFunction> functions = {
      {"sign", sign},           {"sgn", sign},
      {"isnan", predicate},     {"isinf", predicate},
      {"isfinite", predicate},  {"isclose", isClose},
      {"logical_and", logical}, {"logical_or", logical},
      {"logical_xor", logical}, {"logical_not", logical},
      {"invert", bitwiseNot},   {"bitwise_not", bitwiseNot},
      {"fmod", fmod},           {"hypot", hypot},
      {"outer", outer},         {"arctan2", atan2},
      {"atan2", atan2},         {"ger", outer},
      {"lerp", lerp},           {"addcmul", addcmulDiv},
      {"addcdiv", addcmulDiv},  {"reciprocal", reciprocal},
      {"nan_to_num", nanToNum}, {"nansum", nanSum},
      {"allclose", allClose},   {"cross", cross},
      {"linalg.cross", cross},
  };
  return functions;
}
