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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

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

struct CPUParallelPass : dynamir::impl::DynCPUParallelBase<CPUParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads <= 1)
      return;
    IRRewriter rewriter(&getContext());
    // Row blocks of 3-D and 4-D arrays (dyn-fuse-row-reductions) are loops over several
    // dimensions; dyn-parallel-calls shares out one-dimensional ones.
    SmallVector<scf::ParallelOp> nests;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (loop.getNumLoops() > 1 && !loop->getParentOfType<scf::ParallelOp>())
        nests.push_back(loop);
    });
    for (scf::ParallelOp loop : nests) {
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0);
      collapseParallelLoops(rewriter, loop, {all});
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && !op->getParentOfType<scf::ParallelOp>())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::any_of(ranges, ShapedType::isDynamic))
        continue;
      int64_t work = dynamir::iterationCost(op);
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
