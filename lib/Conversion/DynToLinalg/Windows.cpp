//===- Windows.cpp - dyn's boxes at computed offsets to tensor slices ----===//
//
// dyn.window and dyn.insert_window (x[i], L[i, :i] and x[i] = v in a captured loop) are
// tensor.extract_slice and tensor.insert_slice with offsets and sizes read from the graph's
// 0-d tensors. Both clamp them into the tensor first (a size into [0, dim], an offset into
// [0, dim - size]): the frontend proves its boxes lie inside for every value they take, and
// the clamp keeps a wrong one from reading or writing outside the buffer.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Conversion/DynToLinalg/DynToLinalg.h"

#include "dynamir/Dialect/Dyn/DynOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {

/// The index held by a 0-d i64 tensor.
Value indexOf(OpBuilder &b, Location loc, Value scalar) {
  Value i64 = tensor::ExtractOp::create(b, loc, scalar, ValueRange());
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), i64);
}

/// The size of dimension `d` of `tensor` as an index.
Value dimOf(OpBuilder &b, Location loc, Value tensor, int64_t d) {
  return tensor::DimOp::create(b, loc, tensor, d);
}

/// `v` clamped into [0, high].
Value clampIndex(OpBuilder &b, Location loc, Value v, Value high) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, zero), high);
}

/// A box's sizes: as index values (for the clamps) and as a slice's mixed sizes.
struct BoxSizes {
  SmallVector<Value> values;
  SmallVector<OpFoldResult> mixed;
  void add(Value size) {
    values.push_back(size);
    mixed.push_back(size);
  }
  void add(OpBuilder &b, Location loc, int64_t size) {
    values.push_back(arith::ConstantIndexOp::create(b, loc, size));
    mixed.push_back(b.getIndexAttr(size));
  }
};

/// The box of `sizes` (index values) at `offsets` (0-d tensors) inside `tensor`: offsets
/// clamped into [0, dim - size].
SmallVector<OpFoldResult> clampedOffsets(OpBuilder &b, Location loc, Value tensor,
                                         ValueRange offsets, ArrayRef<Value> sizes) {
  SmallVector<OpFoldResult> out;
  for (auto [d, offset] : llvm::enumerate(offsets)) {
    Value room = arith::SubIOp::create(b, loc, dimOf(b, loc, tensor, d), sizes[d]);
    out.push_back(clampIndex(b, loc, indexOf(b, loc, offset), room));
  }
  return out;
}

struct WindowLowering : OpConversionPattern<WindowOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(WindowOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto dynamicSizes = adaptor.getDynamicSizes().begin();
    BoxSizes sizes;
    for (auto [d, size] : llvm::enumerate(op.getSizes())) {
      if (ShapedType::isDynamic(size))
        sizes.add(clampIndex(rewriter, loc, indexOf(rewriter, loc, *dynamicSizes++),
                             dimOf(rewriter, loc, x, d)));
      else
        sizes.add(rewriter, loc, size);
    }
    SmallVector<OpFoldResult> offsets =
        clampedOffsets(rewriter, loc, x, adaptor.getOffsets(), sizes.values);
    SmallVector<OpFoldResult> strides(sizes.mixed.size(), rewriter.getIndexAttr(1));
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, type, x, offsets, sizes.mixed, strides);
    return success();
  }
};

struct InsertWindowLowering : OpConversionPattern<InsertWindowOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(InsertWindowOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = adaptor.getSource();
    auto type = cast<RankedTensorType>(source.getType());
    BoxSizes sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.isDynamicDim(d))
        sizes.add(dimOf(rewriter, loc, source, d));
      else
        sizes.add(rewriter, loc, type.getDimSize(d));
    }
    SmallVector<OpFoldResult> offsets =
        clampedOffsets(rewriter, loc, adaptor.getDest(), adaptor.getOffsets(), sizes.values);
    SmallVector<OpFoldResult> strides(sizes.mixed.size(), rewriter.getIndexAttr(1));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(op, source, adaptor.getDest(), offsets,
                                                       sizes.mixed, strides);
    return success();
  }
};

} // namespace

void dynamir::populateDynWindowLoweringPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns.add<WindowLowering, InsertWindowLowering>(converter, patterns.getContext());
}
