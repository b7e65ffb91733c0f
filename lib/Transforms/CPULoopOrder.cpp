//===- CPULoopOrder.cpp - stride-1 innermost loops for the CPU ------------===//

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

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
      unsigned inner = loops - 1, best = inner;
      for (unsigned d = 0; d < loops; ++d)
        if (unitStrideUses(op, d) > unitStrideUses(op, best))
          best = d;
      if (best != inner) {
        SmallVector<unsigned> order;
        for (unsigned d = 0; d < loops; ++d)
          if (d != best)
            order.push_back(d);
        order.push_back(best);
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
