//===- DistinctResults.cpp - a distinct tensor for every returned position ===//

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNDISTINCTRESULTS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
struct DynDistinctResults : dynamir::impl::DynDistinctResultsBase<DynDistinctResults> {
  void runOnOperation() override {
    getOperation()->walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 4> returned;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type || returned.insert(operand.get()).second)
          continue;
        operand.set(bufferization::AllocTensorOp::create(b, ret.getLoc(), type,
                                                         /*dynamicSizes=*/ValueRange(),
                                                         /*copy=*/operand.get()));
      }
    });
  }
};
} // namespace
