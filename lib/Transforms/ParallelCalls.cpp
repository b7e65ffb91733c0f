//===- ParallelCalls.cpp - parallel loops as calls to the runtime's pool --===//
//
// OpenMP's lowering of a parallel loop calls libomp (`__kmpc_fork_call`), whose worker threads
// are a pool of their own. Next to torch, whose ops run on the libgomp it ships, the two pools
// took the cores from each other: right after a torch op (its workers still spinning), an LSTM
// cell's graph took 1.68 ms on 2 threads against 0.23 on one. This pass outlines each parallel
// region into a function of (data, thread, threads) that runs its share of the loop, and calls
//
//   void dynamir_parallel(ptr function, ptr data, i64 threads)
//
// which the runtime runs on the OpenMP pool the process already has (torch's libgomp, else
// libomp): one pool for torch's ops and the graph's loops.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNPARALLELCALLS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kRuntimeFunction = "dynamir_parallel";

/// The one worksharing loop of `region` (an omp.parallel's) when the region is the form
/// convert-scf-to-openmp makes of a one-dimensional scf.parallel: straight-line ops around an
/// omp.wsloop without clauses over a one-dimensional, exclusive omp.loop_nest whose body has
/// no OpenMP op of its own. Anything else (reductions, nested regions) stays OpenMP.
omp::LoopNestOp outlinableLoop(omp::ParallelOp region) {
  if (region->getNumOperands() != (region.getNumThreads() ? 1 : 0) ||
      !region.getRegion().hasOneBlock())
    return {};
  omp::LoopNestOp found;
  for (Operation &op : region.getRegion().front()) {
    if (auto wsloop = dyn_cast<omp::WsloopOp>(op)) {
      auto nest = dyn_cast<omp::LoopNestOp>(wsloop.getWrappedLoop());
      if (found || wsloop->getNumOperands() != 0 || !nest || nest.getNumLoops() != 1 ||
          nest.getLoopInclusive())
        return {};
      found = nest;
      continue;
    }
    if (isa<omp::TerminatorOp>(op))
      continue;
    if (op.getNumRegions() != 0 || isa<omp::OpenMPDialect>(op.getDialect()))
      return {};
  }
  if (!found)
    return {};
  WalkResult nested = found.getRegion().walk([&](Operation *op) {
    if (isa<omp::OpenMPDialect>(op->getDialect()) &&
        !(isa<omp::YieldOp>(op) && op->getParentOp() == found))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return nested.wasInterrupted() ? omp::LoopNestOp() : found;
}

/// Whether `op` is a constant the outlined function makes again instead of receiving it: what
/// LLVM knows of it (a constant trip count, a constant factor) then survives the outlining.
bool rematerializable(Operation *op) {
  return op &&
         isa<LLVM::ConstantOp, LLVM::ZeroOp, LLVM::PoisonOp, LLVM::UndefOp, LLVM::AddressOfOp>(op);
}

struct ParallelCallsPass : dynamir::impl::DynParallelCallsBase<ParallelCallsPass> {
  using Base::Base;

  /// The runtime function's declaration, added once.
  LLVM::LLVMFuncOp runtimeFunction(ModuleOp module) {
    if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(kRuntimeFunction))
      return fn;
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    return LLVM::LLVMFuncOp::create(
        b, module.getLoc(), kRuntimeFunction,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    {ptr, ptr, IntegerType::get(ctx, 64)}));
  }

  /// Replaces `region`, whose loop is `loop`, by a call of the runtime with a function named
  /// `name` that runs thread `t` of `n`'s chunk of the loop's iterations: ceil(trip / n)
  /// consecutive ones, as OpenMP's static schedule.
  void outline(omp::ParallelOp region, omp::LoopNestOp loop, StringRef name) {
    auto module = region->getParentOfType<ModuleOp>();
    auto caller = region->getParentOfType<LLVM::LLVMFuncOp>();
    MLIRContext *ctx = module.getContext();
    Location loc = region.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);

    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(region.getRegion(), used);
    SmallVector<Value> passed;
    SmallVector<Operation *> remade;
    for (Value v : used) {
      if (rematerializable(v.getDefiningOp()))
        remade.push_back(v.getDefiningOp());
      else
        passed.push_back(v);
    }
    SmallVector<Type> fields = llvm::map_to_vector(passed, [](Value v) { return v.getType(); });
    auto frame = LLVM::LLVMStructType::getLiteral(ctx, fields);

    // The caller: the captured values in a frame on its stack, then the call.
    OpBuilder b(ctx);
    b.setInsertionPointToStart(&caller.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
    Value data = LLVM::AllocaOp::create(b, loc, ptr, frame, one);
    b.setInsertionPoint(region);
    auto field = [&](OpBuilder &builder, Value base, unsigned i) {
      return LLVM::GEPOp::create(builder, loc, ptr, frame, base,
                                 ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    };
    for (auto [i, v] : llvm::enumerate(passed))
      LLVM::StoreOp::create(b, loc, v, field(b, data, i));
    Value threads =
        region.getNumThreads()
            ? LLVM::SExtOp::create(b, loc, i64, region.getNumThreads()).getResult()
            : LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(this->threads)).getResult();

    // The outlined function: (data, thread, threads).
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(
        b, loc, name, LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, i64, i64}),
        LLVM::Linkage::Internal);
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (Operation *op : remade)
      b.clone(*op, map);
    for (auto [i, v] : llvm::enumerate(passed))
      map.map(v, LLVM::LoadOp::create(b, loc, v.getType(), field(b, entry->getArgument(0), i)));
    Block *current = entry;
    for (Operation &op : region.getRegion().front()) {
      if (isa<omp::TerminatorOp>(op)) {
        LLVM::ReturnOp::create(b, loc, ValueRange{});
        continue;
      }
      if (!isa<omp::WsloopOp>(op)) {
        b.clone(op, map);
        continue;
      }
      // This thread's iterations [begin, end) of trip = ceil((ub - lb) / step), step > 0.
      Value lb = map.lookupOrDefault(loop.getLoopLowerBounds().front());
      Value ub = map.lookupOrDefault(loop.getLoopUpperBounds().front());
      Value step = map.lookupOrDefault(loop.getLoopSteps().front());
      Type type = lb.getType();
      auto constant = [&](int64_t v) { return LLVM::ConstantOp::create(b, loc, type, v); };
      auto toType = [&](Value v) -> Value {
        return type == i64 ? v : LLVM::TruncOp::create(b, loc, type, v).getResult();
      };
      auto smax = [&](Value x, Value y) { return LLVM::SMaxOp::create(b, loc, x, y); };
      auto smin = [&](Value x, Value y) { return LLVM::SMinOp::create(b, loc, x, y); };
      auto ceilDiv = [&](Value x, Value y) {
        Value biased = LLVM::SubOp::create(b, loc, LLVM::AddOp::create(b, loc, x, y), constant(1));
        return LLVM::SDivOp::create(b, loc, biased, y);
      };
      Value trip = smax(ceilDiv(LLVM::SubOp::create(b, loc, ub, lb), step), constant(0));
      Value chunk = ceilDiv(trip, toType(entry->getArgument(2)));
      Value begin = smin(LLVM::MulOp::create(b, loc, toType(entry->getArgument(1)), chunk), trip);
      Value end = smin(LLVM::AddOp::create(b, loc, begin, chunk), trip);

      Block *after = b.createBlock(&fn.getBody(), fn.getBody().end());
      Block *header = b.createBlock(after, {type}, {loc});
      Value i = header->getArgument(0);
      b.setInsertionPointToEnd(current);
      LLVM::BrOp::create(b, loc, ValueRange{begin}, header);
      b.setInsertionPointToEnd(header);
      Value iv = LLVM::AddOp::create(b, loc, lb, LLVM::MulOp::create(b, loc, i, step));
      map.map(loop.getRegion().getArgument(0), iv);
      loop.getRegion().cloneInto(&fn.getBody(), Region::iterator(after), map);
      Block *body = map.lookup(&loop.getRegion().front());
      Value more = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, i, end);
      LLVM::CondBrOp::create(b, loc, more, body, after);
      // Each iteration's end goes to the next.
      for (Block &block : llvm::make_range(Region::iterator(body), Region::iterator(after))) {
        auto yield = dyn_cast<omp::YieldOp>(block.getTerminator());
        if (!yield)
          continue;
        b.setInsertionPoint(yield);
        Value next = LLVM::AddOp::create(b, loc, i, constant(1));
        LLVM::BrOp::create(b, loc, ValueRange{next}, header);
        yield.erase();
      }
      current = after;
      b.setInsertionPointToEnd(after);
    }

    b.setInsertionPoint(region);
    Value function = LLVM::AddressOfOp::create(b, loc, fn);
    LLVM::CallOp::create(b, loc, runtimeFunction(module), ValueRange{function, data, threads});
    region.erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<omp::ParallelOp, omp::LoopNestOp>> regions;
    module.walk([&](omp::ParallelOp region) {
      if (region->getParentOfType<omp::ParallelOp>())
        return;
      if (omp::LoopNestOp loop = outlinableLoop(region))
        regions.push_back({region, loop});
    });
    llvm::DenseMap<Operation *, unsigned> outlined; // per function, to name them
    for (auto [region, loop] : regions) {
      auto caller = region->getParentOfType<LLVM::LLVMFuncOp>();
      outline(region, loop, (caller.getName() + "_parallel" + Twine(outlined[caller]++)).str());
    }
  }
};
} // namespace
