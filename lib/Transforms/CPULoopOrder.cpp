//===- CPULoopOrder.cpp - stride-1 innermost loops for the CPU ------------===//

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Sequence.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNCPULOOPORDER
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// How many operands read or write loop `dim` with unit stride (as their last index).
unsigned unitStrideUses(linalg::GenericOp op, unsigned dim) {
  unsigned uses = 0;
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (map.getNumResults() == 0)
      continue;
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    uses += last && last.getPosition() == dim;
  }
  return uses;
}

/// The indexing map of the op's only input when it is a permutation of all loops.
std::optional<AffineMap> soleFullInputMap(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1)
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (!map.isPermutation())
    return std::nullopt;
  return map;
}

struct CPULoopOrderPass : dynamir::impl::DynCPULoopOrderBase<CPULoopOrderPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (op.getNumReductionLoops() > 0 && op.getNumLoops() > 1)
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      unsigned loops = op.getNumLoops();
      unsigned best = loops - 1;
      for (unsigned d = 0; d < loops; ++d)
        if (unitStrideUses(op, d) > unitStrideUses(op, best))
          best = d;
      SmallVector<unsigned> order;
      if (std::optional<AffineMap> layout = soleFullInputMap(op);
          layout && layout->getDimPosition(loops - 1) == best) {
        // One input spans the whole iteration space (a reduction of one array, with its
        // fused producers): walk it in memory order, so the partial sums of a split row
        // reduction read each row once, front to back, instead of a quarter of every row
        // per pass.
        for (unsigned r = 0; r < loops; ++r)
          order.push_back(layout->getDimPosition(r));
      } else {
        for (unsigned d = 0; d < loops; ++d)
          if (d != best)
            order.push_back(d);
        order.push_back(best);
      }
      // Only projected permutations are interchanged. A keepdim output's constant index is
      // what linalg::splitReduction turned into an invalid map (see dyn-split-reductions);
      // such ops already have their unit-stride loop innermost, so nothing is lost.
      bool permutable = llvm::all_of(op.getIndexingMapsArray(),
                                     [](AffineMap map) { return map.isProjectedPermutation(); });
      if (permutable && !llvm::equal(order, llvm::seq<unsigned>(0, loops))) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> interchanged =
            linalg::interchangeGenericOp(rewriter, op, order);
        if (failed(interchanged))
          continue;
        op = *interchanged;
      }
      // An innermost float add reduction: let it reassociate so it vectorizes.
      if (!linalg::isReductionIterator(op.getIteratorTypesArray().back()))
        continue;
      auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
      if (yield.getNumOperands() != 1)
        continue;
      if (auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>())
        add.setFastmath(add.getFastmath() | arith::FastMathFlags::reassoc);
    }
  }
};
} // namespace
