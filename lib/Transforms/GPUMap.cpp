//===- GPUMap.cpp - Dynamir graphs onto NVIDIA GPUs ----------------------===//
//
// dyn-gpu-map: the elementwise and row-reduction kernels of GPUKernels.cpp first, then what
// is left with a parallel loop (column reductions, gathers, scatters' parallel loops) to
// upstream's parallel-loop path, and what has none (an argmin of a whole array, a scatter
// into one dimension) into a single GPU thread. Host-side allocations, copies and reads
// become gpu.alloc / gpu.dealloc / gpu.memcpy: every buffer of a GPU graph lives on the
// device. An `if` kept in the graph launches both sides' kernels, each guarded by the
// predicate in device memory.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNGPUMAP
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// A loop nest without results whose body is scalar loads, stores and arithmetic, with at
/// least one store.
bool isScalarLoopNest(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return false;
  bool stores = false;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    stores |= isa<memref::StoreOp>(op);
    if (isa<scf::ForOp, scf::YieldOp, memref::LoadOp, memref::StoreOp>(op) ||
        isa<arith::ArithDialect>(op->getDialect()))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return stores && !walk.wasInterrupted();
}

/// Host-side buffers of a GPU graph live on the device; the host reads one (the predicate of
/// an `if` kept in the graph) through a small host copy. Fails on a host read of a large
/// buffer, which no graph of Dynamir's should need.
LogicalResult moveBuffersToDevice(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    // (A load in the body of a linalg op or a parallel loop left to the parallel-loop path, a
    // gather of indices as many as only the graph knows or a scatter's, runs in its kernel.)
    if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp, memref::LoadOp>(op) &&
        !op->getParentOfType<gpu::LaunchOp>() && !op->getParentOfType<linalg::LinalgOp>() &&
        !op->getParentOfType<scf::ParallelOp>())
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      auto device = gpu::AllocOp::create(b, alloc.getLoc(), alloc.getType(), Type(), ValueRange(),
                                         alloc.getDynamicSizes(), alloc.getSymbolOperands());
      alloc.replaceAllUsesWith(device.getMemref());
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      gpu::DeallocOp::create(b, dealloc.getLoc(), Type(), ValueRange(), dealloc.getMemref());
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      gpu::MemcpyOp::create(b, copy.getLoc(), Type(), ValueRange(), copy.getTarget(),
                            copy.getSource());
    } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
      MemRefType type = load.getMemRefType();
      if (!type.hasStaticShape() || type.getNumElements() > 64 || !type.getLayout().isIdentity())
        return load.emitOpError("the host would read a large device buffer");
      Value host = memref::AllocaOp::create(b, load.getLoc(), type);
      gpu::MemcpyOp::create(b, load.getLoc(), Type(), ValueRange(), host, load.getMemref());
      gpu::WaitOp::create(b, load.getLoc(), Type(), ValueRange());
      Value value = memref::LoadOp::create(b, load.getLoc(), host, load.getIndices());
      load.replaceAllUsesWith(value);
    }
    op->erase();
  }
  return success();
}

/// Wraps the body of a kernel in `if (*predicate == expected)`: the kernel is launched either
/// way and does nothing on the side of a branch not taken.
void guardKernel(gpu::LaunchOp launchOp, Value predicate, bool expected) {
  Block &body = launchOp.getBody().front();
  Operation *terminator = body.getTerminator();
  OpBuilder b(&body, body.begin());
  Location loc = launchOp.getLoc();
  Value value = memref::LoadOp::create(b, loc, predicate, ValueRange());
  Value taken =
      expected ? value
               : arith::XOrIOp::create(b, loc, value, arith::ConstantIntOp::create(b, loc, 1, 1));
  auto ifOp = scf::IfOp::create(b, loc, taken, /*withElseRegion=*/false);
  Block *then = ifOp.thenBlock();
  for (Operation &op : llvm::make_early_inc_range(
           llvm::make_range(std::next(Block::iterator(ifOp)), Block::iterator(terminator))))
    op.moveBefore(then->getTerminator());
}

/// An `if` kept in a GPU graph (capture_control_flow) whose predicate the host would copy out
/// and wait for: both sides' kernels are launched, each guarded by the predicate in device
/// memory, and each side copies its results (with a guarded kernel) into buffers allocated
/// before the `if`. No host round trip; the side not taken costs empty launches. Only for ifs
/// whose sides hold nothing but kernels and buffer management, and whose results are whole
/// buffers each side allocates.
void keepBranchesOnDevice(Operation *root, int64_t blockSize, unsigned &kernels) {
  SmallVector<scf::IfOp> ifs;
  root->walk([&](scf::IfOp ifOp) {
    if (!ifOp->getParentOfType<gpu::LaunchOp>() && ifOp.getNumResults() > 0 && ifOp.elseBlock())
      ifs.push_back(ifOp);
  });
  for (scf::IfOp ifOp : ifs) {
    // The predicate: host copy of a device i1 (moveBuffersToDevice's pattern).
    auto load = ifOp.getCondition().getDefiningOp<memref::LoadOp>();
    auto host = load ? load.getMemref().getDefiningOp<memref::AllocaOp>() : nullptr;
    gpu::MemcpyOp copyOut;
    if (host)
      for (Operation *user : host->getUsers())
        if (auto memcpy = dyn_cast<gpu::MemcpyOp>(user); memcpy && memcpy.getDst() == host)
          copyOut = memcpy;
    if (!copyOut)
      continue;
    Value devicePredicate = copyOut.getSrc();
    // Each side: kernels, buffers and casts only; each result a cast of a buffer the side
    // allocated.
    auto simple = [](Block *block) {
      return llvm::all_of(block->without_terminator(), [](Operation &op) {
        return isa<gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp, memref::CastOp, arith::ConstantOp>(
            op);
      });
    };
    auto allocatedBuffer = [](Value v, Block *block) -> Value {
      if (auto cast = v.getDefiningOp<memref::CastOp>())
        v = cast.getSource();
      auto alloc = v.getDefiningOp<gpu::AllocOp>();
      return alloc && alloc->getBlock() == block && dynamir::isPlainBuffer(v) ? v : Value();
    };
    Block *sides[2] = {ifOp.thenBlock(), ifOp.elseBlock()};
    bool ok = simple(sides[0]) && simple(sides[1]);
    for (unsigned i = 0; ok && i < ifOp.getNumResults(); ++i)
      ok = isa<MemRefType>(ifOp.getResult(i).getType()) &&
           allocatedBuffer(ifOp.thenYield().getOperand(i), sides[0]) &&
           allocatedBuffer(ifOp.elseYield().getOperand(i), sides[1]);
    if (!ok)
      continue;

    OpBuilder b(ifOp);
    Location loc = ifOp.getLoc();
    SmallVector<Value> results;
    for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
      auto type =
          cast<MemRefType>(allocatedBuffer(ifOp.thenYield().getOperand(i), sides[0]).getType());
      results.push_back(
          gpu::AllocOp::create(b, loc, type, Type(), ValueRange(), ValueRange(), ValueRange())
              .getMemref());
    }
    for (unsigned side = 0; side < 2; ++side) {
      Block *block = sides[side];
      bool expected = side == 0;
      for (auto launchOp : llvm::to_vector(block->getOps<gpu::LaunchOp>()))
        guardKernel(launchOp, devicePredicate, expected);
      // Copy this side's results into the shared buffers (guarded too), then free its own.
      Operation *yield = block->getTerminator();
      for (auto [i, value] : llvm::enumerate(yield->getOperands())) {
        Value buffer = allocatedBuffer(value, block);
        OpBuilder at(yield);
        auto rank = cast<MemRefType>(buffer.getType()).getRank();
        AffineMap identity = at.getMultiDimIdentityMap(rank);
        auto copy = linalg::GenericOp::create(
            at, loc, TypeRange(), ValueRange{buffer}, ValueRange{results[i]},
            ArrayRef<AffineMap>{identity, identity},
            SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
            [](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(nb, l, args[0]);
            });
        if (failed(dynamir::mapElementwise(copy, blockSize, kernels)))
          llvm_unreachable("a copy between plain buffers always maps");
        auto copyKernel = cast<gpu::LaunchOp>(copy->getPrevNode());
        copy.erase();
        guardKernel(copyKernel, devicePredicate, expected);
        gpu::DeallocOp::create(at, loc, Type(), ValueRange(), buffer);
      }
      for (Operation &op : llvm::make_early_inc_range(block->without_terminator()))
        op.moveBefore(ifOp);
    }
    for (auto [result, buffer] : llvm::zip(ifOp.getResults(), results))
      result.replaceAllUsesWith(
          memref::CastOp::create(b, loc, result.getType(), buffer).getResult());
    ifOp.erase();
    // The copy out, the wait for it and the host read are gone with the host's need for them.
    if (!load->use_empty())
      continue;
    load.erase();
    if (!llvm::all_of(host->getUsers(), [&](Operation *user) { return user == copyOut; }))
      continue;
    if (auto wait = dyn_cast_or_null<gpu::WaitOp>(copyOut->getNextNode());
        wait && wait->getNumResults() == 0)
      wait.erase();
    copyOut.erase();
    host.erase();
  }
}

struct GPUMapPass : dynamir::impl::DynGPUMapBase<GPUMapPass> {
  using Base::Base;

  /// Named ops become generics (linalg.dot is a one-row reduction like any other; fills stay
  /// named, the reductions they start take them over), and copies between views (concatenate
  /// writes into slices of its result) become copy generics: gpu.memcpy only moves whole
  /// contiguous buffers.
  void prepare(Operation *root) {
    IRRewriter rewriter(root->getContext());
    SmallVector<linalg::LinalgOp> named;
    root->walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp, linalg::FillOp>(op) && op.hasPureBufferSemantics())
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    SmallVector<memref::CopyOp> copies;
    root->walk([&](memref::CopyOp copy) {
      auto contiguous = [](Value v) {
        auto type = dyn_cast<MemRefType>(v.getType());
        return type && type.getLayout().isIdentity();
      };
      if (!contiguous(copy.getSource()) || !contiguous(copy.getTarget()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      unsigned rank = cast<MemRefType>(copy.getSource().getType()).getRank();
      AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
      linalg::GenericOp::create(
          rewriter, copy.getLoc(), TypeRange(), ValueRange{copy.getSource()},
          ValueRange{copy.getTarget()}, ArrayRef<AffineMap>{identity, identity},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(b, loc, args[0]);
          });
      rewriter.eraseOp(copy);
    }
  }
  void runOnOperation() override {
    Operation *root = getOperation();
    // Complex elements reach the GPU pipeline's LLVM conversion as complex ops it does not
    // lower (the CPU pipeline runs complex-to-llvm): such a graph runs on the CPU backend's
    // terms, eagerly, with this reason.
    WalkResult complexElements = root->walk([](Operation *op) {
      for (Type t : op->getResultTypes())
        if (isa<ComplexType>(getElementTypeOrSelf(t))) {
          op->emitOpError("computes complex numbers, which GPU graphs do not have yet");
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (complexElements.wasInterrupted())
      return signalPassFailure();
    prepare(root);
    SmallVector<linalg::GenericOp> generics;
    root->walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics())
        generics.push_back(op);
    });
    unsigned kernels = 0;
    llvm::DenseSet<Operation *> fused;
    for (ArrayRef<linalg::GenericOp> chain : dynamir::rowChains(root)) {
      if (failed(dynamir::mapRowChain(chain, blockSize, kernels)))
        continue;
      for (linalg::GenericOp op : chain) {
        fused.insert(op);
        op.erase();
      }
    }
    for (linalg::GenericOp op : generics) {
      if (fused.contains(op))
        continue;
      if (succeeded(dynamir::mapElementwise(op, blockSize, kernels)) ||
          succeeded(dynamir::mapRowReduction(op, blockSize, kernels)))
        op.erase();
    }
    // Fills no reduction took over (the zeros a matrix product accumulates onto) are
    // elementwise kernels too.
    SmallVector<linalg::FillOp> fills;
    root->walk([&](linalg::FillOp fill) {
      if (fill.hasPureBufferSemantics())
        fills.push_back(fill);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::FillOp fill : fills) {
      rewriter.setInsertionPoint(fill);
      FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(rewriter, fill);
      if (succeeded(generic) && succeeded(dynamir::mapElementwise(*generic, blockSize, kernels)))
        rewriter.eraseOp(*generic);
    }
    // What is left goes through parallel loops, one thread per output element. An op with no
    // parallel loop (argmin of a whole array: two outputs) would stay host code reading
    // device memory: it runs as loops in a single GPU thread, slow but exact.
    SmallVector<linalg::LinalgOp> sequential;
    root->walk([&](linalg::LinalgOp op) {
      if (op.getNumParallelLoops() == 0 && op.getNumLoops() > 0 && op.hasPureBufferSemantics())
        sequential.push_back(op);
    });
    for (linalg::LinalgOp op : sequential) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto launchOp = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
      b.setInsertionPointToEnd(&launchOp.getBody().front());
      auto terminator = gpu::TerminatorOp::create(b, loc);
      op->moveBefore(terminator);
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToLoops(rewriter, op))) {
        op.emitOpError("could not be lowered to loops for the GPU");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
    // Loop nests of scalar loads and stores alone (a scatter into one dimension, which must
    // run in order; scatters with more are parallel loops over the rest, left to the
    // parallel-loop path) would be host code writing device memory: they run in a single GPU
    // thread too.
    SmallVector<scf::ForOp> scalarLoops;
    root->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, scf::ParallelOp>(op))
        return WalkResult::skip();
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop || !isScalarLoopNest(loop))
        return WalkResult::advance();
      scalarLoops.push_back(loop);
      return WalkResult::skip();
    });
    for (scf::ForOp loop : scalarLoops) {
      OpBuilder b(loop);
      Value one = arith::ConstantIndexOp::create(b, loop.getLoc(), 1);
      auto launchOp = gpu::LaunchOp::create(b, loop.getLoc(), one, one, one, one, one, one);
      b.setInsertionPointToEnd(&launchOp.getBody().front());
      loop->moveBefore(gpu::TerminatorOp::create(b, loop.getLoc()));
    }
    // The runtime's calls (dyn.cholesky, dyn.solve, dyn.sort) read host memory.
    WalkResult hostCalls = root->walk([](func::CallOp call) {
      StringRef callee = call.getCallee();
      if (callee != "dynamir_potrf" && callee != "dynamir_gesv" && callee != "dynamir_sort")
        return WalkResult::advance();
      call.emitOpError() << "calls " << (callee == "dynamir_sort" ? "the runtime's sort" : "LAPACK")
                         << ", which GPU graphs do not have";
      return WalkResult::interrupt();
    });
    if (hostCalls.wasInterrupted() || failed(moveBuffersToDevice(root)))
      return signalPassFailure();
    keepBranchesOnDevice(root, blockSize, kernels);
  }
};
} // namespace
