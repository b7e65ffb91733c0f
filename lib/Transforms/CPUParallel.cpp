//===- CPUParallel.cpp - one chunk of each large loop nest per thread -----===//
//
// Loops lowered from linalg run on one core while torch runs its kernels on all of them (a 4-D
// softmax was 2.3x slower than torch for that reason alone). Tiling the outermost parallel loop
// into one chunk per thread, as an scf.parallel that convert-scf-to-openmp maps to an OpenMP
// worksharing loop, keeps each chunk the same vectorizable loop nest as before.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNCPUPARALLEL
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// The loop to split `threads` ways: the outermost parallel loop with at least four iterations
/// per thread (chunks of nearly equal size), else the largest parallel loop with at least one
/// per thread; -1 when there is none.
int64_t chooseLoop(linalg::LinalgOp op, ArrayRef<int64_t> ranges, int64_t threads) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t largest = -1;
  for (auto [dim, range] : llvm::enumerate(ranges)) {
    if (iterators[dim] != utils::IteratorType::parallel || range < threads)
      continue;
    if (range >= 4 * threads)
      return dim;
    if (largest < 0 || range > ranges[largest])
      largest = dim;
  }
  return largest;
}

/// What one iteration of `op` costs, in iterations of a loop of a few arithmetic ops: each
/// function of the math dialect in its body (sin, exp, erf, ...: a polynomial after
/// dyn-math-approximation, or a libm call) counts kMathFunctionCost more. On this project's
/// AVX2 machine `cos(sin(2x) + 1) * 3` took 3.4 ns per element on one core and `2x + 1` about
/// 0.15; 100K elements of the former ran on one thread below the plain iteration threshold
/// (0.33 ms, torch.compile 0.20 ms on two).
int64_t iterationCost(linalg::LinalgOp op) {
  constexpr int64_t kMathFunctionCost = 8;
  int64_t cost = 1;
  op->walk([&](Operation *inner) {
    if (isa<math::MathDialect>(inner->getDialect()) &&
        !isa<math::AbsFOp, math::AbsIOp, math::CopySignOp, math::FmaOp, math::FloorOp, math::CeilOp,
             math::RoundOp, math::RoundEvenOp, math::TruncOp>(inner))
      cost += kMathFunctionCost;
  });
  return cost;
}

struct CPUParallelPass : dynamir::impl::DynCPUParallelBase<CPUParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads <= 1)
      return;
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && !op->getParentOfType<scf::ParallelOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::any_of(ranges, ShapedType::isDynamic))
        continue;
      int64_t work = iterationCost(op);
      for (int64_t range : ranges)
        work *= range;
      if (work < minWork)
        continue;
      int64_t dim = chooseLoop(op, ranges, threads);
      if (dim < 0)
        continue;
      SmallVector<int64_t> tileSizes(ranges.size(), 0);
      tileSizes[dim] = llvm::divideCeil(ranges[dim], threads);
      linalg::LinalgTilingOptions options;
      options.setTileSizes(tileSizes).setLoopType(linalg::LinalgTilingLoopType::ParallelLoops);
      rewriter.setInsertionPoint(op);
      if (succeeded(linalg::tileLinalgOp(rewriter, op, options)))
        rewriter.eraseOp(op);
    }
  }
};
} // namespace
