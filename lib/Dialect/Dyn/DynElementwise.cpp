//===- DynElementwise.cpp - element semantics written in C++ --------------===//
//
// `buildScalar` (ElementwiseOpInterface) of the elementwise ops whose element is more than one
// arith/math op or depends on the operands' signedness: abs, power, maximum, minimum, negation,
// sigmoid, relu, not, log1p, expm1, floor division, modulo, fmod, shifts, atan2 and cast. The
// others are generated from their line in DynElementwiseOps.td. `args` are signless (ui8 is i8
// in arith); the op's own operand types say whether they are unsigned.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynScalar.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {

bool isFloat(Type t) { return isa<FloatType>(t); }

/// The divisor for numpy's integer `x // y` and `x % y`: 1 where `y` is 0 or where `x` is the
/// minimum and `y` is -1 (signed only). Both trap in hardware (SIGFPE on x86) and are undefined
/// in arith, so they must never reach the division; numpy defines them (x // 0 == x % 0 == 0,
/// MIN // -1 == MIN, MIN % -1 == 0), and dividing by 1 already gives MIN // -1 and both
/// remainders. The caller selects 0 for x // 0.
Value safeIntegerDivisor(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned) {
  Type t = y.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value zero = scalarConstant(b, loc, t, 0);
  Value one = scalarConstant(b, loc, t, 1);
  if (isUnsigned)
    return arith::SelectOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero), one, y);
  Value minusOne = scalarConstant(b, loc, t, -1);
  Value min =
      arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, APInt::getSignedMinValue(width)));
  Value byZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  Value xIsMin = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, min);
  Value yIsMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, minusOne);
  Value overflows = arith::AndIOp::create(b, loc, xIsMin, yIsMinusOne);
  Value unsafe = arith::OrIOp::create(b, loc, byZero, overflows);
  return arith::SelectOp::create(b, loc, unsafe, one, y);
}

/// numpy's (and Python's, and torch's) float `x // y`, as npy_divmod computes it: from the
/// remainder, not floor(x / y), which is wrong where x / y rounds (-1.0 // inf is -1.0, not
/// -0.0; 1.0 // 0.1 is 9.0, not 10.0).
Value floatFloorDivide(OpBuilder &b, Location loc, Value x, Value y) {
  Type t = x.getType();
  auto cmp = [&](arith::CmpFPredicate p, Value l, Value r) {
    return arith::CmpFOp::create(b, loc, p, l, r);
  };
  Value zero = scalarConstant(b, loc, t, 0.0);
  Value one = scalarConstant(b, loc, t, 1.0);
  Value half = scalarConstant(b, loc, t, 0.5);
  Value quotient = arith::DivFOp::create(b, loc, x, y);
  Value mod = arith::RemFOp::create(b, loc, x, y);
  Value div = arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, x, mod), y);
  // The remainder takes the divisor's sign: one less where they differ.
  Value signsDiffer = arith::XOrIOp::create(b, loc, cmp(arith::CmpFPredicate::OLT, y, zero),
                                            cmp(arith::CmpFPredicate::OLT, mod, zero));
  Value adjust =
      arith::AndIOp::create(b, loc, signsDiffer, cmp(arith::CmpFPredicate::UNE, mod, zero));
  div = arith::SelectOp::create(b, loc, adjust, arith::SubFOp::create(b, loc, div, one), div);
  Value floor = math::FloorOp::create(b, loc, div);
  Value roundUp = cmp(arith::CmpFPredicate::OGT, arith::SubFOp::create(b, loc, div, floor), half);
  floor =
      arith::SelectOp::create(b, loc, roundUp, arith::AddFOp::create(b, loc, floor, one), floor);
  // A zero quotient keeps the sign of x / y; a zero divisor gives x / y (inf or nan).
  Value signedZero = math::CopySignOp::create(b, loc, zero, quotient);
  Value result =
      arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::UNE, div, zero), floor, signedZero);
  return arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, y, zero), quotient, result);
}

/// `compute` on x in float32 when x is a 16-bit float, rounded back once: numpy and torch
/// compute their 16-bit log1p and expm1 that way, and upstream's approximations are f32 ones.
Value inFloat32(OpBuilder &b, Location loc, Value x, function_ref<Value(Value)> compute) {
  Type t = x.getType();
  if (t.getIntOrFloatBitWidth() != 16)
    return compute(x);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  return arith::TruncFOp::create(b, loc, t, compute(wide));
}

} // namespace

Value dyn::scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto complexType = dyn_cast<ComplexType>(type)) {
    Type part = complexType.getElementType();
    return complex::ConstantOp::create(
        b, loc, type, b.getArrayAttr({b.getFloatAttr(part, value), b.getFloatAttr(part, 0.0)}));
  }
  if (isFloat(type))
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(b, loc, type,
                                   b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value dyn::Atan2Scalar::create(OpBuilder &b, Location loc, Value y, Value x) {
  Type t = y.getType();
  Value zero = scalarConstant(b, loc, t, 0);
  auto isZero = [&](Value v) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v, zero);
  };
  Value bothZero = arith::AndIOp::create(b, loc, isZero(y), isZero(x));
  // atan2(±0, +0) is ±0 and atan2(±0, -0) is ±π: x's sign bit picks, y's is the result's.
  Value xSign = math::CopySignOp::create(b, loc, scalarConstant(b, loc, t, 1), x);
  Value xNegative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, xSign, zero);
  Value magnitude =
      arith::SelectOp::create(b, loc, xNegative, scalarConstant(b, loc, t, M_PI), zero);
  Value ofZeros = math::CopySignOp::create(b, loc, magnitude, y);
  return arith::SelectOp::create(b, loc, bothZero, ofZeros, math::Atan2Op::create(b, loc, y, x));
}

Value dyn::HypotScalar::create(OpBuilder &b, Location loc, Value x, Value y) {
  Type t = x.getType();
  StringRef name = t.isF32() ? "hypotf" : "hypot";
  return func::CallOp::create(b, loc, name, TypeRange{t}, ValueRange{x, y}).getResult(0);
}

void dyn::declareLibmCalls(ModuleOp module) {
  SymbolTable symbols(module);
  module.walk([&](func::CallOp call) {
    StringRef name = call.getCallee();
    if ((name != "hypot" && name != "hypotf") || symbols.lookup(name))
      return;
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    auto decl = func::FuncOp::create(top, call.getLoc(), name, call.getCalleeType());
    decl.setPrivate();
    symbols.insert(decl);
  });
}

Type dyn::signlessType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.clone(signlessType(tensor.getElementType()));
  if (auto integer = dyn_cast<IntegerType>(type); integer && !integer.isSignless())
    return IntegerType::get(type.getContext(), integer.getWidth());
  return type;
}

bool dyn::isUnsigned(Type type) { return getElementTypeOrSelf(type).isUnsignedInteger(); }

arith::CmpIPredicate dyn::integerPredicate(arith::CmpIPredicate p, Type type) {
  if (!isUnsigned(type))
    return p;
  switch (p) {
  case arith::CmpIPredicate::slt:
    return arith::CmpIPredicate::ult;
  case arith::CmpIPredicate::sle:
    return arith::CmpIPredicate::ule;
  case arith::CmpIPredicate::sgt:
    return arith::CmpIPredicate::ugt;
  case arith::CmpIPredicate::sge:
    return arith::CmpIPredicate::uge;
  default:
    return p;
  }
}

/// A float to a signed integer of `to`'s width as numpy and torch convert on x86: fptosi
/// where the value is in range, the integer minimum elsewhere (cvttsd2si's "integer
/// indefinite"; fptosi itself is poison there).
static Value floatToSigned(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  // A 16-bit float cannot hold -2^63: its lower bound rounds to -inf, which is itself out of
  // range (difftest 270926049:70 stored -inf into an int64 tensor as 0).
  unsigned width = to.getIntOrFloatBitWidth();
  bool lowerInfinite = false;
  auto bound = [&](bool upper) {
    APFloat limit(cast<FloatType>(from).getFloatSemantics());
    bool ignored;
    APFloat exact = APFloat(std::ldexp(upper ? 1.0 : -1.0, static_cast<int>(width) - 1));
    exact.convert(limit.getSemantics(), APFloat::rmNearestTiesToEven, &ignored);
    lowerInfinite |= !upper && exact.isInfinity();
    return arith::ConstantOp::create(b, loc, from, b.getFloatAttr(from, exact)).getResult();
  };
  Value lower = bound(false);
  Value inRange = arith::AndIOp::create(
      b, loc,
      arith::CmpFOp::create(
          b, loc, lowerInfinite ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OGE, v, lower),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, v, bound(true)));
  Value min =
      arith::ConstantOp::create(b, loc, to, b.getIntegerAttr(to, APInt::getSignedMinValue(width)));
  return arith::SelectOp::create(b, loc, inRange, arith::FPToSIOp::create(b, loc, to, v), min);
}

/// A float to an unsigned integer of `to`'s (signless) width: numpy and torch agree on every
/// value in the type's range, which is all the tracer lets reach a graph (outside it numpy's
/// result depends on which of its loops runs, SIMD or scalar: Tracer::convertElements checks).
/// Narrow types go through int32, whose conversion vectorizes (int64's does not without
/// AVX-512: 6.9 against 2.2 ms on 6M elements), wider ones through int64, and uint64 takes
/// values from 2^63 to 2^64 by an offset.
static Value floatToUnsigned(OpBuilder &b, Location loc, Value v, Type to) {
  unsigned width = to.getIntOrFloatBitWidth();
  Type through = width < 32 ? b.getI32Type() : b.getI64Type();
  Value low = floatToSigned(b, loc, v, through);
  if (width < 64)
    return arith::TruncIOp::create(b, loc, to, low);
  Type from = v.getType();
  if (from.getIntOrFloatBitWidth() < 32) // a 16-bit float never reaches 2^63
    return low;
  Type i64 = b.getI64Type();
  Value twoTo63 = scalarConstant(b, loc, from, std::ldexp(1.0, 63));
  Value high = arith::XOrIOp::create(
      b, loc, floatToSigned(b, loc, arith::SubFOp::create(b, loc, v, twoTo63), i64),
      arith::ConstantOp::create(b, loc, i64, b.getIntegerAttr(i64, APInt::getSignedMinValue(64))));
  Value inHigh = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, v, twoTo63);
  return arith::SelectOp::create(b, loc, inHigh, high, low);
}

Value dyn::convertScalar(OpBuilder &b, Location loc, Value v, Type from, Type to) {
  if (from == to)
    return v;
  if (isa<ComplexType>(from) || isa<ComplexType>(to))
    return convertComplexScalar(b, loc, v, from, to);
  Type target = signlessType(to);
  if (to.isInteger(1)) {
    Value zero = scalarConstant(b, loc, v.getType(), 0);
    return isFloat(from) ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zero))
                         : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero));
  }
  if (isFloat(from) && isFloat(to)) {
    unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
    // bf16 and f16 have one width but neither holds the other (range vs precision), and
    // arith's extf/truncf need a strictly wider/narrower type: convert through f32, which
    // holds both exactly.
    if (fromWidth == toWidth)
      return arith::TruncFOp::create(b, loc, to, arith::ExtFOp::create(b, loc, b.getF32Type(), v));
    return fromWidth < toWidth ? Value(arith::ExtFOp::create(b, loc, to, v))
                               : Value(arith::TruncFOp::create(b, loc, to, v));
  }
  if (isFloat(to))
    return from.isInteger(1) || isUnsigned(from) ? Value(arith::UIToFPOp::create(b, loc, to, v))
                                                 : Value(arith::SIToFPOp::create(b, loc, to, v));
  if (isFloat(from) && isUnsigned(to))
    return floatToUnsigned(b, loc, v, target);
  // numpy and torch convert floats to 8- and 16-bit integers through int32 and keep its low
  // bits (300.0 is 44 in int8, NaN 0).
  if (isFloat(from) && to.getIntOrFloatBitWidth() < 32)
    return arith::TruncIOp::create(b, loc, target, floatToSigned(b, loc, v, b.getI32Type()));
  if (isFloat(from))
    return floatToSigned(b, loc, v, target);
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth == toWidth) // int8 and uint8 share their bits
    return v;
  if (fromWidth < toWidth)
    return from.isInteger(1) || isUnsigned(from) ? Value(arith::ExtUIOp::create(b, loc, target, v))
                                                 : Value(arith::ExtSIOp::create(b, loc, target, v));
  return arith::TruncIOp::create(b, loc, target, v);
}

namespace {

/// Unsigned integer power, wrapping like numpy's: math.ipowi reads the exponent as signed, so
/// narrower types compute in int64 (whose low bits are theirs), and a uint64 exponent of 2^63
/// or more uses x^(2^63) == 1 for odd x (the units modulo 2^64 have order dividing 2^62) and
/// 0 for even x.
Value unsignedPower(OpBuilder &b, Location loc, Value x, Value y) {
  Type t = x.getType();
  if (t.getIntOrFloatBitWidth() < 64) {
    Type i64 = b.getI64Type();
    Value wide = math::IPowIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, x),
                                       arith::ExtUIOp::create(b, loc, i64, y));
    return arith::TruncIOp::create(b, loc, t, wide);
  }
  Value zero = scalarConstant(b, loc, t, 0);
  Value signBit =
      arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, APInt::getSignedMinValue(64)));
  Value huge = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, y, zero);
  Value exponent =
      arith::SelectOp::create(b, loc, huge, arith::XOrIOp::create(b, loc, y, signBit), y);
  Value power = math::IPowIOp::create(b, loc, x, exponent);
  Value odd = arith::TruncIOp::create(b, loc, b.getI1Type(), x);
  Value hugeEven = arith::AndIOp::create(
      b, loc, huge, arith::XOrIOp::create(b, loc, odd, arith::ConstantIntOp::create(b, loc, 1, 1)));
  return arith::SelectOp::create(b, loc, hugeEven, zero, power);
}

} // namespace

Value AbsOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  if (isFloat(x.getType()))
    return math::AbsFOp::create(b, loc, x);
  return isUnsigned(getX().getType()) ? x : Value(math::AbsIOp::create(b, loc, x));
}

Value PowOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0].getType()))
    return math::PowFOp::create(b, loc, args[0], args[1]);
  if (isUnsigned(getLhs().getType()))
    return unsignedPower(b, loc, args[0], args[1]);
  return math::IPowIOp::create(b, loc, args[0], args[1]);
}

Value MaximumOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0].getType()))
    return arith::MaximumFOp::create(b, loc, args[0], args[1]);
  if (isUnsigned(getLhs().getType()))
    return arith::MaxUIOp::create(b, loc, args[0], args[1]);
  return arith::MaxSIOp::create(b, loc, args[0], args[1]);
}

Value MinimumOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0].getType()))
    return arith::MinimumFOp::create(b, loc, args[0], args[1]);
  if (isUnsigned(getLhs().getType()))
    return arith::MinUIOp::create(b, loc, args[0], args[1]);
  return arith::MinSIOp::create(b, loc, args[0], args[1]);
}

Value NegOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  if (isFloat(x.getType()))
    return arith::NegFOp::create(b, loc, x);
  if (isa<ComplexType>(x.getType()))
    return complexNegate(b, loc, x);
  return arith::SubIOp::create(b, loc, scalarConstant(b, loc, x.getType(), 0), x);
}

Value SigmoidOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  Value one = scalarConstant(b, loc, x.getType(), 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

Value ReluOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  Value zero = scalarConstant(b, loc, x.getType(), 0);
  // maximumf propagates NaN like torch.relu.
  if (isFloat(x.getType()))
    return arith::MaximumFOp::create(b, loc, x, zero);
  return isUnsigned(getX().getType()) ? x : Value(arith::MaxSIOp::create(b, loc, x, zero));
}

Value NotOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  return arith::XOrIOp::create(b, loc, x, scalarConstant(b, loc, x.getType(), -1));
}

// f32 math.log1p and math.expm1 are upstream's polynomial approximations (accurate to f32
// rounding); the f64 ones would lower to log(1 + x) and exp(x) - 1, so f64 uses the classic
// corrections of the rounding of 1 + x and of exp(x) (Goldberg; Kahan), a few ulp from libm.
Value Log1pOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return inFloat32(b, loc, args[0], [&](Value x) -> Value {
    Type t = x.getType();
    if (!t.isF64())
      return math::Log1pOp::create(b, loc, x);
    // u = 1 + x rounded; log1p(x) = log(u) * (x / (u - 1)) where u != 1, x where u == 1
    // (tiny x and -0.0), and u itself for +inf (inf / inf would be NaN).
    Value one = scalarConstant(b, loc, t, 1.0);
    Value u = arith::AddFOp::create(b, loc, one, x);
    Value ratio = arith::DivFOp::create(b, loc, x, arith::SubFOp::create(b, loc, u, one));
    Value r = arith::MulFOp::create(b, loc, math::LogOp::create(b, loc, u), ratio);
    Value inf = scalarConstant(b, loc, t, std::numeric_limits<double>::infinity());
    r = arith::SelectOp::create(
        b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, u, inf), u, r);
    return arith::SelectOp::create(
        b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, u, one), x, r);
  });
}

Value Expm1Op::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return inFloat32(b, loc, args[0], [&](Value x) -> Value {
    Type t = x.getType();
    if (!t.isF64())
      return math::ExpM1Op::create(b, loc, x);
    // u = exp(x); expm1(x) = (u - 1) * (x / log(u)) where u != 1, x where u == 1 (tiny x and
    // -0.0), -1 where u - 1 is -1 (large negative x), and u itself for +inf.
    Value one = scalarConstant(b, loc, t, 1.0);
    Value u = math::ExpOp::create(b, loc, x);
    Value um1 = arith::SubFOp::create(b, loc, u, one);
    Value ratio = arith::DivFOp::create(b, loc, x, math::LogOp::create(b, loc, u));
    Value r = arith::MulFOp::create(b, loc, um1, ratio);
    Value inf = scalarConstant(b, loc, t, std::numeric_limits<double>::infinity());
    Value minusOne = scalarConstant(b, loc, t, -1.0);
    auto eq = [&](Value l, Value r) {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, r);
    };
    r = arith::SelectOp::create(b, loc, eq(u, inf), u, r);
    r = arith::SelectOp::create(b, loc, eq(um1, minusOne), minusOne, r);
    return arith::SelectOp::create(b, loc, eq(u, one), x, r);
  });
}

Value FloorDivOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0], y = args[1];
  Type t = x.getType();
  if (isFloat(t))
    return floatFloorDivide(b, loc, x, y);
  // x // 0 is 0 in numpy; the division by the safe divisor 1 gives x there.
  bool isUnsignedDivision = isUnsigned(getLhs().getType());
  Value divisor = safeIntegerDivisor(b, loc, x, y, isUnsignedDivision);
  Value q = isUnsignedDivision ? Value(arith::DivUIOp::create(b, loc, x, divisor))
                               : Value(arith::FloorDivSIOp::create(b, loc, x, divisor));
  Value zero = scalarConstant(b, loc, t, 0);
  Value byZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  return arith::SelectOp::create(b, loc, byZero, zero, q);
}

Value ModOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0], y = args[1];
  Type t = x.getType();
  bool fp = isFloat(t);
  // Python's modulo: the remainder takes the divisor's sign. Integers divide by the safe
  // divisor, whose remainder 0 is numpy's x % 0 and MIN % -1.
  if (!fp && isUnsigned(getLhs().getType()))
    return arith::RemUIOp::create(b, loc, x, safeIntegerDivisor(b, loc, x, y, true));
  Value r = fp ? Value(arith::RemFOp::create(b, loc, x, y))
               : Value(arith::RemSIOp::create(b, loc, x, safeIntegerDivisor(b, loc, x, y, false)));
  Value zero = scalarConstant(b, loc, t, 0);
  Value rNeg, yNeg, rNonZero;
  if (fp) {
    rNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, zero);
    yNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, y, zero);
    rNonZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, r, zero);
  } else {
    rNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
    yNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, y, zero);
    rNonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
  }
  Value signsDiffer = arith::XOrIOp::create(b, loc, rNeg, yNeg);
  Value adjust = arith::AndIOp::create(b, loc, signsDiffer, rNonZero);
  Value adjusted =
      fp ? Value(arith::AddFOp::create(b, loc, r, y)) : Value(arith::AddIOp::create(b, loc, r, y));
  Value mod = arith::SelectOp::create(b, loc, adjust, adjusted, r);
  if (!fp)
    return mod;
  // A zero remainder has the divisor's sign in numpy and Python (0.0 % -3.0 is -0.0).
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mod, zero);
  return arith::SelectOp::create(b, loc, isZero, math::CopySignOp::create(b, loc, zero, y), mod);
}

Value FModOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0], y = args[1];
  // C's fmod: the remainder takes the dividend's sign (frem is fmod). Integers divide by the
  // safe divisor, whose remainder 0 is numpy's fmod by 0 and of MIN by -1.
  if (isFloat(x.getType()))
    return arith::RemFOp::create(b, loc, x, y);
  if (isUnsigned(getLhs().getType()))
    return arith::RemUIOp::create(b, loc, x, safeIntegerDivisor(b, loc, x, y, true));
  return arith::RemSIOp::create(b, loc, x, safeIntegerDivisor(b, loc, x, y, false));
}

/// Whether the shift amount `amount` is in [0, width) (unsigned: a negative one is not), and
/// the amount arith may shift by (poison otherwise): `amount`, else `fallback`.
static std::pair<Value, Value> shiftAmount(OpBuilder &b, Location loc, Value amount,
                                           int64_t fallback) {
  Type t = amount.getType();
  Value width = scalarConstant(b, loc, t, t.getIntOrFloatBitWidth());
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, amount, width);
  return {inRange,
          arith::SelectOp::create(b, loc, inRange, amount, scalarConstant(b, loc, t, fallback))};
}

Value ShiftLeftOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  auto [inRange, amount] = shiftAmount(b, loc, args[1], 0);
  return arith::SelectOp::create(b, loc, inRange, arith::ShLIOp::create(b, loc, args[0], amount),
                                 scalarConstant(b, loc, args[0].getType(), 0));
}

/// Shifting right by width - 1 fills with the sign, as a longer shift does in numpy and torch;
/// unsigned integers shift in zeros, and a longer shift gives 0.
Value ShiftRightOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  if (isUnsigned(getLhs().getType())) {
    auto [inRange, amount] = shiftAmount(b, loc, args[1], 0);
    return arith::SelectOp::create(b, loc, inRange, arith::ShRUIOp::create(b, loc, args[0], amount),
                                   scalarConstant(b, loc, args[0].getType(), 0));
  }
  Value amount = shiftAmount(b, loc, args[1], args[1].getType().getIntOrFloatBitWidth() - 1).second;
  return arith::ShRSIOp::create(b, loc, args[0], amount);
}

Value CastOp::buildScalar(OpBuilder &b, Location loc, ValueRange args) {
  return convertScalar(b, loc, args[0], getElementTypeOrSelf(getX().getType()), getDtype());
}
