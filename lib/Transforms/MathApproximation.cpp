//===- MathApproximation.cpp - vectorizable math for the CPU --------------===//

#include "dynamir/Transforms/Passes.h"

#include "dynamir/Transforms/LanewiseCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>
#include <optional>

namespace dynamir {
#define GEN_PASS_DEF_DYNMATHAPPROXIMATION
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// A constant of `type` (a scalar or a vector of `element`'s type) with every element `element`.
Value splat(OpBuilder &b, Location loc, Type type, TypedAttr element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vector, element));
  return arith::ConstantOp::create(b, loc, type, element);
}
Value splat(OpBuilder &b, Location loc, Type type, float value) {
  return splat(b, loc, type, b.getF32FloatAttr(value));
}

/// Like `type` (a scalar or a vector), with elements of type `element`.
Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

/// f32 exp in about 20 vector instructions, within 1 ulp of the correctly rounded result
/// (numpy's is within 2), subnormal results and overflow included. Upstream's expansion, with
/// the selects that kept numpy's subnormals (it flushed results below 2^-126 to zero) and NaN,
/// was about 40 and spilled registers: np.exp of 4M floats took 4.0 ms on one core where
/// torch.compile took 3.6, and a row softmax 2x torch.compile's time.
///
/// x is clamped to [-104, 89] (beyond, exp is 0 or infinite in float32); k = round(x / ln 2)
/// comes from adding 1.5 * 2^23, whose ulp is 1, in a fused multiply-add, which leaves k in
/// the low bits of the sum; r = x - k ln 2 (Cody-Waite: k * ln2Hi is exact for |k| < 2^9)
/// lies in [-ln2/2, ln2/2], where 1 + r + r^2 q(r) approximates exp(r) (q of degree 4, a
/// minimax fit made for this); the result is that times 2^(k - k/2) times 2^(k/2), two powers
/// of two in the normal range whose product rounds once, into the subnormals if it must.
/// The clamps may ignore NaN (`nnan`): a NaN x is selected around the whole.
void expandExp(math::ExpOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type type = op.getType();
  Type i32 = withElement(type, b.getI32Type());
  auto f = [&](float v) { return splat(b, loc, type, v); };
  auto c32 = [&](int32_t v) { return splat(b, loc, i32, b.getI32IntegerAttr(v)); };
  auto fma = [&](Value x, Value y, Value z) { return math::FmaOp::create(b, loc, x, y, z); };
  constexpr float kShift = 0x1.8p23f, kLog2E = 1.44269504f;
  constexpr float kLn2Hi = 0.693145751953125f, kLn2Lo = 1.428606765330187e-06f;
  constexpr float kQ[] = {0.49999988f, 0.16666518f, 0.041669488f, 0.0083689103f, 0.0013753952f};
  Value x = op.getOperand();
  Value clamped = arith::MinNumFOp::create(
      b, loc, arith::MaxNumFOp::create(b, loc, x, f(-104.0f), arith::FastMathFlags::nnan), f(89.0f),
      arith::FastMathFlags::nnan);
  Value shifted = fma(clamped, f(kLog2E), f(kShift));
  Value k = arith::SubFOp::create(b, loc, shifted, f(kShift));
  Value r = fma(k, f(-kLn2Lo), fma(k, f(-kLn2Hi), clamped));
  Value q = f(kQ[4]);
  for (int i = 3; i >= 0; --i)
    q = fma(q, r, f(kQ[i]));
  Value p = arith::AddFOp::create(b, loc, fma(arith::MulFOp::create(b, loc, r, r), q, r), f(1));
  Value kInt = arith::SubIOp::create(b, loc, arith::BitcastOp::create(b, loc, i32, shifted),
                                     c32(0x4B400000));
  Value half = arith::ShRSIOp::create(b, loc, kInt, c32(1));
  auto pow2 = [&](Value e) -> Value {
    Value bits = arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, e, c32(127)), c32(23));
    return arith::BitcastOp::create(b, loc, type, bits);
  };
  Value y = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, p, pow2(half)),
                                  pow2(arith::SubIOp::create(b, loc, kInt, half)));
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  op.replaceAllUsesWith(arith::SelectOp::create(b, loc, nan, x, y).getResult());
  op.erase();
}

/// Upstream's f32 tanh is 1 for every |x| above 7.9988, but tanh(8) is 0.99999976, 4 ulp
/// below 1, and tanh rounds to 1 only from about 9 on: a cast to an integer or a comparison
/// with 1 turned those ulp into wrong answers (difftest 221405013:27); from 7 to 7.5 it was 3
/// ulp off. From |x| = 0.625 up, tanh is 1 - 2 / (exp(2|x|) + 1) with x's sign, at most 1.3
/// ulp from 0.625 to 2 and 0.56 beyond (exp's overflow to infinity past 44 gives exactly 1);
/// below, upstream's polynomial (4.2 ulp at most). The exp here is approximated like any other.
void saturateTanh(math::TanhOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type type = op.getType();
  Value x = op.getOperand();
  Value ax = math::AbsFOp::create(b, loc, x);
  Value e = math::ExpOp::create(b, loc, arith::AddFOp::create(b, loc, ax, ax));
  Value tail = arith::SubFOp::create(
      b, loc, splat(b, loc, type, 1.0f),
      arith::DivFOp::create(b, loc, splat(b, loc, type, 2.0f),
                            arith::AddFOp::create(b, loc, e, splat(b, loc, type, 1.0f))));
  Value far =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, ax, splat(b, loc, type, 0.625f));
  Value near = math::TanhOp::create(b, loc, x);
  op.replaceAllUsesWith(
      arith::SelectOp::create(b, loc, far, math::CopySignOp::create(b, loc, tail, x), near)
          .getResult());
  op.erase();
}

/// The bits of 4/pi: entry k is floor(4/pi * 2^(8k + 7)) mod 2^32, so entries k, k + 4 and
/// k + 8 are 96 consecutive bits of 4/pi and each entry starts 8 bits further in (entries
/// overlap to keep every load an aligned word).
constexpr uint32_t kFourOverPiBits[24] = {
    0x000000a2, 0x0000a2f9, 0x00a2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
    0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041};
constexpr llvm::StringLiteral kFourOverPiName = "__dynamir_four_over_pi_bits";

/// `kFourOverPiBits` as a private constant global of `module`, created on first use.
memref::GlobalOp fourOverPiTable(ModuleOp module) {
  if (auto global = module.lookupSymbol<memref::GlobalOp>(kFourOverPiName))
    return global;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto type = MemRefType::get({24}, b.getI32Type());
  SmallVector<int32_t> words(std::begin(kFourOverPiBits), std::end(kFourOverPiBits));
  return memref::GlobalOp::create(
      b, module.getLoc(), kFourOverPiName, b.getStringAttr("private"), type,
      DenseElementsAttr::get(RankedTensorType::get({24}, b.getI32Type()), ArrayRef(words)),
      /*constant=*/true, /*alignment=*/nullptr);
}

/// An argument of sin or cos reduced by quarter periods: x = q pi/2 + r, with r in about
/// [-pi/4, pi/4] (f32 like the argument) and q an i32 of which only the two low bits matter.
struct Quadrants {
  Value r, q;
};

/// Where the exact reduction takes over (Cody-Waite is accurate well beyond: 3 ulp at 2^24).
constexpr float kPayneHanekFrom = 0x1p16f;

/// Cody-Waite reduction with fused multiply-adds, pi/2 in three float32 parts (each step
/// rounds once), n = round(x 2/pi). The fused multiply-add of 1.5 * 2^23, whose ulp is 1,
/// rounds x 2/pi to n and leaves n mod 2^22 in its low bits: q needs no conversion, which LLVM
/// would call poison at infinity. Accurate while n pi/2 fits float32's 24 bits.
Quadrants reduceCodyWaite(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  auto c = [&](float v) { return splat(b, loc, type, v); };
  constexpr float kRound = 0x1.8p23f;
  Value shifted = math::FmaOp::create(b, loc, x, c(0.636619772367581343076f), c(kRound));
  Value negN = arith::SubFOp::create(b, loc, c(kRound), shifted);
  Value r = x;
  for (float part : {1.57079637050628662109f, -4.37113900018624111e-08f, -1.715124509001085e-15f})
    r = math::FmaOp::create(b, loc, negN, c(part), r);
  Value q = arith::BitcastOp::create(b, loc, withElement(type, b.getI32Type()), shifted);
  return {r, q};
}

/// Payne-Hanek reduction for |x| >= 4, exact in integer arithmetic: with x = m 2^e (m the
/// 24-bit significand), |x| / pi mod 4 is m times the 96 bits of 1/pi that start at e's
/// position, a 32 x 96-bit product of which 64 bits are kept as 2.62 fixed point (the bits
/// above are multiples of 4, the bits below the table's end add less than 2^-61). The same
/// bits are |x| 2/pi mod 8 in 3.61 fixed point: their nearest integer is q mod 8 and the rest,
/// times pi/2, is r. float32 arguments come no closer than about 2^-30 to a multiple of pi/2,
/// so r keeps at least 30 correct bits. The window is found as for 4/pi with the exponent
/// lowered by one (|x| / pi = (|x| / 2) (2 / pi)). A negative x negates r and q:
/// -x = (-q) pi/2 + (-r).
Quadrants reducePayneHanek(OpBuilder &b, Location loc, Value x, Value table) {
  Type type = x.getType();
  Type i32 = withElement(type, b.getI32Type()), i64 = withElement(type, b.getI64Type());
  Type f64 = withElement(type, b.getF64Type());
  auto c32 = [&](int32_t v) { return splat(b, loc, i32, b.getI32IntegerAttr(v)); };
  auto c64 = [&](int64_t v) { return splat(b, loc, i64, b.getI64IntegerAttr(v)); };
  auto andI = [&](Value l, Value r) { return arith::AndIOp::create(b, loc, l, r).getResult(); };
  auto shr = [&](Value l, Value r) { return arith::ShRUIOp::create(b, loc, l, r).getResult(); };
  auto shl = [&](Value l, Value r) { return arith::ShLIOp::create(b, loc, l, r).getResult(); };
  auto add = [&](Value l, Value r) { return arith::AddIOp::create(b, loc, l, r).getResult(); };
  auto mul = [&](Value l, Value r) { return arith::MulIOp::create(b, loc, l, r).getResult(); };
  auto wide = [&](Value v) { return arith::ExtUIOp::create(b, loc, i64, v).getResult(); };

  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value exponent = arith::SubIOp::create(b, loc, andI(shr(bits, c32(23)), c32(255)), c32(1));
  // Biased exponents 128..254 map to table rows 0..15 and shifts 0..7.
  Value row = andI(shr(exponent, c32(3)), c32(15));
  Value significand = arith::OrIOp::create(b, loc, andI(bits, c32(0x7fffff)), c32(0x800000));
  Value m = shl(significand, andI(exponent, c32(7)));
  auto load = [&](int64_t offset) -> Value {
    Value base = arith::ConstantIndexOp::create(b, loc, offset);
    if (auto vector = dyn_cast<VectorType>(type)) {
      Value all = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vector.clone(b.getI1Type()), true));
      return vector::GatherOp::create(b, loc, cast<VectorType>(i32), table, ValueRange{base}, row,
                                      all, c32(0));
    }
    Value index = arith::AddIOp::create(
        b, loc, arith::IndexCastUIOp::create(b, loc, b.getIndexType(), row), base);
    return memref::LoadOp::create(b, loc, table, ValueRange{index});
  };
  // The top word's product only matters mod 2^32, the bottom word's only above 2^32.
  Value top = shl(wide(mul(m, load(0))), c64(32));
  Value bottom = shr(mul(wide(m), wide(load(8))), c64(32));
  Value fixed = add(arith::OrIOp::create(b, loc, top, bottom), mul(wide(m), wide(load(4))));
  Value n = shr(add(fixed, c64(int64_t(1) << 60)), c64(61));
  Value rest = arith::SubIOp::create(b, loc, fixed, shl(n, c64(61)));
  Value r = arith::TruncFOp::create(
      b, loc, type,
      arith::MulFOp::create(b, loc, arith::SIToFPOp::create(b, loc, f64, rest),
                            splat(b, loc, f64, b.getF64FloatAttr(0x1.921fb54442d18p-61))));
  Value q = arith::TruncIOp::create(b, loc, i32, n);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, bits, c32(0));
  return {arith::SelectOp::create(b, loc, negative, arith::NegFOp::create(b, loc, r), r),
          arith::SelectOp::create(b, loc, negative, arith::SubIOp::create(b, loc, c32(0), q), q)};
}

/// An upper bound on |v| for the values sin and cos usually see inside a fused loop (another
/// sin's result plus a constant, say), or nothing. Infinities and NaNs need no bound: they take
/// the short reduction, which gives NaN either way.
std::optional<double> magnitudeBound(Value v, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 12)
    return std::nullopt;
  auto bound = [&](unsigned i) { return magnitudeBound(def->getOperand(i), depth + 1); };
  auto combine = [&](auto fn) -> std::optional<double> {
    std::optional<double> l = bound(0), r = bound(1);
    if (!l || !r)
      return std::nullopt;
    return fn(*l, *r);
  };
  return llvm::TypeSwitch<Operation *, std::optional<double>>(def)
      .Case([](arith::ConstantOp c) -> std::optional<double> {
        double most = 0;
        auto visit = [&](const APFloat &f) {
          most = std::max(most, std::fabs(f.convertToDouble()));
        };
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          visit(f.getValue());
        else if (auto dense = dyn_cast<DenseFPElementsAttr>(c.getValue()))
          llvm::for_each(dense.getValues<APFloat>(), visit);
        else
          return std::nullopt;
        return most;
      })
      .Case<math::SinOp, math::CosOp, math::TanhOp, math::ErfOp>([](Operation *) { return 1.0; })
      .Case<arith::NegFOp, math::AbsFOp, arith::ExtFOp, math::SqrtOp>(
          [&](Operation *) { return bound(0); })
      .Case<arith::AddFOp, arith::SubFOp>(
          [&](Operation *) { return combine([](double l, double r) { return l + r; }); })
      .Case([&](arith::MulFOp) { return combine([](double l, double r) { return l * r; }); })
      .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(
          [&](Operation *) { return combine([](double l, double r) { return std::max(l, r); }); })
      .Case([&](arith::SelectOp) -> std::optional<double> {
        std::optional<double> l = bound(1), r = bound(2);
        if (!l || !r)
          return std::nullopt;
        return std::max(*l, *r);
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// sin x or cos x from x's quadrants: sin r or cos r (cos x = sin(x + pi/2) is one quadrant
/// on), by q's parity, negated in quadrants 2 and 3. For |r| <= pi/4 each is a short
/// polynomial, evaluated in fused multiply-adds: sin r = r + r^3 s(r^2), cos r = 1 + r^2
/// c(r^2), with Cephes's coefficients for float32. Both are computed and one selected: about
/// 20 vector instructions, where reducing by half periods to |r| <= pi/2 needed degree-13 and
/// degree-12 polynomials for the same accuracy, twice the work.
Value fromQuadrants(OpBuilder &b, Location loc, Quadrants h, bool isSin) {
  Type type = h.r.getType();
  Type i32 = h.q.getType();
  auto c = [&](float v) { return splat(b, loc, type, v); };
  auto ci = [&](int32_t v) { return splat(b, loc, i32, b.getI32IntegerAttr(v)); };
  auto fma = [&](Value x, Value y, Value z) {
    return math::FmaOp::create(b, loc, x, y, z).getResult();
  };
  Value q = isSin ? h.q : arith::AddIOp::create(b, loc, h.q, ci(1)).getResult();
  Value r = h.r;
  Value z = arith::MulFOp::create(b, loc, r, r);
  Value p = fma(fma(c(-1.9515295891e-4f), z, c(8.3321608736e-3f)), z, c(-1.6666654611e-1f));
  Value sinR = fma(arith::MulFOp::create(b, loc, r, z), p, r);
  Value cosR = c(2.443315711809948e-5f);
  for (float coefficient : {-1.388731625493765e-3f, 4.166664568298827e-2f, -0.5f, 1.0f})
    cosR = fma(cosR, z, c(coefficient));
  Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                    arith::AndIOp::create(b, loc, q, ci(1)), ci(0));
  Value v = arith::SelectOp::create(b, loc, odd, cosR, sinR);
  // Quadrant bit 1 into the sign bit.
  Value sign = arith::AndIOp::create(b, loc, arith::ShLIOp::create(b, loc, q, ci(30)),
                                     ci(std::numeric_limits<int32_t>::min()));
  return arith::BitcastOp::create(
      b, loc, type, arith::XOrIOp::create(b, loc, arith::BitcastOp::create(b, loc, i32, v), sign));
}

/// Whether |x| needs the exact reduction: finite and at least kPayneHanekFrom.
Value needsExactReduction(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value ax = math::AbsFOp::create(b, loc, x);
  auto cmp = [&](arith::CmpFPredicate p, Value l, float r) {
    return arith::CmpFOp::create(b, loc, p, l, splat(b, loc, type, r)).getResult();
  };
  return arith::AndIOp::create(b, loc, cmp(arith::CmpFPredicate::OGE, ax, kPayneHanekFrom),
                               cmp(arith::CmpFPredicate::OLT, ax, INFINITY));
}

/// The private function `__dynamir_lanewise_sin` (or `_cos`): f32 sin or cos by the exact
/// reduction, created on first use. A scalar loop calls it under a branch (LanewiseCalls.h).
func::FuncOp exactSinCos(ModuleOp module, bool isSin, memref::GlobalOp table) {
  std::string name = (dynamir::kLanewiseFunctionPrefix + (isSin ? "sin" : "cos")).str();
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  Type f32 = b.getF32Type();
  auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType({f32}, {f32}));
  fn.setPrivate();
  b.setInsertionPointToStart(fn.addEntryBlock());
  Value bits = memref::GetGlobalOp::create(b, loc, table.getType(), table.getSymName());
  Quadrants h = reducePayneHanek(b, loc, fn.getArgument(0), bits);
  func::ReturnOp::create(b, loc, fromQuadrants(b, loc, h, isSin));
  return fn;
}

/// Upstream's f32 sin and cos reduce the argument by pi/2 with one float32 constant, so their
/// error grows with |x|: 6e-6 at |x| ~ 100, 8e-4 at 1e4 and garbage beyond 2^24 (numpy: 6e-8
/// everywhere; beyond 71476 numpy calls libm, which reduces exactly). Here the argument is
/// reduced by quarter periods, by Cody-Waite below 2^16 and Payne-Hanek from there, so results
/// keep numpy's relative accuracy near the zeros of sin and cos too: at most 1.53 ulp on every
/// float32 below 2^16 and 1.55 on 168M samples beyond (numpy 1.5). Infinities and NaNs take the
/// Cody-Waite path, which gives NaN. Both reductions turn -0 into +0: sin selects x at zero.
///
/// Where the argument is not provably below 2^16 (`bound`, taken before any rewrite), a
/// scalar calls the exact reduction's function under a branch, which the runtime lets LLVM
/// vectorize with a per-vector check (LanewiseCalls.h); computing both reductions for every
/// element and selecting made the 10M-element `cos(sin(2x) + 1) * 3` 1.9x slower (27 -> 51
/// ms). A vector, already explicit, computes both and selects.
void reduceSinCos(Operation *op, std::optional<double> bound, ModuleOp module) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type type = op->getResult(0).getType();
  bool isSin = isa<math::SinOp>(op);
  Value x = op->getOperand(0);
  Value result;
  if (bound && *bound < kPayneHanekFrom) {
    result = fromQuadrants(b, loc, reduceCodyWaite(b, loc, x), isSin);
  } else if (isa<VectorType>(type)) {
    memref::GlobalOp table = fourOverPiTable(module);
    Quadrants small = reduceCodyWaite(b, loc, x);
    Value bits = memref::GetGlobalOp::create(b, loc, table.getType(), table.getSymName());
    Quadrants large = reducePayneHanek(b, loc, x, bits);
    Value isLarge = needsExactReduction(b, loc, x);
    Value r = arith::SelectOp::create(b, loc, isLarge, large.r, small.r);
    Value q = arith::SelectOp::create(b, loc, isLarge, large.q, small.q);
    result = fromQuadrants(b, loc, {r, q}, isSin);
  } else {
    func::FuncOp exact = exactSinCos(module, isSin, fourOverPiTable(module));
    auto branch = scf::IfOp::create(b, loc, type, needsExactReduction(b, loc, x),
                                    /*withElseRegion=*/true);
    b.setInsertionPointToStart(branch.thenBlock());
    scf::YieldOp::create(b, loc, func::CallOp::create(b, loc, exact, x).getResult(0));
    b.setInsertionPointToStart(branch.elseBlock());
    scf::YieldOp::create(b, loc, fromQuadrants(b, loc, reduceCodyWaite(b, loc, x), isSin));
    b.setInsertionPointAfter(branch);
    result = branch.getResult(0);
  }
  if (isSin) {
    Value zero =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, splat(b, loc, type, 0.0f));
    result = arith::SelectOp::create(b, loc, zero, x, result);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

/// Upstream's legacy set of f32 expansions and approximations, accurate to float32 rounding,
/// less exp (expandExp, after them: expm1's and tanh's expansions call exp) and atan and atan2:
/// upstream's atan2 was 41 ulp from numpy's arctan2 on values of magnitude 3 (libm's atan2f, which
/// the lowering calls instead, is within 1).
bool isApproximated(StringRef name) {
  return llvm::is_contained({math::TanhOp::getOperationName(), math::LogOp::getOperationName(),
                             math::Log2Op::getOperationName(), math::Log1pOp::getOperationName(),
                             math::ErfOp::getOperationName(), math::ErfcOp::getOperationName(),
                             math::AsinOp::getOperationName(), math::AcosOp::getOperationName(),
                             math::ExpM1Op::getOperationName(), math::CbrtOp::getOperationName(),
                             math::SinOp::getOperationName(), math::CosOp::getOperationName()},
                            name);
}

/// Each function here is NaN at NaN, which its expansion must not be left to compute: LLVM
/// folds the expansion of a constant NaN, and upstream's exp and expm1 reach their result
/// through fptosi of NaN, which LLVM calls poison (exp(NaN) of a constant array summed to 0:
/// difftest 277000035:99). A compare and a select per element; the loop still vectorizes.
void propagateNaN(Operation *op) {
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Location loc = op->getLoc();
  Value x = op->getOperand(0), result = op->getResult(0);
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  auto select = arith::SelectOp::create(b, loc, nan, x, result);
  result.replaceAllUsesExcept(select, select);
}

struct MathApproximationPass : dynamir::impl::DynMathApproximationBase<MathApproximationPass> {
  void runOnOperation() override {
    getOperation()->walk([&](Operation *op) {
      if (op->getNumOperands() == 1 && op->getNumResults() == 1 &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
          isApproximated(op->getName().getStringRef()))
        propagateNaN(op);
    });
    SmallVector<math::TanhOp> tanhs;
    // Bounds are taken before any rewrite: a rewritten sin is no longer recognizably in [-1, 1].
    SmallVector<std::pair<Operation *, std::optional<double>>> sinCos;
    getOperation()->walk([&](Operation *op) {
      if (op->getNumResults() != 1 || !getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        return;
      if (auto tanh = dyn_cast<math::TanhOp>(op))
        tanhs.push_back(tanh);
      else if (isa<math::SinOp, math::CosOp>(op))
        sinCos.push_back({op, magnitudeBound(op->getOperand(0))});
    });
    for (math::TanhOp tanh : tanhs)
      saturateTanh(tanh);
    for (auto [op, bound] : sinCos)
      reduceSinCos(op, bound, getOperation());
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, isApproximated);
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    SmallVector<math::ExpOp> exps;
    getOperation()->walk([&](math::ExpOp exp) {
      if (getElementTypeOrSelf(exp.getType()).isF32())
        exps.push_back(exp);
    });
    for (math::ExpOp exp : exps)
      expandExp(exp);
  }
};
} // namespace
