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
// true elements for the result's size, a second copies each selected element (or row, for a
// mask of the leading dimensions) to the position the count has reached, both over the
// operands flattened in row-major order.
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

/// x[mask]: x as rows [M, R] (M the mask's elements, R those of the dimensions it leaves; a
/// mask of every dimension has R = 1 and x is flat), one loop counting the selected rows (the
/// result's size), one copying each to the row the count has reached, element by element (a
/// scalar loop nest, which the GPU runs in one thread as it does scatters).
struct CompressLowering : OpConversionPattern<CompressOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(CompressOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto collapse = [&](Value v, int64_t lead) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<ReassociationIndices> groups(lead < type.getRank() ? 2 : 1);
      for (int64_t d = 0; d < type.getRank(); ++d)
        groups[d < lead ? 0 : 1].push_back(d);
      if (groups.size() == static_cast<size_t>(type.getRank()))
        return v;
      return tensor::CollapseShapeOp::create(rewriter, loc, v, groups);
    };
    int64_t lead = cast<RankedTensorType>(adaptor.getMask().getType()).getRank();
    Value x = collapse(adaptor.getX(), lead), mask = collapse(adaptor.getMask(), lead);
    auto xType = cast<RankedTensorType>(x.getType());
    bool rows = xType.getRank() == 2;
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    Value zero = index(0), one = index(1), size = index(xType.getDimSize(0));
    auto selected = [&](OpBuilder &b, Value i) {
      return tensor::ExtractOp::create(b, loc, mask, ValueRange{i}).getResult();
    };
    auto count = scf::ForOp::create(
        rewriter, loc, zero, size, one, ValueRange{zero},
        [&](OpBuilder &b, Location, Value i, ValueRange carried) {
          Value bit = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), selected(b, i));
          scf::YieldOp::create(b, loc, ValueRange{arith::AddIOp::create(b, loc, carried[0], bit)});
        });
    Value total = count.getResult(0);
    SmallVector<int64_t> flatShape = {ShapedType::kDynamic};
    if (rows)
      flatShape.push_back(xType.getDimSize(1));
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, flatShape, type.getElementType(), ValueRange{total});
    // Copies x's row i (its element i when flat) into row k of `out`.
    auto copyRow = [&](OpBuilder &b, Value i, Value k, Value out) -> Value {
      if (!rows) {
        Value v = tensor::ExtractOp::create(b, loc, x, ValueRange{i});
        return tensor::InsertOp::create(b, loc, v, out, ValueRange{k});
      }
      auto loop = scf::ForOp::create(
          b, loc, zero, index(xType.getDimSize(1)), one, ValueRange{out},
          [&](OpBuilder &e, Location, Value j, ValueRange carried) {
            Value v = tensor::ExtractOp::create(e, loc, x, ValueRange{i, j});
            scf::YieldOp::create(
                e, loc,
                ValueRange{tensor::InsertOp::create(e, loc, v, carried[0], ValueRange{k, j})});
          });
      return loop.getResult(0);
    };
    auto fill = scf::ForOp::create(
        rewriter, loc, zero, size, one, ValueRange{zero, empty},
        [&](OpBuilder &b, Location, Value i, ValueRange carried) {
          auto copy = scf::IfOp::create(
              b, loc, selected(b, i),
              [&](OpBuilder &t, Location) {
                Value out = copyRow(t, i, carried[0], carried[1]);
                scf::YieldOp::create(
                    t, loc, ValueRange{arith::AddIOp::create(t, loc, carried[0], one), out});
              },
              [&](OpBuilder &e, Location) { scf::YieldOp::create(e, loc, carried); });
          scf::YieldOp::create(b, loc, copy.getResults());
        });
    Value result = fill.getResult(1);
    if (type.getRank() > 2) { // the rows' own dimensions again
      SmallVector<ReassociationIndices> groups(2);
      groups[0].push_back(0);
      for (int64_t d = 1; d < type.getRank(); ++d)
        groups[1].push_back(d);
      SmallVector<OpFoldResult> shape = {OpFoldResult(total)};
      for (int64_t d = 1; d < type.getRank(); ++d)
        shape.push_back(rewriter.getIndexAttr(type.getDimSize(d)));
      result = expandOrReshape(rewriter, loc, type, result, groups, shape);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void dynamir::populateDynScanLoweringPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<ScanLowering<CumsumOp>, ScanLowering<CumprodOp>, ScanLowering<CummaxOp>,
               ScanLowering<CumminOp>, CompressLowering>(converter, patterns.getContext());
}
