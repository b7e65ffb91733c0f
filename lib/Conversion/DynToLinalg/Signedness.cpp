//===- Signedness.cpp - unsigned dyn types to signless ones ----------------===//
//
// dyn types keep numpy's and torch's unsigned integers as MLIR's unsigned types (ui8), whose
// operations differ from signed ones (division, comparison, conversion, shifts); arith, linalg
// and the LLVM lowering compute on signless integers only. convert-dyn-to-linalg lowers each
// dyn op with the arith ops its operands' signedness asks for and every type to its signless
// twin (the dyn op patterns take their result types from dyn::signlessType); this file converts
// what is left: function boundaries, scf's structural ops, the ops already in the legal
// dialects, the host-side dyn ops the pass keeps, and dyn.sort.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Conversion/DynToLinalg/DynToLinalg.h"

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynScalar.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {

/// The dyn ops convert-dyn-to-linalg keeps: the host's (guards, checks, breaks, sources), which
/// the runtime reads, and those bufferization turns into calls of the runtime (short sorts
/// become generics instead).
bool isKept(Operation *op) {
  if (auto sort = dyn_cast<SortOp>(op))
    return !sortsAsRanks(sort);
  return isa<TensorMatchGuardOp, TypeMatchGuardOp, IdMatchGuardOp, ValueEqGuardOp, LenEqGuardOp,
             DictKeysGuardOp, DistinctGuardOp, GradModeGuardOp, CheckOp, GraphBreakOp, SourceOp,
             CholeskyOp, SolveOp, Conv2dOp>(op);
}

/// `x` (signless) with the sign bit of every element flipped: unsigned order becomes signed
/// order (0 is the smallest, 2^w - 1 the largest), and flipping again restores the value. A
/// dyn.bitxor, which the conversion lowers in turn.
Value flipSignBits(OpBuilder &b, Location loc, Value x) {
  auto element = cast<IntegerType>(cast<RankedTensorType>(x.getType()).getElementType());
  auto bit = DenseElementsAttr::get(RankedTensorType::get({}, element),
                                    APInt::getSignedMinValue(element.getWidth()));
  return BitXorOp::create(b, loc, x, ConstantOp::create(b, loc, bit));
}

/// dyn.sort of unsigned integers: the runtime sorts signed keys, so the keys are flipped into
/// signed order and back; the permutation is the same.
struct SortSignedness : OpConversionPattern<SortOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SortOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool flip = isUnsigned(op.getX().getType());
    if (!flip && sortsAsRanks(op))
      return failure(); // ShortSortLowering's

    Value keys = flip ? flipSignBits(rewriter, loc, adaptor.getX()) : adaptor.getX();
    auto sorted = SortOp::create(rewriter, loc, keys, op.getAxis(), op.getDescending());
    Value values = flip ? flipSignBits(rewriter, loc, sorted.getValues()) : sorted.getValues();
    rewriter.replaceOp(op, {values, sorted.getIndices()});
    return success();
  }
};

/// A kept dyn op or an op of a legal dialect with unsigned types: the same op on the converted
/// operands with signless result types (they compute nothing that depends on the signedness:
/// guards, checks, tensor.extract_slice, ...; dyn.sort has its own pattern, of a higher
/// benefit).
struct RetypeOp : ConversionPattern {
  RetypeOp(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/0, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rewriter) const override {
    if (op->getNumRegions() || getTypeConverter()->isLegal(op) ||
        (isa<DynDialect>(op->getDialect()) && !isKept(op)))
      return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), resultTypes)))
      return failure();
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes, op->getAttrs());
    rewriter.replaceOp(op, rewriter.create(state)->getResults());
    return success();
  }
};

} // namespace

void dynamir::populateDynSignednessConversion(TypeConverter &converter, RewritePatternSet &patterns,
                                              ConversionTarget &target) {
  converter.addConversion([](Type type) { return signlessType(type); });
  auto cast = [](OpBuilder &b, Type type, ValueRange inputs, Location loc) -> Value {
    return UnrealizedConversionCastOp::create(b, loc, type, inputs).getResult(0);
  };
  converter.addSourceMaterialization(cast);
  converter.addTargetMaterialization(cast);

  MLIRContext *ctx = patterns.getContext();
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
  populateCallOpTypeConversionPattern(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
  patterns.add<SortSignedness, RetypeOp>(converter, ctx);

  target.addDynamicallyLegalOp<func::FuncOp>([&converter](func::FuncOp f) {
    return converter.isSignatureLegal(f.getFunctionType()) && converter.isLegal(&f.getBody());
  });
  target.addDynamicallyLegalDialect<arith::ArithDialect, complex::ComplexDialect,
                                    linalg::LinalgDialect, math::MathDialect, tensor::TensorDialect,
                                    func::FuncDialect>(
      [&converter](Operation *op) { return converter.isLegal(op); });
  // Every other dyn op is lowered.
  target.addDynamicallyLegalDialect<DynDialect>(
      [&converter](Operation *op) { return isKept(op) && converter.isLegal(op); });
}
