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
// operands flattened in row-major order. For the GPU, which would run those loops on one
// thread, the running count is a log-step scan instead, and each result row finds its source
// by a binary search in it: parallel generics only.
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
#include "llvm/ADT/bit.h"

#include <limits>

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
/// mask of every dimension has R = 1 and x is flat) and the mask as [M], then the selected
/// rows (sequentialRows or parallelRows) as [N, R] or [N], N their count, then in the result's
/// shape. `parallel` picks parallelRows where x's shape is static.
struct CompressLowering : OpConversionPattern<CompressOp> {
  CompressLowering(const TypeConverter &converter, MLIRContext *ctx, bool parallel)
      : OpConversionPattern(converter, ctx), parallel(parallel) {}

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
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    bool byScan = parallel && xType.hasStaticShape() && xType.getDimSize(0) > 0 &&
                  xType.getDimSize(0) < std::numeric_limits<int32_t>::max();
    auto [result, total] = byScan ? parallelRows(rewriter, loc, x, mask, type.getElementType())
                                  : sequentialRows(rewriter, loc, x, mask, type.getElementType());
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

private:
  /// The selected rows and their count: one loop counting the selected rows (the result's
  /// size), one copying each to the row the count has reached, element by element.
  static std::pair<Value, Value> sequentialRows(OpBuilder &b, Location loc, Value x, Value mask,
                                                Type element) {
    auto xType = cast<RankedTensorType>(x.getType());
    bool rows = xType.getRank() == 2;
    auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
    Value zero = index(0), one = index(1), size = index(xType.getDimSize(0));
    auto selected = [&](OpBuilder &nb, Value i) {
      return tensor::ExtractOp::create(nb, loc, mask, ValueRange{i}).getResult();
    };
    auto count = scf::ForOp::create(
        b, loc, zero, size, one, ValueRange{zero},
        [&](OpBuilder &nb, Location, Value i, ValueRange carried) {
          Value bit = arith::IndexCastUIOp::create(nb, loc, nb.getIndexType(), selected(nb, i));
          scf::YieldOp::create(nb, loc,
                               ValueRange{arith::AddIOp::create(nb, loc, carried[0], bit)});
        });
    Value total = count.getResult(0);
    SmallVector<int64_t> flatShape = {ShapedType::kDynamic};
    if (rows)
      flatShape.push_back(xType.getDimSize(1));
    Value empty = tensor::EmptyOp::create(b, loc, flatShape, element, ValueRange{total});
    // Copies x's row i (its element i when flat) into row k of `out`.
    auto copyRow = [&](OpBuilder &nb, Value i, Value k, Value out) -> Value {
      if (!rows) {
        Value v = tensor::ExtractOp::create(nb, loc, x, ValueRange{i});
        return tensor::InsertOp::create(nb, loc, v, out, ValueRange{k});
      }
      auto loop = scf::ForOp::create(
          nb, loc, zero, index(xType.getDimSize(1)), one, ValueRange{out},
          [&](OpBuilder &e, Location, Value j, ValueRange carried) {
            Value v = tensor::ExtractOp::create(e, loc, x, ValueRange{i, j});
            scf::YieldOp::create(
                e, loc,
                ValueRange{tensor::InsertOp::create(e, loc, v, carried[0], ValueRange{k, j})});
          });
      return loop.getResult(0);
    };
    auto fill = scf::ForOp::create(
        b, loc, zero, size, one, ValueRange{zero, empty},
        [&](OpBuilder &nb, Location, Value i, ValueRange carried) {
          auto copy = scf::IfOp::create(
              nb, loc, selected(nb, i),
              [&](OpBuilder &t, Location) {
                Value out = copyRow(t, i, carried[0], carried[1]);
                scf::YieldOp::create(
                    t, loc, ValueRange{arith::AddIOp::create(t, loc, carried[0], one), out});
              },
              [&](OpBuilder &e, Location) { scf::YieldOp::create(e, loc, carried); });
          scf::YieldOp::create(nb, loc, copy.getResults());
        });
    return {fill.getResult(1), total};
  }

  /// The selected rows and their count from parallel generics: the mask's running count by a
  /// log-step scan (Hillis-Steele: ceil(log2 M) generics, the k-th adding the count 2^k places
  /// before), the total by a reduction, each result row n's source row by a binary search for
  /// the first running count above n, and the rows gathered. O(M log M) work, every generic
  /// parallel: for the GPU, where sequentialRows's loops would run on one thread.
  static std::pair<Value, Value> parallelRows(OpBuilder &b, Location loc, Value x, Value mask,
                                              Type element) {
    MLIRContext *ctx = b.getContext();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t m = xType.getDimSize(0);
    Type i32 = b.getI32Type();
    auto i32Const = [&](OpBuilder &nb, int64_t v) -> Value {
      return arith::ConstantIntOp::create(nb, loc, i32, v);
    };
    auto countsType = RankedTensorType::get({m}, i32);
    auto identity = AffineMap::getMultiDimIdentityMap(1, ctx);
    // A generic over [0, m) with no operand but its output: out[i] = body(i).
    auto overMask = [&](function_ref<Value(OpBuilder &, Value)> body) {
      Value empty = tensor::EmptyOp::create(b, loc, countsType.getShape(), i32);
      return linalg::GenericOp::create(
                 b, loc, TypeRange{countsType}, ValueRange{}, ValueRange{empty},
                 ArrayRef<AffineMap>{identity}, {utils::IteratorType::parallel},
                 [&](OpBuilder &nb, Location l, ValueRange) {
                   linalg::YieldOp::create(nb, l, body(nb, linalg::IndexOp::create(nb, l, 0)));
                 })
          .getResult(0);
    };
    auto extract = [&](OpBuilder &nb, Value from, Value i) {
      return tensor::ExtractOp::create(nb, loc, from, ValueRange{i}).getResult();
    };
    Value counts = overMask([&](OpBuilder &nb, Value i) {
      return arith::ExtUIOp::create(nb, loc, i32, extract(nb, mask, i)).getResult();
    });
    for (int64_t d = 1; d < m; d *= 2) {
      Value previous = counts;
      counts = overMask([&](OpBuilder &nb, Value i) {
        Value dConst = arith::ConstantIndexOp::create(nb, loc, d);
        Value far = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::uge, i, dConst);
        Value before =
            arith::SelectOp::create(nb, loc, far, arith::SubIOp::create(nb, loc, i, dConst), i);
        Value add =
            arith::SelectOp::create(nb, loc, far, extract(nb, previous, before), i32Const(nb, 0));
        return arith::AddIOp::create(nb, loc, extract(nb, previous, i), add).getResult();
      });
    }
    // The total: a reduction of the mask into a scalar the host reads for the result's size.
    auto scalarType = RankedTensorType::get({}, i32);
    Value zero = linalg::FillOp::create(
                     b, loc, i32Const(b, 0),
                     tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i32).getResult())
                     .getResult(0);
    Value sum = linalg::GenericOp::create(
                    b, loc, TypeRange{scalarType}, ValueRange{mask}, ValueRange{zero},
                    ArrayRef<AffineMap>{identity, AffineMap::get(1, 0, {}, ctx)},
                    {utils::IteratorType::reduction},
                    [&](OpBuilder &nb, Location l, ValueRange args) {
                      Value bit = arith::ExtUIOp::create(nb, l, i32, args[0]);
                      linalg::YieldOp::create(
                          nb, l, ValueRange{arith::AddIOp::create(nb, l, args[1], bit)});
                    })
                    .getResult(0);
    Value total = arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(), tensor::ExtractOp::create(b, loc, sum, ValueRange{}));
    // Result row n comes from the row where the running count first exceeds n: the number of
    // running counts at most n, found by halving steps from the largest power of two <= m.
    Value sources =
        linalg::GenericOp::create(
            b, loc, TypeRange{RankedTensorType::get({ShapedType::kDynamic}, i32)}, ValueRange{},
            ValueRange{tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{ShapedType::kDynamic}, i32,
                                               ValueRange{total})},
            ArrayRef<AffineMap>{identity}, {utils::IteratorType::parallel},
            [&](OpBuilder &nb, Location l, ValueRange) {
              Value n = arith::IndexCastUIOp::create(nb, l, i32, linalg::IndexOp::create(nb, l, 0));
              Value position = i32Const(nb, 0);
              for (int64_t step = int64_t(llvm::bit_floor(uint64_t(m))); step > 0; step /= 2) {
                Value candidate = arith::AddIOp::create(nb, l, position, i32Const(nb, step));
                Value last = arith::MinSIOp::create(nb, l, candidate, i32Const(nb, m));
                Value at = arith::IndexCastUIOp::create(
                    nb, l, nb.getIndexType(), arith::SubIOp::create(nb, l, last, i32Const(nb, 1)));
                Value fits =
                    arith::AndIOp::create(nb, l,
                                          arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                                                candidate, i32Const(nb, m)),
                                          arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                                                extract(nb, counts, at), n));
                position = arith::SelectOp::create(nb, l, fits, candidate, position);
              }
              linalg::YieldOp::create(nb, l, position);
            })
            .getResult(0);
    // The rows gathered: out[n, j] = x[sources[n], j].
    int64_t rank = xType.getRank();
    SmallVector<int64_t> shape = {ShapedType::kDynamic};
    if (rank == 2)
      shape.push_back(xType.getDimSize(1));
    auto outType = RankedTensorType::get(shape, element);
    Value rows =
        linalg::GenericOp::create(
            b, loc, TypeRange{outType}, ValueRange{sources},
            ValueRange{tensor::EmptyOp::create(b, loc, shape, element, ValueRange{total})},
            ArrayRef<AffineMap>{AffineMap::get(rank, 0, getAffineDimExpr(0, ctx)),
                                AffineMap::getMultiDimIdentityMap(rank, ctx)},
            SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              SmallVector<Value> at = {
                  arith::IndexCastUIOp::create(nb, l, nb.getIndexType(), args[0])};
              if (rank == 2)
                at.push_back(linalg::IndexOp::create(nb, l, 1));
              linalg::YieldOp::create(nb, l, Value(tensor::ExtractOp::create(nb, l, x, at)));
            })
            .getResult(0);
    return {rows, total};
  }

  bool parallel;
};

} // namespace

void dynamir::populateDynScanLoweringPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns, bool parallelCompress) {
  patterns.add<ScanLowering<CumsumOp>, ScanLowering<CumprodOp>, ScanLowering<CummaxOp>,
               ScanLowering<CumminOp>>(converter, patterns.getContext());
  patterns.add<CompressLowering>(converter, patterns.getContext(), parallelCompress);
}
