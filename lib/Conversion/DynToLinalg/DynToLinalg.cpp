//===- DynToLinalg.cpp - dyn compute ops to linalg/tensor/arith/math ------===//
//
// Broadcasting is encoded in indexing maps rather than materialized, so upstream
// elementwise fusion sees a chain of generics it can merge into one loop nest.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Conversion/Passes.h"

#include "dynamir/Conversion/DynToLinalg/DynToLinalg.h"

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynScalar.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dynamir {
#define GEN_PASS_DEF_CONVERTDYNTOLINALG
#include "dynamir/Conversion/Passes.h.inc"
} // namespace dynamir

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isFloat(Type t) { return isa<FloatType>(t); }

Value constantIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The size of dimension `d` of `v` as an index value.
Value dimSize(OpBuilder &b, Location loc, Value v, int64_t d) {
  RankedTensorType type = tensorType(v);
  if (!type.isDynamicDim(d))
    return constantIndex(b, loc, type.getDimSize(d));
  return tensor::DimOp::create(b, loc, v, d);
}

/// Sizes of the dynamic dimensions of `result`, read from the first operand whose aligned
/// dimension is dynamic (numpy alignment: trailing dimensions line up).
SmallVector<Value> broadcastDynamicSizes(OpBuilder &b, Location loc, RankedTensorType result,
                                         ValueRange operands) {
  SmallVector<Value> sizes;
  int64_t rank = result.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    if (!result.isDynamicDim(d))
      continue;
    Value size;
    for (Value operand : operands) {
      RankedTensorType type = tensorType(operand);
      int64_t od = d - (rank - type.getRank());
      if (od >= 0 && type.isDynamicDim(od)) {
        size = tensor::DimOp::create(b, loc, operand, od);
        break;
      }
    }
    assert(size && "a dynamic result dimension comes from a dynamic operand dimension");
    sizes.push_back(size);
  }
  return sizes;
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), dynamicSizes);
}

/// Reads `operand` broadcast into a result of rank `resultRank` with shape `resultShape`.
AffineMap broadcastMap(RankedTensorType operand, ArrayRef<int64_t> resultShape, MLIRContext *ctx) {
  int64_t rank = resultShape.size();
  int64_t offset = rank - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < operand.getRank(); ++i) {
    bool stretched = operand.getDimSize(i) == 1 && resultShape[offset + i] != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(offset + i, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

using BodyBuilder = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// One all-parallel linalg.generic computing `body` on the broadcast operands.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType result, ValueRange inputs,
                  BodyBuilder body) {
  MLIRContext *ctx = b.getContext();
  Value init = emptyTensor(b, loc, result, broadcastDynamicSizes(b, loc, result, inputs));
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(tensorType(input), result.getShape(), ctx));
  maps.push_back(AffineMap::getMultiDimIdentityMap(result.getRank(), ctx));
  SmallVector<utils::IteratorType> iterators(result.getRank(), utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{result}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args.drop_back()));
      });
  return generic.getResult(0);
}

/// a + b for elements of any kind; float sums may be reassociated (`reassoc`).
Value addElements(OpBuilder &b, Location loc, Value a, Value acc, bool reassoc = false) {
  if (isFloat(a.getType()))
    return arith::AddFOp::create(
        b, loc, a, acc, reassoc ? arith::FastMathFlags::reassoc : arith::FastMathFlags::none);
  if (isa<ComplexType>(a.getType()))
    return complex::AddOp::create(b, loc, a, acc);
  return arith::AddIOp::create(b, loc, a, acc);
}

/// The identity of max (lowest) or min (highest) for the signless `type`, whose integers are
/// unsigned if `isUnsigned`.
Value extremeConstant(OpBuilder &b, Location loc, Type type, bool lowest, bool isUnsigned) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, type,
        b.getFloatAttr(type, APFloat::getInf(ft.getFloatSemantics(), /*Negative=*/lowest)));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt v = isUnsigned
                ? (lowest ? APInt::getMinValue(width) : APInt::getMaxValue(width))
                : (lowest ? APInt::getSignedMinValue(width) : APInt::getSignedMaxValue(width));
  return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, v));
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Every elementwise op (unary, binary, comparison, where, cast): one broadcasting generic.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rewriter) const override {
    auto elementwiseOp = dyn_cast<ElementwiseOpInterface>(op);
    if (!elementwiseOp)
      return failure();
    auto result = cast<RankedTensorType>(signlessType(op->getResult(0).getType()));
    Value lowered = elementwise(rewriter, op->getLoc(), result, operands,
                                [&](OpBuilder &b, Location loc, ValueRange args) {
                                  return elementwiseOp.buildScalar(b, loc, args);
                                });
    rewriter.replaceOp(op, lowered);
    return success();
  }
};

/// Reduces `input` over `dims` with `combine`, starting from `initValue`; the result has
/// `resultType` (reduced dimensions dropped, or kept as size 1).
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims,
             RankedTensorType resultType, Value initValue,
             function_ref<Value(OpBuilder &, Location, Value, Value)> combine,
             function_ref<Value(OpBuilder &, Location, Value)> produce = nullptr) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType inType = tensorType(input);
  int64_t rank = inType.getRank();
  bool keepdim = resultType.getRank() == rank;
  SmallVector<Value> dynamicSizes;
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(dims, d);
    if (reduced && keepdim)
      outExprs.push_back(getAffineConstantExpr(0, ctx));
    if (!reduced) {
      outExprs.push_back(getAffineDimExpr(d, ctx));
      if (inType.isDynamicDim(d))
        dynamicSizes.push_back(tensor::DimOp::create(b, loc, input, d));
    }
  }
  Value init = emptyTensor(b, loc, resultType, dynamicSizes);
  init = linalg::FillOp::create(b, loc, initValue, init).getResult(0);
  // Nothing to reduce: the identity. (As a generic, a body that folds to ignore its
  // accumulator, `0 * acc` of a product of zeros, lets canonicalization drop the fill of the
  // init, and a loop of no iterations then leaves the result unwritten.)
  if (llvm::any_of(dims, [&](int64_t d) { return inType.getDimSize(d) == 0; }))
    return init;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d)
    iterators.push_back(llvm::is_contained(dims, d) ? utils::IteratorType::reduction
                                                    : utils::IteratorType::parallel);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, ValueRange{input}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value element = produce ? produce(nb, nloc, args[0]) : args[0];
        linalg::YieldOp::create(nb, nloc, combine(nb, nloc, element, args[1]));
      });
  return generic.getResult(0);
}

/// Number of elements in the reduced dimensions, as a scalar of the float or complex `type`.
Value reducedCount(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims, Type type) {
  Value count = constantIndex(b, loc, 1);
  for (int64_t d : dims)
    count = arith::MulIOp::create(b, loc, count, dimSize(b, loc, input, d));
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  return convertScalar(b, loc, asInt, b.getI64Type(), type);
}

template <typename OpTy> struct ReductionLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpTy::Adaptor;

  LogicalResult matchAndRewrite(OpTy op, Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    ArrayRef<int64_t> dims = op.getDims();
    auto resultType = cast<RankedTensorType>(signlessType(op.getType()));
    Type et = tensorType(x).getElementType();
    bool fp = isFloat(et);
    bool isUnsignedX = isUnsigned(op.getX().getType());
    OpBuilder &b = rewriter;
    // Float sums may reassociate: LLVM then keeps vector partial sums, far faster and more
    // accurate than one serial float accumulator (1% off at 10M elements); dyn-split-reductions
    // adds a second level of blocking for numpy's accuracy at any size.
    auto add = [](OpBuilder &nb, Location l, Value a, Value acc) -> Value {
      return addElements(nb, l, a, acc, /*reassoc=*/true);
    };
    Value lowered;
    if constexpr (std::is_same_v<OpTy, SumOp> || std::is_same_v<OpTy, MeanOp>) {
      if (auto complexType = dyn_cast<ComplexType>(et)) {
        // A complex sum is the sums of its parts (numpy sums the parts pairwise): two float
        // reductions that vectorize and that dyn-split-reductions blocks. One serial complex
        // accumulator was 28x further from the exact sum on 2^22 elements.
        Type part = complexType.getElementType();
        auto sumOf = [&](bool imaginary) {
          return reduce(b, loc, x, dims, resultType.clone(part), scalarConstant(b, loc, part, 0),
                        add, [imaginary](OpBuilder &nb, Location l, Value z) -> Value {
                          if (imaginary)
                            return complex::ImOp::create(nb, l, z);
                          return complex::ReOp::create(nb, l, z);
                        });
        };
        // Over no dimension (a complex mean's fold declines), the sum is x itself: not a
        // generic without reduction loops, an accumulator that fused consumers add into.
        lowered = dims.empty()
                      ? x
                      : elementwise(b, loc, resultType, {sumOf(false), sumOf(true)},
                                    [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                                      return complex::CreateOp::create(nb, l, et, args[0], args[1]);
                                    });
      } else {
        lowered = reduce(b, loc, x, dims, resultType, scalarConstant(b, loc, et, 0), add);
      }
      if constexpr (std::is_same_v<OpTy, MeanOp>) {
        Value count = reducedCount(b, loc, x, dims, et);
        lowered = elementwise(b, loc, resultType, ValueRange{lowered},
                              [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                                // numpy divides a complex sum as complex numbers.
                                if (isa<ComplexType>(et))
                                  return ComplexDivScalar::create(nb, l, args[0], count);
                                return arith::DivFOp::create(nb, l, args[0], count);
                              });
      }
    } else if constexpr (std::is_same_v<OpTy, ProdOp>) {
      lowered = reduce(b, loc, x, dims, resultType, scalarConstant(b, loc, et, 1),
                       [fp](OpBuilder &nb, Location l, Value a, Value acc) -> Value {
                         if (fp)
                           return arith::MulFOp::create(nb, l, a, acc);
                         if (isa<ComplexType>(a.getType()))
                           return ComplexMulScalar::create(nb, l, acc, a);
                         return arith::MulIOp::create(nb, l, a, acc);
                       });
    } else if constexpr (std::is_same_v<OpTy, MaxOp> || std::is_same_v<OpTy, MinOp>) {
      constexpr bool isMax = std::is_same_v<OpTy, MaxOp>;
      lowered = reduce(b, loc, x, dims, resultType, extremeConstant(b, loc, et, isMax, isUnsignedX),
                       [fp, isUnsignedX](OpBuilder &nb, Location l, Value a, Value acc) -> Value {
                         if (fp)
                           return isMax ? Value(arith::MaximumFOp::create(nb, l, a, acc))
                                        : Value(arith::MinimumFOp::create(nb, l, a, acc));
                         if (isUnsignedX)
                           return isMax ? Value(arith::MaxUIOp::create(nb, l, a, acc))
                                        : Value(arith::MinUIOp::create(nb, l, a, acc));
                         return isMax ? Value(arith::MaxSIOp::create(nb, l, a, acc))
                                      : Value(arith::MinSIOp::create(nb, l, a, acc));
                       });
    } else {
      lowered = lowerArgReduction(b, loc, x, dims, resultType, std::is_same_v<OpTy, ArgMaxOp>,
                                  op.getX().getType());
    }
    rewriter.replaceOp(op, lowered);
    return success();
  }

  /// argmax/argmin: a generic with two accumulators, the extreme value and its row-major
  /// index within the reduced dimensions (`dynType`, x's dyn type, says whether integers compare
  /// unsigned). The first extreme wins; NaN is the extreme.
  static Value lowerArgReduction(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims,
                                 RankedTensorType resultType, bool isMax, Type dynType) {
    MLIRContext *ctx = b.getContext();
    RankedTensorType inType = tensorType(x);
    Type et = inType.getElementType();
    int64_t rank = inType.getRank();
    bool keepdim = resultType.getRank() == rank;
    SmallVector<Value> dynamicSizes;
    SmallVector<AffineExpr> outExprs;
    SmallVector<Value> reducedSizes;
    for (int64_t d = 0; d < rank; ++d) {
      bool reduced = llvm::is_contained(dims, d);
      if (reduced) {
        reducedSizes.push_back(dimSize(b, loc, x, d));
        if (keepdim)
          outExprs.push_back(getAffineConstantExpr(0, ctx));
      } else {
        outExprs.push_back(getAffineDimExpr(d, ctx));
        if (inType.isDynamicDim(d))
          dynamicSizes.push_back(tensor::DimOp::create(b, loc, x, d));
      }
    }
    auto valueType = resultType.clone(et);
    Value values =
        linalg::FillOp::create(b, loc, extremeConstant(b, loc, et, isMax, isUnsigned(dynType)),
                               emptyTensor(b, loc, valueType, dynamicSizes))
            .getResult(0);
    Value indices = linalg::FillOp::create(b, loc, scalarConstant(b, loc, b.getI64Type(), 0),
                                           emptyTensor(b, loc, resultType, dynamicSizes))
                        .getResult(0);
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < rank; ++d)
      iterators.push_back(llvm::is_contained(dims, d) ? utils::IteratorType::reduction
                                                      : utils::IteratorType::parallel);
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx), outMap, outMap};
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{valueType, resultType}, ValueRange{x}, ValueRange{values, indices}, maps,
        iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
          Value v = args[0], best = args[1], bestIndex = args[2];
          Value flat = constantIndex(nb, l, 0);
          size_t r = 0;
          for (int64_t d = 0; d < rank; ++d) {
            if (!llvm::is_contained(dims, d))
              continue;
            flat = arith::MulIOp::create(nb, l, flat, reducedSizes[r++]);
            flat = arith::AddIOp::create(nb, l, flat, linalg::IndexOp::create(nb, l, d));
          }
          Value index = arith::IndexCastOp::create(nb, l, nb.getI64Type(), flat);
          Value better;
          if (isFloat(et)) {
            Value strictly = arith::CmpFOp::create(
                nb, l, isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, v, best);
            Value vNaN = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, v, v);
            Value bestNaN = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, best, best);
            Value notBestNaN =
                arith::XOrIOp::create(nb, l, bestNaN, arith::ConstantIntOp::create(nb, l, 1, 1));
            better = arith::AndIOp::create(nb, l, notBestNaN,
                                           arith::OrIOp::create(nb, l, strictly, vNaN));
          } else {
            better = arith::CmpIOp::create(
                nb, l,
                integerPredicate(isMax ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt,
                                 dynType),
                v, best);
          }
          // Index 0 starts as the answer; an equal later element never replaces it.
          Value first =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, flat, constantIndex(nb, l, 0));
          Value take = arith::OrIOp::create(nb, l, better, first);
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::SelectOp::create(nb, l, take, v, best),
                         arith::SelectOp::create(nb, l, take, index, bestIndex)});
        });
    return generic.getResult(1);
  }
};

/// softmax / log_softmax: the row maxima, e = exp(x - max), the sums of e, then e times the
/// sums' reciprocals (torch's CPU kernel) or x - max - log(sum). One exp per element: written
/// as one loop nest for the sums and one for the result, each computed its own exp (8.4 ms for
/// a 4096x1024 softmax on one core, against torch.compile's 3.1). A log_softmax's e has one
/// user, the sums, into which dyn-fuse-elementwise fuses it.
template <typename OpTy> struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpTy::Adaptor;

  LogicalResult matchAndRewrite(OpTy op, Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    RankedTensorType type = tensorType(x);
    Type et = type.getElementType();
    int64_t dim = static_cast<int64_t>(op.getDim());
    SmallVector<int64_t> keptShape(type.getShape());
    keptShape[dim] = 1;
    auto keptType = type.clone(keptShape);
    OpBuilder &b = rewriter;
    Value max = reduce(b, loc, x, {dim}, keptType, extremeConstant(b, loc, et, true, false),
                       [](OpBuilder &nb, Location l, Value a, Value acc) -> Value {
                         return arith::MaximumFOp::create(nb, l, a, acc);
                       });
    Value e = elementwise(
        b, loc, type, ValueRange{x, max}, [](OpBuilder &nb, Location l, ValueRange args) -> Value {
          return math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, args[0], args[1]));
        });
    Value sum = reduce(b, loc, e, {dim}, keptType, scalarConstant(b, loc, et, 0),
                       [](OpBuilder &nb, Location l, Value a, Value acc) {
                         return addElements(nb, l, a, acc, /*reassoc=*/true);
                       });
    Value result;
    if constexpr (std::is_same_v<OpTy, SoftmaxOp>) {
      result = elementwise(b, loc, type, ValueRange{e, sum},
                           [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                             return arith::DivFOp::create(nb, l, args[0], args[1]);
                           });
    } else {
      result = elementwise(b, loc, type, ValueRange{x, max, sum},
                           [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                             Value shifted = arith::SubFOp::create(nb, l, args[0], args[1]);
                             return arith::SubFOp::create(nb, l, shifted,
                                                          math::LogOp::create(nb, l, args[2]));
                           });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct BroadcastToLowering : OpConversionPattern<BroadcastToOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(BroadcastToOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto out = cast<RankedTensorType>(signlessType(op.getType()));
    if (!out.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "broadcast_to a dynamic shape");
    rewriter.replaceOp(op,
                       elementwise(rewriter, op.getLoc(), out, adaptor.getX(),
                                   [](OpBuilder &, Location, ValueRange args) { return args[0]; }));
    return success();
  }
};

/// The position of the i64 index `i` along a dimension of `size` elements (an i64): a
/// negative index counts from the end, and one still outside [0, size) is clamped into it
/// (dyn.check reports indices that were out of bounds).
Value indexInBounds(OpBuilder &b, Location loc, Value i, Value size) {
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value one = arith::ConstantIntOp::create(b, loc, 1, 64);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  Value wrapped =
      arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, i, size), i);
  Value last = arith::SubIOp::create(b, loc, size, one);
  Value clamped =
      arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, wrapped, last), zero);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
}

/// gather: one generic over the result that reads the indices through a map and `x` with
/// tensor.extract at the wrapped and clamped index (never outside `x`; dyn.check reports
/// indices that were out of bounds).
struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    Location loc = op.getLoc();
    Value x = adaptor.getX(), indices = adaptor.getIndices();
    auto out = cast<RankedTensorType>(signlessType(op.getType()));
    int64_t rank = out.getRank(), axis = op.getAxis();
    int64_t k = tensorType(indices).getRank();
    // Result dimension d is x's d before the axis, the indices' d - axis, then x's d - k + 1.
    auto source = [&](int64_t d) -> std::pair<Value, int64_t> {
      if (d < axis)
        return {x, d};
      if (d < axis + k)
        return {indices, d - axis};
      return {x, d - k + 1};
    };
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d)
      if (out.isDynamicDim(d)) {
        auto [v, vd] = source(d);
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, v, vd));
      }
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = axis; d < axis + k; ++d)
      indexExprs.push_back(getAffineDimExpr(d, ctx));
    Value size = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                            dimSize(rewriter, loc, x, axis));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{out}, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, loc, out, dynamicSizes)},
        {AffineMap::get(rank, 0, indexExprs, ctx), AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < tensorType(x).getRank(); ++d)
            coords.push_back(d == axis
                                 ? indexInBounds(nb, l, args[0], size)
                                 : Value(linalg::IndexOp::create(nb, l, d < axis ? d : d + k - 1)));
          linalg::YieldOp::create(nb, l, Value(tensor::ExtractOp::create(nb, l, x, coords)));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// scatter: a loop nest over the indices, in order, then over the other dimensions, that
/// stores (or adds) each element of `updates` into the destination it carries: numpy's order,
/// so the last of repeated indices wins and accumulated floats round as in np.add.at.
/// Bufferization updates the destination in place. With `parallel` (for the GPU, which would
/// run that nest on one thread) and another dimension than the axis, the loops are swapped: an
/// scf.forall over the other dimensions, each of its iterations owning the destination's line
/// along the axis there and running over the indices in order, which keeps numpy's order for
/// every element.
struct ScatterLowering : OpConversionPattern<ScatterOp> {
  ScatterLowering(const TypeConverter &converter, MLIRContext *ctx, bool parallel)
      : OpConversionPattern(converter, ctx), parallel(parallel) {}

  LogicalResult matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dest = adaptor.getDest(), indices = adaptor.getIndices();
    RankedTensorType type = tensorType(dest);
    int64_t axis = op.getAxis();
    // The other dimensions' extents.
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis) {
        lbs.push_back(constantIndex(rewriter, loc, 0));
        ubs.push_back(dimSize(rewriter, loc, dest, d));
        steps.push_back(constantIndex(rewriter, loc, 1));
      }
    Value count = dimSize(rewriter, loc, indices, 0);
    Value size = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                            dimSize(rewriter, loc, dest, axis));
    // `into` (the destination, or its line along the axis when `line`) with update k at the
    // other coordinates `other` stored (or added) at index k's position.
    auto update = [&](OpBuilder &b, Location l, Value k, ValueRange other, Value into,
                      bool line) -> Value {
      Value at = indexInBounds(b, l, tensor::ExtractOp::create(b, l, indices, k), size);
      SmallVector<Value> from(other), to(other);
      from.insert(from.begin() + axis, k);
      to.insert(to.begin() + axis, at);
      Value v = tensor::ExtractOp::create(b, l, adaptor.getUpdates(), from);
      if (line)
        to = {at};
      if (op.getAccumulate())
        v = addElements(b, l, tensor::ExtractOp::create(b, l, into, to), v);
      return tensor::InsertOp::create(b, l, v, into, to);
    };
    Value result;
    if (parallel && !ubs.empty()) {
      auto forall = scf::ForallOp::create(rewriter, loc, getAsOpFoldResult(ubs), ValueRange{dest},
                                          std::nullopt);
      OpBuilder b = OpBuilder::atBlockBegin(forall.getBody());
      // The destination's line along the axis at this iteration's other coordinates.
      SmallVector<OpFoldResult> offsets, sizes, strides(type.getRank(), b.getIndexAttr(1));
      ValueRange ivs = forall.getInductionVars();
      for (int64_t d = 0, i = 0; d < type.getRank(); ++d) {
        offsets.push_back(d == axis ? OpFoldResult(b.getIndexAttr(0)) : OpFoldResult(ivs[i++]));
        sizes.push_back(d == axis ? tensor::getMixedSize(b, loc, dest, axis)
                                  : OpFoldResult(b.getIndexAttr(1)));
      }
      auto lineType = RankedTensorType::get({type.getDimSize(axis)}, type.getElementType());
      Value line = tensor::ExtractSliceOp::create(b, loc, lineType, forall.getRegionOutArgs()[0],
                                                  offsets, sizes, strides);
      auto loop = scf::ForOp::create(
          b, loc, constantIndex(b, loc, 0), count, constantIndex(b, loc, 1), ValueRange{line},
          [&](OpBuilder &nb, Location l, Value k, ValueRange carried) {
            scf::YieldOp::create(nb, l, update(nb, l, k, ivs, carried[0], /*line=*/true));
          });
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(b, loc, loop.getResult(0), forall.getRegionOutArgs()[0],
                                            offsets, sizes, strides);
      result = forall.getResult(0);
    } else {
      lbs.insert(lbs.begin(), constantIndex(rewriter, loc, 0));
      ubs.insert(ubs.begin(), count);
      steps.insert(steps.begin(), constantIndex(rewriter, loc, 1));
      scf::LoopNest nest = scf::buildLoopNest(
          rewriter, loc, lbs, ubs, steps, ValueRange{dest},
          [&](OpBuilder &b, Location l, ValueRange ivs, ValueRange carried) -> scf::ValueVector {
            return {update(b, l, ivs[0], ivs.drop_front(), carried[0], /*line=*/false)};
          });
      result = nest.results[0];
    }
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  bool parallel;
};

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto value = cast<DenseElementsAttr>(op.getValue());
    if (auto complexType = dyn_cast<ComplexType>(value.getElementType())) {
      rewriter.replaceOp(op, complexConstant(rewriter, op.getLoc(), value, complexType));
      return success();
    }
    Type element = signlessType(value.getElementType());
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, element == value.getElementType() ? value : value.bitcast(element));
    return success();
  }

  /// A complex constant as its parts' float constants joined elementwise: arith constants
  /// hold no complex elements, and LLVM globals of complex ones do not translate.
  static Value complexConstant(OpBuilder &b, Location loc, DenseElementsAttr value,
                               ComplexType complexType) {
    auto type = cast<RankedTensorType>(value.getType());
    auto partType = type.clone(complexType.getElementType());
    SmallVector<APFloat> re, im;
    auto add = [&](const std::complex<APFloat> &v) {
      re.push_back(v.real());
      im.push_back(v.imag());
    };
    if (value.isSplat())
      add(value.getSplatValue<std::complex<APFloat>>());
    else
      for (std::complex<APFloat> v : value.getValues<std::complex<APFloat>>())
        add(v);
    auto part = [&](ArrayRef<APFloat> values) -> Value {
      return arith::ConstantOp::create(b, loc,
                                       value.isSplat() ? DenseElementsAttr::get(partType, values[0])
                                                       : DenseElementsAttr::get(partType, values));
    };
    return elementwise(b, loc, type, {part(re), part(im)},
                       [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                         return complex::CreateOp::create(nb, l, complexType, args[0], args[1]);
                       });
  }
};

struct FullLowering : OpConversionPattern<FullOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(FullOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(signlessType(op.getType()));
    TypedAttr attr = cast<TypedAttr>(op.getValue());
    if (auto integer = dyn_cast<IntegerAttr>(attr))
      attr = IntegerAttr::get(type.getElementType(), integer.getValue());
    Value value = arith::ConstantOp::create(rewriter, loc, attr);
    Value init = emptyTensor(rewriter, loc, type, {});
    rewriter.replaceOp(op, linalg::FillOp::create(rewriter, loc, value, init).getResult(0));
    return success();
  }
};

struct ArangeLowering : OpConversionPattern<ArangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ArangeOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type et = op.getType().getElementType();
    auto out = cast<RankedTensorType>(signlessType(op.getType()));
    double start = op.getStart().convertToDouble(), step = op.getStep().convertToDouble();
    Value init = emptyTensor(rewriter, loc, out, {});
    MLIRContext *ctx = rewriter.getContext();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{out}, ValueRange{}, ValueRange{init},
        {AffineMap::getMultiDimIdentityMap(1, ctx)},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &nb, Location l, ValueRange) {
          Value i =
              arith::IndexCastOp::create(nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, 0));
          Value f = arith::SIToFPOp::create(nb, l, nb.getF64Type(), i);
          Value v = arith::AddFOp::create(
              nb, l, scalarConstant(nb, l, nb.getF64Type(), start),
              arith::MulFOp::create(nb, l, f, scalarConstant(nb, l, nb.getF64Type(), step)));
          linalg::YieldOp::create(nb, l, convertScalar(nb, l, v, nb.getF64Type(), et));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct ItemLowering : OpConversionPattern<ItemOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ItemOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, adaptor.getX(), ValueRange{});
    return success();
  }
};

struct ToBoolLowering : OpConversionPattern<ToBoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ToBoolOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value v = tensor::ExtractOp::create(rewriter, op.getLoc(), adaptor.getX(), ValueRange{});
    rewriter.replaceOp(op, convertScalar(rewriter, op.getLoc(), v,
                                         getElementTypeOrSelf(op.getX().getType()),
                                         rewriter.getI1Type()));
    return success();
  }
};

struct ConvertDynToLinalgPass : dynamir::impl::ConvertDynToLinalgBase<ConvertDynToLinalgPass> {
  using ConvertDynToLinalgBase::ConvertDynToLinalgBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<scf::SCFDialect>();
    // The dyn ops the runtime reads or computes stay; the other dialects' ops are legal once
    // their types are signless (populateDynSignednessConversion).
    TypeConverter converter;
    RewritePatternSet patterns(ctx);
    populateDynSignednessConversion(converter, patterns, target);
    patterns.add<ElementwiseLowering>(converter, ctx);
    patterns.add<ReductionLowering<SumOp>, ReductionLowering<MeanOp>, ReductionLowering<ProdOp>,
                 ReductionLowering<MaxOp>, ReductionLowering<MinOp>, ReductionLowering<ArgMaxOp>,
                 ReductionLowering<ArgMinOp>, SoftmaxLowering<SoftmaxOp>,
                 SoftmaxLowering<LogSoftmaxOp>, BroadcastToLowering, GatherLowering,
                 ConstantLowering, FullLowering, ArangeLowering, ItemLowering, ToBoolLowering>(
        converter, ctx);
    populateDynShapeLoweringPatterns(converter, patterns);
    populateDynContractionLoweringPatterns(converter, patterns);
    populateDynScanLoweringPatterns(converter, patterns, parallelIndexing);
    patterns.add<ScatterLowering>(converter, ctx, parallelIndexing);
    populateDynSortLoweringPatterns(converter, patterns);
    populateDynWindowLoweringPatterns(converter, patterns);
    populateDynControlFlowLoweringPatterns(converter, patterns);
    lowerDynLoops(getOperation());
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      return signalPassFailure();
    // The pipelines run the pass on modules, where the libm functions that bodies call are
    // declared.
    if (auto module = dyn_cast<ModuleOp>(getOperation()))
      declareLibmCalls(module);
  }
};

} // namespace
