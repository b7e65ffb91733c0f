//===- DirectConvolutions.cpp - convolutions without im2col columns -------===//
//
// A convolution reaches the graph as filters times `dyn.unfold`'s columns: the columns are
// written (9x the image for a 3x3 kernel), then the BLAS packs them again before its kernel
// reads them. For a residual block's 3x3 convolution of 32 channels on 32x32 images (one
// image, one thread, this project's AVX2 machine), the product alone took 271 us, torch's
// oneDNN convolution 243 us, and a direct kernel that keeps a 4-filter by 16-column tile of
// the output in registers while it runs over the channels and the window 213 us. This pass
// gives the runtime's direct kernel (dynamir_conv2d) the convolutions it runs well: stride 1,
// dilation 1, float32, filters in fours and output rows in sixteens; the others stay columns.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Runtime/Convolution.h"
#include "dynamir/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNDIRECTCONVOLUTIONS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;
using namespace dynamir::dyn;

namespace {
/// matmul(reshape(w : [F, C, KH, KW]), unfold(x) of stride and dilation 1)
///   -> reshape(conv2d(x, w))
struct ProductOfColumns : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto filters = op.getLhs().getDefiningOp<ReshapeOp>();
    auto columns = op.getRhs().getDefiningOp<UnfoldOp>();
    if (!filters || !columns)
      return failure();
    auto w = dyn_cast<RankedTensorType>(filters.getX().getType());
    auto x = dyn_cast<RankedTensorType>(columns.getX().getType());
    if (!w || !x || w.getRank() != 4 || x.getRank() != 4 || !w.hasStaticShape() ||
        !x.hasStaticShape() || !w.getElementType().isF32() || !x.getElementType().isF32())
      return failure();
    auto ones = [](ArrayRef<int64_t> values) {
      return llvm::all_of(values, [](int64_t v) { return v == 1; });
    };
    if (!ones(columns.getStride()) || !ones(columns.getDilation()) ||
        columns.getKernel() != w.getShape().drop_front(2) || w.getDimSize(1) != x.getDimSize(1))
      return failure();
    ArrayRef<int64_t> padding = columns.getPadding();
    int64_t width = x.getDimSize(3) + 2 * padding[1] - w.getDimSize(3) + 1;
    // Whole tiles of the runtime kernel's output (lib/Runtime/Convolution.cpp).
    if (w.getDimSize(0) % dynamir::runtime::kConvolutionTileFilters != 0 ||
        width % dynamir::runtime::kConvolutionTileColumns != 0)
      return failure();
    Value conv = Conv2dOp::create(rewriter, op.getLoc(), columns.getX(), filters.getX(),
                                  rewriter.getDenseI64ArrayAttr(padding));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), conv);
    return success();
  }
};

struct DirectConvolutionsPass : dynamir::impl::DynDirectConvolutionsBase<DirectConvolutionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ProductOfColumns>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
