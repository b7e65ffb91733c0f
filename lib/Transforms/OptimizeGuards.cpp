//===- OptimizeGuards.cpp - hoist, merge, simplify and order guards -------===//

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
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
  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *ctx = &getContext();

    // The guard patterns are the dyn canonicalizations for guards; running only them keeps the
    // pass from rewriting the compute ops.
    RewritePatternSet patterns(ctx);
    ctx->getLoadedDialect<DynDialect>()->getCanonicalizationPatterns(patterns);
    TensorMatchGuardOp::getCanonicalizationPatterns(patterns, ctx);
    TypeMatchGuardOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(func, std::move(patterns)))) {
      func.emitError("guard optimization did not converge");
      return signalPassFailure();
    }

    // All guards now lead the entry block: order them by cost, keeping program order among
    // equals so the output is deterministic.
    Block &entry = func.getFunctionBody().front();
    SmallVector<GuardOpInterface> guards;
    for (Operation &op : entry) {
      auto guard = dyn_cast<GuardOpInterface>(op);
      if (!guard)
        break;
      guards.push_back(guard);
    }
    llvm::stable_sort(guards, [](GuardOpInterface a, GuardOpInterface b) {
      return a.getCost() < b.getCost();
    });
    Builder builder(ctx);
    SmallVector<Attribute> summary;
    Operation *insertionPoint = guards.empty() ? nullptr : &entry.front();
    for (GuardOpInterface guard : guards) {
      Operation *op = guard.getOperation();
      if (op != insertionPoint)
        op->moveBefore(insertionPoint);
      else
        insertionPoint = op->getNextNode();
      summary.push_back(describeGuard(builder, op, entry));
    }
    func->setAttr("dyn.guards", builder.getArrayAttr(summary));
  }

private:
  /// One guard as a dictionary: its kind, its inherent attributes, and for tensor matches the
  /// checked type and the function argument that carries the object.
  static DictionaryAttr describeGuard(Builder &builder, Operation *op, Block &entry) {
    NamedAttrList fields(op->getAttrDictionary());
    StringRef kind = op->getName().stripDialect();
    kind.consume_front("guard.");
    fields.set("kind", builder.getStringAttr(kind));
    if (auto tensor = dyn_cast<TensorMatchGuardOp>(op)) {
      fields.set("type", TypeAttr::get(tensor.getValue().getType()));
      fields.set("arg", builder.getI64IntegerAttr(
                            cast<BlockArgument>(tensor.getValue()).getArgNumber()));
    }
    return fields.getDictionary(builder.getContext());
  }
};
} // namespace
