//===- FuseRowReductions.cpp - softmax and norms a block of rows at a time ===//
//
// A row softmax is four loop nests over the whole array: the row maxima, e = exp(x - max), the
// sums of e, and e / sum. On 4096x1024 floats each streams 16 MB through memory, and e is a
// 16 MB temporary. Inductor runs the four for one row before the next. Tiling the elementwise
// op at the end by blocks of rows and fusing the reductions and elementwise ops that feed it
// into the same loop reads each block from memory once (the later passes find it in the
// core's cache) and makes e one block's buffer. Layer and RMS norms have the same shape.
//
// Attention is a softmax between two products: the scores Q K^T, their softmax P, and P V.
// Tiling P V's rows and fusing the softmax and the scores' product makes both products BLAS
// calls on a block of rows each, and the T x T scores one block's buffer: for 8 heads of 4096
// keys the process's peak memory fell from 3.0 to 1.9 GB (2 threads, 370-407 ms either way);
// 8 heads of 2048 keys on one thread: 178 -> 168 ms.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Transforms/Passes.h"
#include "dynamir/Transforms/Products.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNFUSEROWREDUCTIONS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// Bytes of a block of rows' result (16 rows of 1024 floats), an eighth of this project's
/// machines' 512 KiB L2 caches. Against 16 KiB (half the L1 data cache), in turns on 2 threads:
/// a 4096x1024 softmax 2.81 -> 2.51 ms, 12 heads of 512x512 scores 2.16 -> 2.02, a 4096x1024
/// layer norm 1.74 -> 1.39; on one thread the same within 3%.
constexpr int64_t kBlockBytes = 64 * 1024;
/// Rows of a block at least, when products are tiled: 8-row blocks (T = 2048) made attention
/// 20% slower than unfused (224 against 185 ms); 64 rows, 6% faster.
constexpr int64_t kProductRows = 64;

/// The number of leading loops of `op` that index rows when `map` (one of op's operands' or a
/// user's) reads a row-wise value: `d0, ..., d(k-1)` followed by nothing but zeros (a keepdim
/// reduction result); 0 otherwise.
unsigned leadingRows(AffineMap map) {
  unsigned k = 0;
  bool zeros = false;
  for (AffineExpr e : map.getResults()) {
    if (!zeros && e == getAffineDimExpr(k, map.getContext())) {
      ++k;
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0)
      return 0;
    zeros = true;
  }
  return k;
}

/// The number of leading loops of the product `op` that index rows of the operand `map`
/// reads, whose remaining results are all reduction loops (P of attention's P V: `b, h, i`
/// then the keys it sums over); 0 otherwise.
unsigned productRows(linalg::GenericOp op, AffineMap map) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned k = 0;
  while (k < map.getNumResults() && map.getResult(k) == getAffineDimExpr(k, op.getContext()))
    ++k;
  for (unsigned r = k; r < map.getNumResults(); ++r) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
    if (!dim || iterators[dim.getPosition()] != utils::IteratorType::reduction)
      return 0;
  }
  return k < map.getNumResults() ? k : 0;
}

/// Whether every one of `op`'s first `rows` loops is parallel and its output writes them as its
/// leading dimensions, through loops and keepdim zeros only: a block of rows of its result
/// needs only that block of its loops, and it tiles (see projectOutput).
bool keepsRows(linalg::GenericOp op, unsigned rows) {
  if (op.getNumLoops() < rows || op.getNumDpsInits() != 1)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() < rows || !out.isProjectedPermutation(/*allowZeroInResults=*/true))
    return false;
  for (unsigned d = 0; d < rows; ++d)
    if (iterators[d] != utils::IteratorType::parallel ||
        out.getResult(d) != getAffineDimExpr(d, op.getContext()))
      return false;
  return true;
}

/// Whether `op` reads the result of `producer` a row of it per row of its own first `rows`
/// loops.
bool readsRowWise(linalg::GenericOp op, Operation *producer, unsigned rows) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.get().getDefiningOp() != producer)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (map.getNumResults() < rows)
      return false;
    for (unsigned d = 0; d < rows; ++d)
      if (map.getResult(d) != getAffineDimExpr(d, op.getContext()))
        return false;
  }
  return true;
}

/// What to fuse into the row blocks of `consumer`: the linalg generics it reads (transitively)
/// that keep its first `rows` loops as rows, are read row-wise, and are read by nothing outside
/// the cluster (fused, they would run again for their other users). Matrix products join only
/// the cluster of a product (attention's scores, feeding a softmax whose rows the product with
/// the values reads): a block of rows is then a BLAS call over many rows, where blocks of
/// elementwise work would make calls too small to pay. Empty when no reduction is among them.
SetVector<Operation *> rowCluster(linalg::GenericOp consumer, unsigned rows, bool products) {
  SetVector<Operation *> cluster;
  SmallVector<Operation *> worklist = {consumer};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      auto producer = operand.getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->getBlock() != consumer->getBlock() ||
          !producer.hasPureTensorSemantics() ||
          llvm::any_of(producer.getStaticLoopRanges(), [](int64_t range) { return range <= 0; }) ||
          (!products && dynamir::matchProduct(producer)) || !keepsRows(producer, rows) ||
          cluster.contains(producer))
        continue;
      cluster.insert(producer);
      worklist.push_back(producer);
    }
  }
  // Drop what has a user outside, or a user that reads it otherwise than row-wise, until none.
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation *op : llvm::to_vector(cluster)) {
      bool keep = llvm::all_of(op->getUsers(), [&](Operation *user) {
        auto generic = dyn_cast<linalg::GenericOp>(user);
        return generic && (user == consumer || cluster.contains(user)) &&
               readsRowWise(generic, op, rows);
      });
      if (!keep) {
        cluster.remove(op);
        changed = true;
      }
    }
  }
  bool reduces = llvm::any_of(cluster, [](Operation *op) {
    return cast<linalg::GenericOp>(op).getNumReductionLoops() != 0;
  });
  return reduces ? cluster : SetVector<Operation *>();
}

/// A linalg.fill, or a generic that broadcasts a scalar (what linalg-generalize-named-ops
/// makes of one).
bool isFill(Operation *op) {
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && dynamir::onlyMovesData(generic) &&
         llvm::all_of(generic.getDpsInputs(), [](Value v) {
           auto type = dyn_cast<ShapedType>(v.getType());
           return !type || type.getRank() == 0;
         });
}

/// `op` (a reduction in a cluster) writing its result without the unit dimensions of a keepdim
/// output (`(d0, d1) -> (d0, 0)` becomes `(d0, d1) -> (d0)`), expanded back: tiling wants
/// outputs indexed by loops only. Returns the new generic.
linalg::GenericOp projectOutput(RewriterBase &rewriter, linalg::GenericOp op) {
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.isProjectedPermutation())
    return op;
  // Each kept result starts a group; the unit dimensions join the group before them (leading
  // ones the first).
  SmallVector<AffineExpr> kept;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  for (auto [i, e] : llvm::enumerate(out.getResults())) {
    if (isa<AffineConstantExpr>(e)) {
      (groups.empty() ? leading : groups.back()).push_back(i);
      continue;
    }
    groups.push_back(leading);
    groups.back().push_back(i);
    leading.clear();
    kept.push_back(e);
  }
  if (kept.empty())
    return op;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value init = tensor::CollapseShapeOp::create(rewriter, loc, op.getDpsInits()[0], groups);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(out.getNumDims(), 0, kept, op.getContext());
  auto projected =
      linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()}, op.getDpsInputs(),
                                ValueRange{init}, maps, op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), projected.getRegion(), projected.getRegion().end());
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, op.getResultTypes()[0],
                                                     projected.getResult(0), groups);
  return projected;
}

/// A consumer to tile: an elementwise generic on static tensors that reads a generic's result
/// row-wise (`d0, ..., d(k-1), 0, ...` for k >= 1 leading loops, fewer than all: a reduction's,
/// or the reciprocals of one's), or a matrix product that reads one over its reduction loops
/// (productRows), with the cluster to fuse and the number of its row loops.
struct RowBlocks {
  linalg::GenericOp consumer;
  unsigned rows;
  bool product; // the consumer is a matrix product (attention's P V)
  SetVector<Operation *> cluster;
};

std::optional<RowBlocks> matchRowBlocks(linalg::GenericOp op) {
  // (Dynamic sizes are -1 and empty loops 0: neither is tiled.)
  bool product = dynamir::matchProduct(op).has_value();
  if (!op.hasPureTensorSemantics() || op.getNumResults() != 1 ||
      (op.getNumReductionLoops() != 0 && !product) ||
      llvm::any_of(op.getStaticLoopRanges(), [](int64_t range) { return range <= 0; }))
    return std::nullopt;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!input->get().getDefiningOp<linalg::GenericOp>())
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    unsigned rows = product ? productRows(op, map) : leadingRows(map);
    if (rows == 0 || rows >= op.getNumLoops() || !keepsRows(op, rows))
      continue;
    SetVector<Operation *> cluster = rowCluster(op, rows, product);
    if (!cluster.empty())
      return RowBlocks{op, rows, product, std::move(cluster)};
  }
  return std::nullopt;
}

struct FuseRowReductionsPass : dynamir::impl::DynFuseRowReductionsBase<FuseRowReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    // The last consumer first: its cluster takes the elementwise ops before it that a
    // reduction also reads (`e` of `e / e.sum()`), which would otherwise be tiled alone.
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    DenseSet<Operation *> fused;
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    bool changed = false;
    for (linalg::GenericOp op : llvm::reverse(generics)) {
      if (fused.contains(op))
        continue;
      std::optional<RowBlocks> match = matchRowBlocks(op);
      if (!match)
        continue;
      fused.insert(match->cluster.begin(), match->cluster.end());
      changed |= tile(rewriter, *match);
    }
    if (!changed)
      return;
    // A slice of a tensor.empty becomes an empty tensor of the slice's size: one block's buffer.
    RewritePatternSet emptySlices(ctx);
    tensor::populateFoldTensorEmptyPatterns(emptySlices);
    (void)applyPatternsGreedily(getOperation(), std::move(emptySlices));
  }

  /// Tiles the match's consumer and fuses its cluster; false when it leaves it as it was.
  bool tile(IRRewriter &rewriter, RowBlocks &match) {
    linalg::GenericOp op = match.consumer;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned last = match.rows - 1;
    // Bytes of the largest row a block holds, among the results of the consumer and its
    // cluster (attention's scores, not its output; complex elements are two numbers, i1 one
    // byte).
    int64_t rowBytes = 1;
    auto rowBytesOf = [&](Operation *member) {
      auto type = cast<RankedTensorType>(member->getResultTypes()[0]);
      Type element = type.getElementType();
      int64_t bytes = 1;
      if (auto complex = dyn_cast<ComplexType>(element))
        bytes = 2 * complex.getElementType().getIntOrFloatBitWidth() / 8;
      else if (element.isIntOrFloat())
        bytes = std::max<unsigned>(element.getIntOrFloatBitWidth() / 8, 1);
      for (int64_t d = match.rows; d < type.getRank(); ++d)
        bytes *= type.getDimSize(d);
      rowBytes = std::max(rowBytes, bytes);
    };
    rowBytesOf(op);
    for (Operation *member : match.cluster)
      rowBytesOf(member);
    // Rows per block: what fills kBlockBytes, a divisor of the row loop (no partial block).
    int64_t block =
        std::clamp<int64_t>(kBlockBytes / rowBytes, match.product ? kProductRows : 1, ranges[last]);
    while (ranges[last] % block)
      --block;
    int64_t blocks = ranges[last] / block;
    for (unsigned d = 0; d < last; ++d)
      blocks *= ranges[d];
    if (blocks < 2)
      return false;
    // The blocks are a parallel loop when their work is worth threads (dyn-cpu-parallel's
    // measure), else a sequential one: a parallel region costs about what 64K iterations do.
    SmallVector<Operation *> members = llvm::to_vector(match.cluster);
    members.push_back(op);
    int64_t work = 0;
    for (Operation *member : members) {
      auto linalgOp = cast<linalg::LinalgOp>(member);
      int64_t iterations = dynamir::iterationCost(linalgOp);
      for (int64_t range : linalgOp.getStaticLoopRanges())
        iterations *= range;
      work += iterations;
    }
    bool parallel = threads > 1 && work >= dynamir::kMinParallelWork;
    SetVector<Operation *> cluster;
    for (Operation *member : match.cluster)
      cluster.insert(projectOutput(rewriter, cast<linalg::GenericOp>(member)));
    match.cluster = std::move(cluster);

    SmallVector<OpFoldResult> tileSizes(ranges.size(), rewriter.getIndexAttr(0));
    for (unsigned d = 0; d < last; ++d)
      tileSizes[d] = rewriter.getIndexAttr(1);
    tileSizes[last] = rewriter.getIndexAttr(block);
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(tileSizes).setLoopType(parallel ? scf::SCFTilingOptions::LoopType::ForallOp
                                                        : scf::SCFTilingOptions::LoopType::ForOp);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // Slices of the keepdim results' reshapes become reshapes of slices, which fuse.
    RewritePatternSet cleanup(rewriter.getContext());
    tensor::populateBubbleUpExtractSliceOpPatterns(cleanup);
    options.cleanupPatterns = FrozenRewritePatternSet(std::move(cleanup));
    options.setFusionControlFn(
        [&cluster =
             match.cluster](tensor::ExtractSliceOp, OpResult producer,
                            bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          // A fill (of a reduction's accumulator, or of the result; a generic of a scalar
          // after linalg-generalize-named-ops) costs a store per element wherever it runs.
          Operation *owner = producer.getOwner();
          if (cluster.contains(owner) || isFill(owner))
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          return std::nullopt;
        });
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTileAndFuseResult> result = scf::tileConsumerAndFuseProducersUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(result))
      return false;
    rewriter.replaceOp(op, result->replacements.lookup(op->getResult(0)));
    return true;
  }
};
} // namespace
