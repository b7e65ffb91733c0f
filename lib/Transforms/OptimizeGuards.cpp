//===- OptimizeGuards.cpp - hoist, merge, simplify and order guards -------===//

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNOPTIMIZEGUARDS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {
struct OptimizeGuardsPass : dynamir::impl::DynOptimizeGuardsBase<OptimizeGuardsPass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    // The guard patterns are the dyn canonicalizations for guards; running only them keeps the
    // pass from rewriting the compute ops.
    RewritePatternSet set(ctx);
    ctx->getLoadedDialect<DynDialect>()->getCanonicalizationPatterns(set);
    TensorMatchGuardOp::getCanonicalizationPatterns(set, ctx);
    TypeMatchGuardOp::getCanonicalizationPatterns(set, ctx);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    getOperation()->walk([&](FunctionOpInterface func) {
      if (!func.isExternal() && failed(optimize(func)))
        signalPassFailure();
    });
  }

private:
  LogicalResult optimize(FunctionOpInterface func) {
    MLIRContext *ctx = &getContext();
    // Only the guard patterns run: no folding or region simplification of the compute ops.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(func, patterns, config)))
      return func.emitError("guard optimization did not converge");

    // All guards now lead the entry block: order them by cost.
    Block &entry = func.getFunctionBody().front();
    SmallVector<GuardOpInterface> guards;
    for (Operation &op : entry) {
      if (auto guard = dyn_cast<GuardOpInterface>(op))
        guards.push_back(guard);
      else if (!op.hasTrait<OpTrait::ConstantLike>())
        break;
    }
    // Ties keep program order (the op's position in the block), so the output is deterministic.
    llvm::sort(guards, [](GuardOpInterface a, GuardOpInterface b) {
      if (a.getCost() != b.getCost())
        return a.getCost() < b.getCost();
      return a->isBeforeInBlock(b);
    });
    for (GuardOpInterface guard : llvm::reverse(guards))
      guard->moveBefore(&entry, entry.begin());
    Builder builder(ctx);
    SmallVector<Attribute> summary;
    for (GuardOpInterface guard : guards)
      summary.push_back(describeGuard(builder, guard));
    func->setAttr("dyn.guards", builder.getArrayAttr(summary));
    return success();
  }

  /// One guard as a dictionary: its kind, its inherent attributes, and for tensor matches the
  /// checked type and the function argument that carries the object.
  static DictionaryAttr describeGuard(Builder &builder, Operation *op) {
    NamedAttrList fields(op->getAttrDictionary());
    StringRef kind = op->getName().stripDialect();
    kind.consume_front("guard.");
    fields.set("kind", builder.getStringAttr(kind));
    if (auto tensor = dyn_cast<TensorMatchGuardOp>(op)) {
      fields.set("type", TypeAttr::get(tensor.getValue().getType()));
      fields.set("arg",
                 builder.getI64IntegerAttr(cast<BlockArgument>(tensor.getValue()).getArgNumber()));
    }
    return fields.getDictionary(builder.getContext());
  }

  FrozenRewritePatternSet patterns;
};
} // namespace
