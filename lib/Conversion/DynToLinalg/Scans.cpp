//===- Scans.cpp - dyn's running sums, products, maxima, minima to scf.for ===//
//
// A running sum, product, maximum or minimum along one dimension is a sequence, which no linalg
// op expresses: the first slice along the dimension is copied, then an scf.for over the rest
// combines each slice of the input with the result's slice before it (one elementwise generic)
// and inserts it. The additions happen in numpy's and torch's order (r[k] = r[k-1] + x[k]), so
// float results round as theirs; copying the first slice keeps a leading -0.0 that 0 + x would
// lose. Bufferization updates the result in place.
//
// A masked load, x[mask] (dyn.compress), is a running count too: one loop counts the mask's
// true elements for the result's size, a second copies each selected element to the position
// the count has reached, both over the operands flattened in row-major order.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Conversion/DynToLinalg/DynToLinalg.h"

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynScalar.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {

template <typename OpTy> struct ScanLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  /// r[k-1] combined with x[k]. maximumf/minimumf propagate NaN, as numpy's maximum does.
  static Value combine(OpBuilder &b, Location loc, Value previous, Value current, bool isUnsigned) {
    bool isFloat = isa<FloatType>(previous.getType());
    if constexpr (std::is_same_v<OpTy, CumsumOp>)
      return isFloat ? arith::AddFOp::create(b, loc, previous, current).getResult()
                     : arith::AddIOp::create(b, loc, previous, current).getResult();
    else if constexpr (std::is_same_v<OpTy, CumprodOp>)
      return isFloat ? arith::MulFOp::create(b, loc, previous, current).getResult()
                     : arith::MulIOp::create(b, loc, previous, current).getResult();
    else if constexpr (std::is_same_v<OpTy, CummaxOp>)
      return isFloat      ? arith::MaximumFOp::create(b, loc, previous, current).getResult()
             : isUnsigned ? arith::MaxUIOp::create(b, loc, previous, current).getResult()
                          : arith::MaxSIOp::create(b, loc, previous, current).getResult();
    else
      return isFloat      ? arith::MinimumFOp::create(b, loc, previous, current).getResult()
             : isUnsigned ? arith::MinUIOp::create(b, loc, previous, current).getResult()
                          : arith::MinSIOp::create(b, loc, previous, current).getResult();
  }
  using Adaptor = typename OpTy::Adaptor;

  LogicalResult matchAndRewrite(OpTy op, Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t dim = static_cast<int64_t>(op.getDim()), rank = type.getRank();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "a scan of a dynamic shape");
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, x);
      return success();
    }
    // Slices of one element along `dim` at index `at`.
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[dim] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    auto bounds = [&](OpFoldResult at) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes, strides;
      offsets[dim] = at;
      for (int64_t size : sliceShape)
        sizes.push_back(rewriter.getIndexAttr(size));
      strides.assign(rank, rewriter.getIndexAttr(1));
      return std::make_tuple(offsets, sizes, strides);
    };
    auto slice = [&](OpBuilder &b, Value from, OpFoldResult at) {
      auto [offsets, sizes, strides] = bounds(at);
      return tensor::ExtractSliceOp::create(b, loc, sliceType, from, offsets, sizes, strides)
          .getResult();
    };
    auto insert = [&](OpBuilder &b, Value piece, Value into, OpFoldResult at) {
      auto [offsets, sizes, strides] = bounds(at);
      return tensor::InsertSliceOp::create(b, loc, piece, into, offsets, sizes, strides)
          .getResult();
    };
    Value result = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    result = insert(rewriter, slice(rewriter, x, rewriter.getIndexAttr(0)), result,
                    rewriter.getIndexAttr(0));
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value size = arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(dim));
    auto loop = scf::ForOp::create(
        rewriter, loc, one, size, one, ValueRange{result},
        [&](OpBuilder &b, Location, Value k, ValueRange carried) {
          Value before = arith::SubIOp::create(b, loc, k, one);
          Value previous = slice(b, carried[0], before), current = slice(b, x, k);
          MLIRContext *ctx = b.getContext();
          SmallVector<AffineMap> maps(3, AffineMap::getMultiDimIdentityMap(rank, ctx));
          Value init = tensor::EmptyOp::create(b, loc, sliceShape, type.getElementType());
          Value combined =
              linalg::GenericOp::create(
                  b, loc, TypeRange{sliceType}, ValueRange{previous, current}, ValueRange{init},
                  maps, SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
                  [&](OpBuilder &nb, Location l, ValueRange args) {
                    linalg::YieldOp::create(
                        nb, l, combine(nb, l, args[0], args[1], isUnsigned(op.getX().getType())));
                  })
                  .getResult(0);
          scf::YieldOp::create(b, loc, insert(b, combined, carried[0], k));
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

struct CompressLowering : OpConversionPattern<CompressOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(CompressOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto flat = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getRank() == 1)
        return v;
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < type.getRank(); ++d)
        all[0].push_back(d);
      return tensor::CollapseShapeOp::create(rewriter, loc, v, all);
    };
    Value x = flat(adaptor.getX()), mask = flat(adaptor.getMask());
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value size = arith::ConstantIndexOp::create(rewriter, loc,
                                                cast<RankedTensorType>(x.getType()).getDimSize(0));
    auto selected = [&](OpBuilder &b, Value i) {
      return tensor::ExtractOp::create(b, loc, mask, ValueRange{i}).getResult();
    };
    auto count = scf::ForOp::create(
        rewriter, loc, zero, size, one, ValueRange{zero},
        [&](OpBuilder &b, Location, Value i, ValueRange carried) {
          Value bit = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), selected(b, i));
          scf::YieldOp::create(b, loc, ValueRange{arith::AddIOp::create(b, loc, carried[0], bit)});
        });
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType(),
                                          ValueRange{count.getResult(0)});
    auto fill = scf::ForOp::create(
        rewriter, loc, zero, size, one, ValueRange{zero, empty},
        [&](OpBuilder &b, Location, Value i, ValueRange carried) {
          auto copy = scf::IfOp::create(
              b, loc, selected(b, i),
              [&](OpBuilder &t, Location) {
                Value v = tensor::ExtractOp::create(t, loc, x, ValueRange{i});
                Value out = tensor::InsertOp::create(t, loc, v, carried[1], ValueRange{carried[0]});
                scf::YieldOp::create(
                    t, loc, ValueRange{arith::AddIOp::create(t, loc, carried[0], one), out});
              },
              [&](OpBuilder &e, Location) { scf::YieldOp::create(e, loc, carried); });
          scf::YieldOp::create(b, loc, copy.getResults());
        });
    rewriter.replaceOp(op, fill.getResult(1));
    return success();
  }
};

} // namespace

void dynamir::populateDynScanLoweringPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<ScanLowering<CumsumOp>, ScanLowering<CumprodOp>, ScanLowering<CummaxOp>,
               ScanLowering<CumminOp>, CompressLowering>(converter, patterns.getContext());
}
