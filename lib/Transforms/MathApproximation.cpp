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

struct MathApproximationPass : dynamir::impl::DynMathApproximationBase<MathApproximationPass> {
  void runOnOperation() override {
    SmallVector<math::ExpOp> exps;
    getOperation()->walk([&](math::ExpOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32())
        exps.push_back(op);
    });
    for (math::ExpOp op : exps)
      keepSubnormalExp(op);
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
