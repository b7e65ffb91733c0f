//===- FuseProductOperands.cpp - batched products one element at a time ---===//
//
// A convolution is im2col and a product per image (dyn.unfold, dyn.matmul): the unfold copy
// writes every image's columns (4.7 MB for 4x32x32x32 and a 3x3 kernel, nine times the input)
// before the first product reads any, so the columns go to memory and come back. Computing the
// product one image at a time, with the padding and the copy of that image's columns fused
// into the loop, keeps each image's columns (1.2 MB there) in the cache between the copy that
// writes them and the BLAS call that reads them; the loop is an scf.forall, whose iterations
// the threads share.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Transforms/Passes.h"
#include "dynamir/Transforms/Products.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNFUSEPRODUCTOPERANDS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// The copy that produces `v` through reshapes, and the padding it copies from, when each is
/// read by nothing else (fused, one with other users would run twice); empty otherwise.
SmallVector<Operation *> copiesFeeding(Value v) {
  while (isa_and_present<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(v.getDefiningOp()) &&
         v.hasOneUse())
    v = v.getDefiningOp()->getOperand(0);
  Operation *copy = v.getDefiningOp();
  if (!copy || !dynamir::onlyMovesData(copy) || !v.hasOneUse())
    return {};
  SmallVector<Operation *> copies = {copy};
  Value source = copy->getOperand(0);
  if (source.getDefiningOp<tensor::PadOp>() && source.hasOneUse())
    copies.push_back(source.getDefiningOp());
  return copies;
}

/// The loop to compute `op` one element of at a time, and the copies to fuse into it: the
/// outermost batch loop of a batched product on tensors of static sizes, of at least two
/// elements and at least `threads`, one of whose batched inputs a copy produces; -1 otherwise.
std::pair<int64_t, SmallVector<Operation *>> batchLoopToTile(linalg::GenericOp op,
                                                             int64_t threads) {
  if (!op.hasPureTensorSemantics())
    return {-1, {}};
  std::optional<dynamir::ProductDims> dims = dynamir::matchProduct(op);
  if (!dims || dims->vector || dims->batch.empty())
    return {-1, {}};
  unsigned batch = dims->batch.front();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges[batch] < std::max<int64_t>(2, threads))
    return {-1, {}};
  SmallVector<Operation *> copies;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    bool batched = llvm::any_of(map.getResults(), [&](AffineExpr e) {
      auto d = dyn_cast<AffineDimExpr>(e);
      return d && d.getPosition() == batch;
    });
    if (batched)
      copies.append(copiesFeeding(input->get()));
  }
  if (copies.empty())
    return {-1, {}};
  return {batch, copies};
}

struct FuseProductOperandsPass
    : dynamir::impl::DynFuseProductOperandsBase<FuseProductOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::tuple<linalg::GenericOp, int64_t, SmallVector<Operation *>>> products;
    getOperation()->walk([&](linalg::GenericOp op) {
      auto [loop, copies] = batchLoopToTile(op, threads);
      if (loop >= 0)
        products.push_back({op, loop, copies});
    });
    if (products.empty())
      return;
    MLIRContext *ctx = &getContext();
    // Slices of reshapes become reshapes of slices, so that the copy behind a reshape fuses.
    RewritePatternSet cleanup(ctx);
    tensor::populateBubbleUpExtractSliceOpPatterns(cleanup);
    FrozenRewritePatternSet frozenCleanup(std::move(cleanup));
    IRRewriter rewriter(ctx);
    for (auto &[op, loop, copies] : products) {
      SmallVector<OpFoldResult> tileSizes(op.getNumLoops(), rewriter.getIndexAttr(0));
      tileSizes[loop] = rewriter.getIndexAttr(1);
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(tileSizes).setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      scf::SCFTileAndFuseOptions options;
      options.setTilingOptions(tiling);
      options.cleanupPatterns = frozenCleanup;
      // Only what moves elements: the copies found above, the fill of the result. A
      // computation fused here would run again for every other user of its result.
      options.setFusionControlFn([&copies = copies](tensor::ExtractSliceOp, OpResult producer,
                                                    bool isDestination)
                                     -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        Operation *owner = producer.getOwner();
        if (llvm::is_contained(copies, owner) || (isDestination && dynamir::onlyMovesData(owner)))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTileAndFuseResult> result = scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(result))
        continue;
      rewriter.replaceOp(op, result->replacements.lookup(op->getResult(0)));
    }
    // A slice of a tensor.empty, the copy's destination in each iteration, becomes an empty
    // tensor of the slice's size: bufferized, one image's buffer, not every image's.
    // (Folds only: a driver that stopped before a fixpoint leaves correct IR.)
    RewritePatternSet emptySlices(ctx);
    tensor::populateFoldTensorEmptyPatterns(emptySlices);
    (void)applyPatternsGreedily(getOperation(), std::move(emptySlices));
  }
};
} // namespace
