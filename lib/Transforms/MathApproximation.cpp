//===- MathApproximation.cpp - vectorizable math for the CPU --------------===//

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNMATHAPPROXIMATION
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// A constant of `type` (f32 or a vector of f32) with every element `value`.
Value splat(OpBuilder &b, Location loc, Type type, float value) {
  FloatAttr element = b.getF32FloatAttr(value);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vector, element));
  return arith::ConstantOp::create(b, loc, type, element);
}

/// Upstream's f32 exp builds its result from an exponent clamped to the normal range, so it
/// flushes results below 2^-126 to zero: exp(-88) is 0, not numpy's subnormal 6.05e-39 (and
/// `np.exp(x) != 0` differs). Below -87 the input is shifted up by 32 ln 2 (Cody-Waite: the
/// high part of ln 2 is exact, so the shift adds one rounding) and the normal result scaled by
/// 2^-32, which rounds once into the subnormal range. Two selects per element; the loop still
/// vectorizes.
void keepSubnormalExp(math::ExpOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type type = op.getType();
  constexpr float ln2Hi = 0.693145751953125f, ln2Lo = 1.428606765330187e-06f;
  Value x = op.getOperand();
  Value tiny =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, splat(b, loc, type, -87.0f));
  Value shifted = arith::AddFOp::create(
      b, loc, arith::AddFOp::create(b, loc, x, splat(b, loc, type, 32 * ln2Hi)),
      splat(b, loc, type, 32 * ln2Lo));
  Value e = math::ExpOp::create(b, loc, arith::SelectOp::create(b, loc, tiny, shifted, x));
  Value scaled = arith::MulFOp::create(b, loc, e, splat(b, loc, type, 0x1p-32f));
  op.replaceAllUsesWith(arith::SelectOp::create(b, loc, tiny, scaled, e).getResult());
  op.erase();
}

/// Upstream's f32 sin and cos reduce the argument by pi/2 with one float32 constant, so their
/// error grows with |x|: 6e-6 at |x| ~ 100 and 8e-4 at 1e4 (numpy: 6e-8 everywhere). Here the
/// argument is first reduced by half periods, Cody-Waite style with fused multiply-adds (pi in
/// three float32 parts; each step rounds once): sin x = (-1)^n sin(x - n pi) and
/// cos x = (-1)^n sin(x - (n - 1/2) pi), r in [-pi/2, pi/2]. The approximation sees only |r|
/// (by symmetry: upstream's sin is accurate in absolute terms only, and for r < 0 its relative
/// error near 0 reached 10%), so results keep numpy's relative accuracy near the zeros of sin
/// and cos too: 3 ulp for |x| up to 2^24 (measured to 1.6e7), where upstream's were off by
/// 1e-2 at 1e6. Beyond 2^24, where n pi needs more bits than float32 has (numpy reduces exactly,
/// Payne-Hanek), results are wrong, as upstream's were: that needs a vector-level fallback to
/// libm.
void reduceSinCos(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type type = op->getResult(0).getType();
  bool isSin = isa<math::SinOp>(op);
  Value x = op->getOperand(0);
  auto c = [&](float v) { return splat(b, loc, type, v); };
  auto mul = [&](Value l, Value r) { return arith::MulFOp::create(b, loc, l, r).getResult(); };
  auto sub = [&](Value l, Value r) { return arith::SubFOp::create(b, loc, l, r).getResult(); };
  // n = round(x / pi) (sin) or round(x / pi + 1/2) (cos); the multiple of pi taken off is m.
  Value scaled = mul(x, c(0.318309886183790671538f));
  if (!isSin)
    scaled = arith::AddFOp::create(b, loc, scaled, c(0.5f));
  Value n = math::RoundEvenOp::create(b, loc, scaled);
  Value m = isSin ? n : sub(n, c(0.5f));
  Value negM = arith::NegFOp::create(b, loc, m);
  Value r = x;
  for (float part : {3.14159274101257324219f, -8.74227800037248222e-08f, -3.43024901800217e-15f})
    r = math::FmaOp::create(b, loc, negM, c(part), r);
  // sin with n == 0 takes x itself (fma(-0, p, -0.0) is +0.0, and sin(-0.0) is -0.0).
  if (isSin)
    r = arith::SelectOp::create(
        b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, n, c(0.0f)), x, r);
  Value sinR = math::CopySignOp::create(
      b, loc, math::SinOp::create(b, loc, math::AbsFOp::create(b, loc, r)), r);
  // (-1)^n from n's parity, exact for |n| < 2^24 (n - 2 floor(n / 2)); a NaN or infinite x
  // gives a NaN r, and so a NaN.
  Value parity = sub(n, mul(c(2.0f), math::FloorOp::create(b, loc, mul(n, c(0.5f)))));
  Value odd = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, parity, c(1.0f));
  Value result = arith::SelectOp::create(b, loc, odd, arith::NegFOp::create(b, loc, sinR), sinR);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

struct MathApproximationPass : dynamir::impl::DynMathApproximationBase<MathApproximationPass> {
  void runOnOperation() override {
    SmallVector<Operation *> rewrites;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::ExpOp, math::SinOp, math::CosOp>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        rewrites.push_back(op);
    });
    for (Operation *op : rewrites) {
      if (auto exp = dyn_cast<math::ExpOp>(op))
        keepSubnormalExp(exp);
      else
        reduceSinCos(op);
    }
    RewritePatternSet patterns(&getContext());
    // The legacy entry point enables exactly the f32 expansions and approximations that are
    // accurate to float32 rounding (sin, cos, exp, expm1, log, log1p, log2, tanh, erf, atan,
    // atan2, rsqrt with AVX2 off).
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
