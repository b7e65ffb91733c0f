//===- SplitGraphs.cpp - traced functions to graphs and a host program ----===//

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNSPLITGRAPHS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {

/// Compute ops inside `region` (recursively), the cost measure of a branch.
unsigned countComputeOps(Region &region) {
  unsigned count = 0;
  region.walk([&](Operation *op) {
    if (!op->hasTrait<OpTrait::IsTerminator>() && !isa<ConstantOp>(op))
      ++count;
  });
  return count;
}

/// Whether a branch computes 0-d values alone (Python numbers and the bools that pick a
/// string: `total += v` under `if v > 0:`), which cost less on the device than a host sync.
bool scalarsOnly(IfOp op) {
  auto zeroDimensional = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getRank() == 0;
  };
  if (!llvm::all_of(op.getResultTypes(), zeroDimensional))
    return false;
  WalkResult walk = op->walk([&](Operation *inner) {
    return llvm::all_of(inner->getResultTypes(), zeroDimensional) ? WalkResult::advance()
                                                                  : WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

class Splitter {
public:
  Splitter(func::FuncOp host, SymbolTable &symbols, bool capture, unsigned maxDeviceOps)
      : host(host), symbols(symbols), capture(capture), maxDeviceOps(maxDeviceOps) {}

  void run() {
    splitBlock(host.getBody().front());
    host->setAttr("dyn.host", UnitAttr::get(host.getContext()));
  }

private:
  bool keepOnDevice(IfOp op) {
    if (capture || scalarsOnly(op))
      return true;
    return maxDeviceOps > 0 &&
           countComputeOps(op.getThenRegion()) + countComputeOps(op.getElseRegion()) <=
               maxDeviceOps;
  }

  /// Host ops stay in the host program; everything else is device compute.
  bool isHostOp(Operation *op) {
    if (auto ifOp = dyn_cast<IfOp>(op))
      return !keepOnDevice(ifOp);
    return isa<GuardOpInterface, ItemOp, ToBoolOp, CheckOp, SourceOp, func::CallOp, scf::IfOp>(
               op) ||
           op->hasTrait<OpTrait::IsTerminator>();
  }

  void splitBlock(Block &block) {
    SmallVector<Operation *> run;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      // Constants are not graph inputs or outputs: every graph that uses one gets its own copy
      // (below), and the host keeps the original only if a host op uses it.
      if (op.hasTrait<OpTrait::ConstantLike>())
        continue;
      if (!isHostOp(&op)) {
        run.push_back(&op);
        continue;
      }
      outline(run);
      run.clear();
      if (auto ifOp = dyn_cast<IfOp>(op))
        splitIf(ifOp);
    }
    for (Operation &op : llvm::make_early_inc_range(block))
      if (op.hasTrait<OpTrait::ConstantLike>() && op.use_empty())
        op.erase();
  }

  /// The host side of a data-dependent branch: read the predicate (the one host sync), branch,
  /// and run one graph per side.
  void splitIf(IfOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value predicate = ToBoolOp::create(b, loc, op.getPredicate());
    auto scfIf = scf::IfOp::create(b, loc, op.getResultTypes(), predicate,
                                   /*addThenBlock=*/true, /*addElseBlock=*/true);
    for (auto [from, to] : {std::pair(&op.getThenRegion(), &scfIf.getThenRegion()),
                            std::pair(&op.getElseRegion(), &scfIf.getElseRegion())}) {
      Block *target = &to->front();
      target->clear(); // the builder's implicit yield, if any
      target->getOperations().splice(target->end(), from->front().getOperations());
      auto yield = cast<YieldOp>(target->getTerminator());
      OpBuilder yb(yield);
      SmallVector<Value> values = ownTracedValues(yield, yb);
      scf::YieldOp::create(yb, yield.getLoc(), values);
      yield.erase();
      splitBlock(*target);
    }
    op.replaceAllUsesWith(scfIf.getResults());
    op.erase();
  }

  /// The values a side hands out, as objects of the kind the tracer marked: an array the trace
  /// made that a fold turned into a caller's argument (`np.where(c, x, x)` is `x`), or one the
  /// side made that a fold turned into a value from outside the side or that the side hands
  /// out twice (eagerly a new object each), is copied in the side's graph.
  SmallVector<Value> ownTracedValues(YieldOp yield, OpBuilder &b) {
    SmallVector<Value> values(yield.getValues());
    auto copy = [&](int64_t position) {
      Value v = values[position];
      auto copied =
          CastOp::create(b, yield.getLoc(), v,
                         TypeAttr::get(cast<RankedTensorType>(v.getType()).getElementType()));
      copied.setCopy(true);
      values[position] = copied;
    };
    auto callers = [&](Value v) {
      return isa<BlockArgument>(v) && v.getParentBlock() == &host.getBody().front();
    };
    for (int64_t position : yield.getTraced().value_or(ArrayRef<int64_t>()))
      if (callers(values[position]))
        copy(position);
    Region *side = yield->getParentRegion();
    for (int64_t position : yield.getFresh().value_or(ArrayRef<int64_t>())) {
      Value v = values[position];
      if (v.getParentRegion() != side ||
          llvm::is_contained(ArrayRef(values).take_front(position), v))
        copy(position);
    }
    return values;
  }

  /// Moves a contiguous run of device ops into a new graph function and calls it in their
  /// place. Inputs are the values the run uses from outside; outputs are the values used after.
  void outline(ArrayRef<Operation *> ops) {
    if (ops.empty())
      return;
    llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
    auto isInside = [&](Operation *op) {
      for (; op; op = op->getParentOp())
        if (inside.contains(op))
          return true;
      return false;
    };
    llvm::SetVector<Value> inputs;
    llvm::SetVector<Operation *> constants;
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          Operation *owner = def ? def : operand.getParentBlock()->getParentOp();
          if (isInside(owner))
            continue;
          if (def && def->hasTrait<OpTrait::ConstantLike>())
            constants.insert(def);
          else
            inputs.insert(operand);
        }
      });
    SmallVector<Value> outputs;
    for (Operation *op : ops)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUses(),
                         [&](OpOperand &use) { return !isInside(use.getOwner()); }))
          outputs.push_back(result);

    // The graph function, next to the host program.
    MLIRContext *ctx = host.getContext();
    // Graphs follow the host program in the order they run.
    OpBuilder mb(host);
    mb.setInsertionPointAfter(lastGraph ? lastGraph.getOperation() : host.getOperation());
    SmallVector<Type> inputTypes, outputTypes;
    for (Value v : inputs)
      inputTypes.push_back(v.getType());
    for (Value v : outputs)
      outputTypes.push_back(v.getType());
    Location loc = ops.front()->getLoc();
    auto graph = func::FuncOp::create(mb, loc, (host.getName() + "_graph" + Twine(count++)).str(),
                                      FunctionType::get(ctx, inputTypes, outputTypes));
    graph.setPrivate();
    graph->setAttr("dyn.graph", UnitAttr::get(ctx));
    symbols.insert(graph, mb.getInsertionPoint()); // renames on a clash
    lastGraph = graph;
    Block *body = graph.addEntryBlock();
    IRMapping mapping;
    for (auto [input, arg] : llvm::zip(inputs, body->getArguments()))
      mapping.map(input, arg);
    OpBuilder gb = OpBuilder::atBlockEnd(body);
    for (Operation *constant : constants)
      gb.clone(*constant, mapping);
    for (Operation *op : ops)
      gb.clone(*op, mapping);
    SmallVector<Value> returned;
    for (Value v : outputs)
      returned.push_back(mapping.lookup(v));
    func::ReturnOp::create(gb, loc, returned);

    // The call replaces the run.
    OpBuilder hb(ops.front());
    auto call = func::CallOp::create(hb, loc, graph, inputs.getArrayRef());
    for (auto [output, result] : llvm::zip(outputs, call.getResults()))
      output.replaceUsesWithIf(result, [&](OpOperand &use) { return !isInside(use.getOwner()); });
    for (Operation *op : llvm::reverse(ops))
      op->erase();
  }

  func::FuncOp host;
  SymbolTable &symbols;
  bool capture;
  unsigned maxDeviceOps;
  unsigned count = 0;
  func::FuncOp lastGraph;
};

struct SplitGraphsPass : dynamir::impl::DynSplitGraphsBase<SplitGraphsPass> {
  using DynSplitGraphsBase::DynSplitGraphsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    bool capture = captureControlFlow || module->hasAttr("dyn.capture_control_flow");
    SmallVector<func::FuncOp> traced;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !func->hasAttr("dyn.graph") && !func->hasAttr("dyn.host"))
        traced.push_back(func);
    for (func::FuncOp func : traced)
      Splitter(func, symbols, capture, maxDeviceBranchOps).run();
  }
};

} // namespace
