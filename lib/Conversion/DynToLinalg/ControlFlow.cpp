//===- ControlFlow.cpp - dyn.if, dyn.for and dyn.while to scf -------------===//
//
// A dyn.if kept on the device becomes an scf.if on its extracted predicate (a conversion
// pattern), a dyn.for an scf.for over index bounds whose body first turns the induction
// variable back into the 0-d i64 tensor the traced body reads, and a dyn.while an scf.while
// that carries its predicate (rewrites before the conversion). The ops inside are converted by
// the other patterns.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Conversion/DynToLinalg/DynToLinalg.h"

#include "dynamir/Dialect/Dyn/DynOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {

Value extractScalar(OpBuilder &b, Location loc, Value tensor) {
  return tensor::ExtractOp::create(b, loc, tensor, ValueRange{});
}

struct IfLowering : OpConversionPattern<IfOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(IfOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value predicate = extractScalar(rewriter, loc, adaptor.getPredicate());
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), resultTypes)))
      return failure();
    auto scfIf = scf::IfOp::create(rewriter, loc, resultTypes, predicate,
                                   /*addThenBlock=*/false, /*addElseBlock=*/false);
    rewriter.inlineRegionBefore(op.getThenRegion(), scfIf.getThenRegion(),
                                scfIf.getThenRegion().end());
    rewriter.inlineRegionBefore(op.getElseRegion(), scfIf.getElseRegion(),
                                scfIf.getElseRegion().end());
    rewriter.replaceOp(op, scfIf.getResults());
    return success();
  }
};

struct YieldLowering : OpConversionPattern<YieldOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(YieldOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<scf::YieldOp>(op, adaptor.getValues());
    return success();
  }
};

} // namespace

void dynamir::populateDynControlFlowLoweringPatterns(const TypeConverter &converter,
                                                     RewritePatternSet &patterns) {
  patterns.add<IfLowering, YieldLowering>(converter, patterns.getContext());
}

namespace {
void lowerFor(ForOp op) {
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  auto toIndex = [&](Value tensor) {
    return arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                      extractScalar(rewriter, loc, tensor));
  };
  auto loop = scf::ForOp::create(rewriter, loc, toIndex(op.getLower()), toIndex(op.getUpper()),
                                 toIndex(op.getStep()), op.getInits());
  Block *body = loop.getBody();
  // The builder adds an empty yield only to a loop that carries nothing.
  if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
    rewriter.eraseOp(&body->back());
  rewriter.setInsertionPointToStart(body);
  Value index =
      arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), loop.getInductionVar());
  SmallVector<Value> arguments = {tensor::FromElementsOp::create(
      rewriter, loc, RankedTensorType::get({}, rewriter.getI64Type()), index)};
  arguments.append(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
  rewriter.inlineBlockBefore(&op.getBody().front(), body, body->end(), arguments);
  auto yield = cast<YieldOp>(body->getTerminator());
  rewriter.setInsertionPoint(yield);
  rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, yield.getValues());
  rewriter.replaceOp(op, loop.getResults());
}

/// The predicate travels with the carried values: the before region only tests it, the after
/// region is the body, which computes the next one.
void lowerWhile(WhileOp op) {
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  SmallVector<Value> inits = {extractScalar(rewriter, loc, op.getPredicate())};
  inits.append(op.getInits().begin(), op.getInits().end());
  TypeRange types = ValueRange(inits).getTypes();
  SmallVector<Location> locs(inits.size(), loc);
  auto loop = scf::WhileOp::create(rewriter, loc, types, inits);
  Block *before = rewriter.createBlock(&loop.getBefore(), {}, types, locs);
  scf::ConditionOp::create(rewriter, loc, before->getArgument(0), before->getArguments());
  Block *after = rewriter.createBlock(&loop.getAfter(), {}, types, locs);
  rewriter.inlineBlockBefore(&op.getBody().front(), after, after->end(),
                             after->getArguments().drop_front());
  auto yield = cast<YieldOp>(after->getTerminator());
  rewriter.setInsertionPoint(yield);
  SmallVector<Value> next(yield.getValues());
  next.front() = extractScalar(rewriter, loc, next.front());
  rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, next);
  rewriter.replaceOp(op, loop.getResults().drop_front());
}
} // namespace

void dynamir::lowerDynLoops(Operation *root) {
  // Before the conversion, a plain rewrite: the conversion then converts the ops in the loop's
  // body like any others (inlining a block with arguments inside a conversion pattern is not
  // something upstream's driver handles here).
  SmallVector<Operation *> loops;
  root->walk([&](Operation *op) {
    if (isa<ForOp, WhileOp>(op))
      loops.push_back(op);
  });
  for (Operation *op : llvm::reverse(loops)) { // inner loops first
    if (auto loop = dyn_cast<ForOp>(op))
      lowerFor(loop);
    else
      lowerWhile(cast<WhileOp>(op));
  }
}
