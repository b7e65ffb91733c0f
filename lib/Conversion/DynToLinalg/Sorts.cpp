//===- Sorts.cpp - short sorts as ranks -----------------------------------===//
//
// dyn.sort is a call of the runtime's sort, which GPU graphs do not have: a mixture of experts'
// torch.topk over its experts kept the whole layer off the GPU. Along an axis of a few elements,
// an element's place in its sorted lane is its rank, the number of elements of the lane that
// sort before it: smaller ones (larger ones in a descending sort; NaN is greater than every
// number), and equal ones that come before it in the lane, since the sort is stable. The ranks
// are a permutation of the lane's places, so each place takes the one element whose rank it
// is. Two generics, which vectorize on the CPU and map to threads on the GPU.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Conversion/DynToLinalg/DynToLinalg.h"

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynScalar.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

/// Lanes of at most this many elements sort as ranks: n comparisons per element, against the
/// runtime sort's call and n log n.
constexpr int64_t kMaxRankSortLength = 16;

bool dynamir::sortsAsRanks(SortOp op) {
  auto type = cast<RankedTensorType>(op.getX().getType());
  return type.hasStaticShape() && type.getDimSize(op.getAxis()) <= kMaxRankSortLength;
}

namespace {
/// Whether `lhs` sorts strictly before `rhs` by value alone: lhs < rhs ascending, lhs > rhs
/// descending, NaN greater than every number; booleans false before true.
Value precedes(OpBuilder &b, Location loc, Value lhs, Value rhs, bool descending) {
  if (isa<FloatType>(lhs.getType())) {
    auto nan = [&](Value v) {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v).getResult();
    };
    auto number = [&](Value v) {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, v, v).getResult();
    };
    Value ordered = arith::CmpFOp::create(
        b, loc, descending ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, lhs, rhs);
    Value byNaN = descending ? arith::AndIOp::create(b, loc, nan(lhs), number(rhs))
                             : arith::AndIOp::create(b, loc, number(lhs), nan(rhs));
    return arith::OrIOp::create(b, loc, ordered, byNaN);
  }
  bool isBool = lhs.getType().isInteger(1);
  arith::CmpIPredicate predicate =
      descending ? (isBool ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                 : (isBool ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
  return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
}

/// Whether `lhs` and `rhs` are equal for the sort: -0.0 and 0.0 are, and so are two NaNs.
Value sortEqual(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (!isa<FloatType>(lhs.getType()))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, rhs);
  Value equal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lhs, rhs);
  Value bothNaN = arith::AndIOp::create(
      b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, lhs, lhs),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, rhs, rhs));
  return arith::OrIOp::create(b, loc, equal, bothNaN);
}

/// A dyn.sort along a short axis of a tensor of static shape, with signless keys (unsigned
/// ones come here flipped into signed order, populateDynSignednessConversion).
struct ShortSortLowering : OpConversionPattern<SortOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(SortOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!sortsAsRanks(op) || isUnsigned(op.getX().getType()))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getX();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    bool descending = op.getDescending();
    Type i64 = rewriter.getI64Type();
    auto filled = [&](RankedTensorType t, TypedAttr value) {
      Value empty = tensor::EmptyOp::create(rewriter, loc, t.getShape(), t.getElementType());
      Value constant = arith::ConstantOp::create(rewriter, loc, value);
      return linalg::FillOp::create(rewriter, loc, constant, empty).getResult(0);
    };
    // Loops: the lane's dimensions, then one more (`rank`) that runs along the axis again.
    SmallVector<AffineExpr> here, there;
    for (int64_t d = 0; d < rank; ++d) {
      here.push_back(getAffineDimExpr(d, ctx));
      there.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    }
    AffineMap hereMap = AffineMap::get(rank + 1, 0, here, ctx);
    AffineMap thereMap = AffineMap::get(rank + 1, 0, there, ctx);
    SmallVector<utils::IteratorType> iterators(rank + 1, utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;

    // rank[i] = #{j : x[j] sorts before x[i], or equals it and j < i}.
    auto rankType = RankedTensorType::get(type.getShape(), i64);
    Value ranks =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{rankType}, ValueRange{x, x},
            ValueRange{filled(rankType, rewriter.getI64IntegerAttr(0))},
            {hereMap, thereMap, hereMap}, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value i = linalg::IndexOp::create(b, l, axis),
                    j = linalg::IndexOp::create(b, l, rank);
              Value earlier = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, j, i);
              Value tie = arith::AndIOp::create(b, l, sortEqual(b, l, args[1], args[0]), earlier);
              Value before =
                  arith::OrIOp::create(b, l, precedes(b, l, args[1], args[0], descending), tie);
              Value one = arith::ExtUIOp::create(b, l, i64, before);
              linalg::YieldOp::create(b, l, ValueRange{arith::AddIOp::create(b, l, args[2], one)});
            })
            .getResult(0);

    // values[r] = x[i] and indices[r] = i for the i whose rank is r.
    auto placed = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type, rankType}, ValueRange{x, ranks},
        ValueRange{filled(type, rewriter.getZeroAttr(type.getElementType())),
                   filled(rankType, rewriter.getI64IntegerAttr(0))},
        {thereMap, thereMap, hereMap, hereMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value r = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, axis));
          Value i = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, rank));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, args[1], r);
          linalg::YieldOp::create(b, l,
                                  ValueRange{arith::SelectOp::create(b, l, hit, args[0], args[2]),
                                             arith::SelectOp::create(b, l, hit, i, args[3])});
        });
    rewriter.replaceOp(op, placed.getResults());
    return success();
  }
};
} // namespace

void dynamir::populateDynSortLoweringPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<ShortSortLowering>(converter, patterns.getContext());
}
