//===- FuseElementwise.cpp - elementwise fusion that never recomputes -----===//
//
// Upstream's elementwise fusion fuses a producer into any consumer generic, a contraction
// included. A contraction reads its operand once per output column (the map of A in
// C[m,n] += A[m,k] * B[k,n] lacks n), so a fused GELU ran N times per element: 57 ms for
// `fc2(gelu(fc1(x)))` on a 4x64x256 input where torch takes 1.3 ms, and the product was no
// longer one that dyn-blas hands to BLAS. This pass runs upstream's patterns with a control
// function that fuses only where the consumer reads the producer with all of its loops.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Transforms/Passes.h"
#include "dynamir/Transforms/Products.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNFUSEELEMENTWISE
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// Whether `op` is absent or a linalg op without reduction loops.
bool allParallelOrNone(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return !linalgOp || linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
}

bool singleUseProducer(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  return producer && producer->hasOneUse();
}

/// Whether the consumer of `fused` reads each element of it once: its indexing map of it uses
/// every loop, or the producer only moves data (a transposed operand of a product becomes a
/// transposed map).
bool readsEachElementOnce(OpOperand *fused) {
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!consumer)
    return false;
  if (dynamir::onlyMovesData(fused->get().getDefiningOp()))
    return true;
  AffineMap map = consumer.getMatchingIndexingMap(fused);
  llvm::SmallBitVector used(map.getNumDims());
  for (AffineExpr e : map.getResults())
    e.walk([&](AffineExpr sub) {
      if (auto dim = dyn_cast<AffineDimExpr>(sub))
        used.set(dim.getPosition());
    });
  return used.all();
}

/// Fuse a single-use producer into the consumer only when the consumer reads each of its
/// elements once, so that each element of the producer is computed exactly once.
bool computesEachElementOnce(OpOperand *fused) {
  return singleUseProducer(fused) && readsEachElementOnce(fused);
}

/// With recompute-shared: also a producer with several users when each of them reads each of
/// its elements once (each computes it again).
bool computesEachElementOncePerUser(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  return producer && llvm::all_of(producer->getUses(),
                                  [](OpOperand &use) { return readsEachElementOnce(&use); });
}

/// Whether folding `op`, if a reshape, into a generic by expansion would split the generic's
/// innermost loop: the group that makes its expanded shape's last dimension holds two sizes
/// other than 1. Max-pooling's [..., 24] -> [..., 12, 2] folded into the ReLU before it made
/// that ReLU's vector loop 2 elements long (LeNet 1.01 -> 1.07 ms).
bool splitsInnermost(Operation *op) {
  ArrayRef<int64_t> expanded;
  SmallVector<ReassociationIndices> groups;
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(op)) {
    expanded = expand.getResultType().getShape();
    groups = expand.getReassociationIndices();
  } else if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(op)) {
    expanded = collapse.getSrcType().getShape();
    groups = collapse.getReassociationIndices();
  }
  return !groups.empty() &&
         llvm::count_if(groups.back(), [&](int64_t d) { return expanded[d] != 1; }) > 1;
}

/// Reshapes fold into (and through) all-parallel generics only: expanding a contraction to
/// fold a reshape would undo the collapse that lets dyn-blas call BLAS on it. Nor where they
/// would split the innermost loop.
bool foldsIntoParallelOps(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp(), *consumer = fused->getOwner();
  return singleUseProducer(fused) && allParallelOrNone(producer) && allParallelOrNone(consumer) &&
         !splitsInnermost(producer) && !splitsInnermost(consumer);
}

/// Whether `op` may merge with a sibling: a generic on tensors with only parallel loops of
/// static sizes.
bool mergeable(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumLoops() != op.getNumParallelLoops() ||
      op.getNumResults() == 0)
    return false;
  return llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

/// Two all-parallel generics over the same loops that read a common input merge into one
/// generic with the results of both: the common input is read once, and a producer that both
/// read becomes single-use and fuses in. The butterfly's `t = w * odd` was computed into a
/// buffer that `even + t` and `even - t` read in two more passes; merged, it is one pass over
/// the data. The merged generic takes the later one's place, so the earlier one's results
/// must have no use before it.
struct MergeSiblings : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp first, PatternRewriter &rewriter) const override {
    linalg::GenericOp second = sibling(first);
    if (!second)
      return failure();
    rewriter.setInsertionPoint(second);
    auto join = [](auto a, auto b) {
      auto all = llvm::to_vector(a);
      all.append(b.begin(), b.end());
      return all;
    };
    auto maps = [](linalg::GenericOp op, bool inits) {
      SmallVector<AffineMap> result = op.getIndexingMapsArray();
      unsigned inputs = op.getNumDpsInputs();
      return inits ? SmallVector<AffineMap>(result.begin() + inputs, result.end())
                   : SmallVector<AffineMap>(result.begin(), result.begin() + inputs);
    };
    SmallVector<AffineMap> indexing = join(maps(first, false), maps(second, false));
    indexing.append(join(maps(first, true), maps(second, true)));
    auto merged = linalg::GenericOp::create(
        rewriter, second.getLoc(), join(first.getResultTypes(), second.getResultTypes()),
        join(first.getDpsInputs(), second.getDpsInputs()),
        join(first.getDpsInits(), second.getDpsInits()), indexing, first.getIteratorTypesArray());
    // Payload arguments: both ops' inputs, then both ops' inits, as the operands.
    Block *a = first.getBody(), *b = second.getBody();
    unsigned ai = first.getNumDpsInputs(), bi = second.getNumDpsInputs();
    SmallVector<BlockArgument> args =
        join(a->getArguments().take_front(ai), b->getArguments().take_front(bi));
    args.append(join(a->getArguments().drop_front(ai), b->getArguments().drop_front(bi)));
    SmallVector<Type> types;
    SmallVector<Location> locs;
    for (BlockArgument arg : args) {
      types.push_back(arg.getType());
      locs.push_back(arg.getLoc());
    }
    Block *body = rewriter.createBlock(&merged.getRegion(), {}, types, locs);
    IRMapping mapping;
    for (auto [old, now] : llvm::zip(args, body->getArguments()))
      mapping.map(old, now);
    SmallVector<Value> yielded;
    for (Block *block : {a, b}) {
      for (Operation &op : block->without_terminator())
        rewriter.clone(op, mapping);
      for (Value v : block->getTerminator()->getOperands())
        yielded.push_back(mapping.lookupOrDefault(v));
    }
    linalg::YieldOp::create(rewriter, second.getLoc(), yielded);
    unsigned firstResults = first.getNumResults(); // `first` is gone once replaced
    rewriter.replaceOp(first, merged.getResults().take_front(firstResults));
    rewriter.replaceOp(second, merged.getResults().drop_front(firstResults));
    return success();
  }

  /// A generic after `first` in its block, over the same loops, that reads one of its inputs,
  /// before every use of `first`'s results.
  static linalg::GenericOp sibling(linalg::GenericOp first) {
    if (!mergeable(first))
      return {};
    Block *block = first->getBlock();
    SmallVector<int64_t> loops = first.getStaticLoopRanges();
    for (Value input : first.getDpsInputs())
      for (Operation *user : input.getUsers()) {
        auto second = dyn_cast<linalg::GenericOp>(user);
        if (!second || second == first || second->getBlock() != block ||
            !first->isBeforeInBlock(second) || !mergeable(second) ||
            second.getStaticLoopRanges() != loops)
          continue;
        bool usedBefore = llvm::any_of(first->getUsers(), [&](Operation *use) {
          Operation *inBlock = block->findAncestorOpInBlock(*use);
          return !inBlock || !second->isBeforeInBlock(inBlock);
        });
        if (!usedBefore)
          return second;
      }
    return {};
  }
};

void addFusionPatterns(RewritePatternSet &patterns, bool recomputeShared) {
  MLIRContext *context = patterns.getContext();
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, recomputeShared ? computesEachElementOncePerUser : computesEachElementOnce);
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, foldsIntoParallelOps);
  tensor::populateBubbleUpExpandShapePatterns(patterns);
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
  context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
  linalg::populateConstantFoldLinalgOperations(patterns, singleUseProducer);
}

/// Producers fuse into consumers first; then siblings merge, and the producers that this
/// leaves single-use fuse in. Merging first would give a producer that could fuse into its
/// consumer a second result, and with it a second use.
struct FuseElementwisePass : dynamir::impl::DynFuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet producers(context);
    addFusionPatterns(producers, recomputeShared);
    if (failed(applyPatternsGreedily(getOperation(), std::move(producers))))
      return signalPassFailure();
    RewritePatternSet siblings(context);
    addFusionPatterns(siblings, recomputeShared);
    siblings.add<MergeSiblings>(context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(siblings))))
      signalPassFailure();
  }
};
} // namespace
