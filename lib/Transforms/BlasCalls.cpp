//===- BlasCalls.cpp - matrix products as calls to a runtime sgemm/dgemm --===//
//
// Loops from linalg do a matrix product at a fraction of what a BLAS does (no register
// blocking, no packing): `x @ W` ran at 0.19x numpy on the CPU, and a GPU kernel of one output
// per thread is further still from cuBLAS. This pass finds, after bufferization, the generics
// that compute C[m,n] += A[m,k] * B[k,n] (in any loop order, A or B possibly transposed in
// memory, with batch loops around it) on buffers whose rows are contiguous, and replaces each
// by a loop nest over the batch (none for a plain product) around a call to
//
//   void <function>(i64 transA, i64 transB, i64 M, i64 N, i64 K,
//                   i64 A, i64 lda, i64 B, i64 ldb, i64 C, i64 ldc)
//
// (pointers as integers, row-major, C accumulated: beta = 1, so a bias in the init stays), one
// function for f32 and one for f64. The runtime defines them: dynamir_sgemm and dynamir_dgemm
// (numpy's BLAS, hooks set after the graph library is loaded) for the CPU, dynamir_cuda_sgemm
// (cuBLAS, in libdynamir_cuda.so) for the GPU, whose f64 products stay loops.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Transforms/Passes.h"
#include "dynamir/Transforms/Products.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNBLAS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
using dynamir::ProductDims;

/// A buffer BLAS can read matrices of: `element`s, rank 2 or more, unit stride along the rows.
bool isBlasMatrix(Value v, Type element) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || type.getRank() < 2 || type.getElementType() != element)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) && strides.back() == 1;
}

/// A vector BLAS can read as a column: `element`s, a known positive stride (its leading
/// dimension; a reversed view's would be negative).
bool isBlasVector(Value v, Type element) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || type.getRank() != 1 || type.getElementType() != element)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(strides[0]) && strides[0] > 0;
}

/// Whether BLAS can read every operand of the product `op` as it is laid out.
bool blasReadable(linalg::LinalgOp op, const ProductDims &dims) {
  if (!dims.vector)
    return llvm::all_of(op->getOperands(), [&](Value v) { return isBlasMatrix(v, dims.element); });
  return isBlasMatrix(op.getDpsInputOperand(dims.matrix)->get(), dims.element) &&
         isBlasVector(op.getDpsInputOperand(1 - dims.matrix)->get(), dims.element) &&
         isBlasVector(op.getDpsInitOperand(0)->get(), dims.element);
}

struct BlasPass : dynamir::impl::DynBlasBase<BlasPass> {
  using Base::Base;

  /// The runtime function for products of `element`s; empty: they stay loops.
  std::string calleeName(Type element) const { return element.isF64() ? functionF64 : function; }

  /// Opens an scf.parallel of one iteration per thread and narrows the call's operands to the
  /// thread's rows of the product (its columns when it has more columns than rows): `m` or
  /// `n` become the part's size (0 for a part past the end) and the addresses move to its
  /// first row or column. Each part is its own BLAS call on one core.
  void splitAmongThreads(OpBuilder &b, Location loc, const ProductDims &dims,
                         ArrayRef<int64_t> outShape, int64_t elementBytes, Value &m, Value &n,
                         Value &a, Value &lda, Value &bm, Value &ldb, Value &c, Value &ldc) const {
    Type i64 = b.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i64, v);
    };
    int64_t rows = outShape[outShape.size() - 2], columns = outShape.back();
    bool byRows =
        ShapedType::isDynamic(columns) || (!ShapedType::isDynamic(rows) && rows >= columns);
    auto loop =
        scf::ParallelOp::create(b, loc, ValueRange{arith::ConstantIndexOp::create(b, loc, 0)},
                                ValueRange{arith::ConstantIndexOp::create(b, loc, threads)},
                                ValueRange{arith::ConstantIndexOp::create(b, loc, 1)});
    b.setInsertionPointToStart(loop.getBody());
    Value part = arith::IndexCastOp::create(b, loc, i64, loop.getInductionVars().front());
    Value &total = byRows ? m : n;
    // ceil(total / threads) per part; the last parts may be shorter or empty.
    Value perPart = arith::CeilDivSIOp::create(b, loc, total, constant(threads));
    Value first = arith::MulIOp::create(b, loc, part, perPart);
    Value left =
        arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, total, first), constant(0));
    total = arith::MinSIOp::create(b, loc, perPart, left);
    // Moves `address` by `first` rows or columns, `step` elements apart.
    auto advance = [&](Value &address, Value step) {
      Value elements = arith::MulIOp::create(b, loc, first, step);
      address = arith::AddIOp::create(
          b, loc, address, arith::MulIOp::create(b, loc, elements, constant(elementBytes)));
    };
    // Rows of C and of op(A); or columns of C and of op(B).
    if (byRows) {
      advance(a, dims.transposeA ? constant(1) : lda);
      advance(c, ldc);
    } else {
      advance(bm, dims.transposeB ? ldb : constant(1));
      advance(c, constant(1));
    }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Generics and named ops (linalg.matmul, which GPU graphs keep) alike.
    SmallVector<std::pair<linalg::LinalgOp, ProductDims>> products;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      std::optional<ProductDims> dims = dynamir::matchProduct(op);
      if (!dims || calleeName(dims->element).empty() || !blasReadable(op, *dims))
        return;
      // Small products stay loops: a call and BLAS's setup cost more than they save.
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::none_of(ranges, ShapedType::isDynamic) &&
          ranges[dims->m] * (dims->vector ? 1 : ranges[dims->n]) * ranges[dims->k] < minFlops)
        return;
      products.push_back({op, *dims});
    });
    if (products.empty())
      return;
    OpBuilder b(module.getBodyRegion());
    Type i64 = b.getI64Type();
    auto calleeFor = [&](Type element) {
      std::string name = calleeName(element);
      if (auto callee = module.lookupSymbol<func::FuncOp>(name))
        return callee;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      auto callee = func::FuncOp::create(b, module.getLoc(), name,
                                         b.getFunctionType(SmallVector<Type>(11, i64), {}));
      callee.setPrivate();
      return callee;
    };
    for (auto [op, dims] : products) {
      b.setInsertionPoint(op);
      // Shared out among the threads, unless inside a loop they already share
      // (dyn-fuse-product-operands'): there, one call.
      bool shared = threads > 1 && !op->getParentOfType<scf::ParallelOp>();
      Location loc = op.getLoc();
      int64_t elementBytes = dims.element.getIntOrFloatBitWidth() / 8;
      auto constant = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); };
      auto toI64 = [&](Value index) { return arith::IndexCastOp::create(b, loc, i64, index); };
      auto size = [&](Value buffer, int64_t dim) -> Value {
        return toI64(memref::DimOp::create(b, loc, buffer, dim));
      };
      // A buffer's first element's address and its first stride (a matrix's leading
      // dimension, a vector's step).
      auto start = [&](Value buffer) -> std::pair<Value, Value> {
        auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
        Value base = toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer));
        Value offset =
            arith::MulIOp::create(b, loc, toI64(meta.getOffset()), constant(elementBytes));
        return {arith::AddIOp::create(b, loc, base, offset), toI64(meta.getStrides()[0])};
      };
      if (dims.vector) { // C (M x 1) += op(A) (M x K) x (K x 1)
        Value vector = op.getDpsInputOperand(1 - dims.matrix)->get();
        Value out = op.getDpsInitOperand(0)->get();
        auto [a, lda] = start(op.getDpsInputOperand(dims.matrix)->get());
        auto [bm, ldb] = start(vector);
        auto [c, ldc] = start(out);
        Value m = size(out, 0), n = constant(1), k = size(vector, 0);
        if (shared)
          splitAmongThreads(b, loc, dims, {cast<MemRefType>(out.getType()).getDimSize(0), 1},
                            elementBytes, m, n, a, lda, bm, ldb, c, ldc);
        func::CallOp::create(
            b, loc, calleeFor(dims.element),
            ValueRange{constant(dims.transposeA), constant(0), m, n, k, a, lda, bm, ldb, c, ldc});
        op.erase();
        continue;
      }
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      Value lhs = op.getDpsInputOperand(0)->get(), rhs = op.getDpsInputOperand(1)->get();
      Value out = op.getDpsInitOperand(0)->get();
      int64_t rank = cast<MemRefType>(out.getType()).getRank();
      int64_t lhsRank = cast<MemRefType>(lhs.getType()).getRank();
      Value m = size(out, rank - 2), n = size(out, rank - 1);
      Value k = size(lhs, dims.transposeA ? dims.leadA : lhsRank - 1);
      // Each operand's layout and base address, read once outside the batch loops.
      struct Operand {
        memref::ExtractStridedMetadataOp meta;
        Value base;
      };
      auto operand = [&](Value buffer) {
        return Operand{memref::ExtractStridedMetadataOp::create(b, loc, buffer),
                       toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer))};
      };
      Operand lhsOperand = operand(lhs), rhsOperand = operand(rhs), outOperand = operand(out);
      // One call per batch element, in loops over the output's leading dimensions. With
      // threads, the outermost batch loop is shared out among them when it has a batch element
      // for each; else each call is split into one part per thread below.
      SmallVector<int64_t> outShape(cast<MemRefType>(out.getType()).getShape());
      bool parallelBatch = shared && rank > 2 && outShape[0] >= threads;
      SmallVector<Value> batchIndex;
      for (int64_t d = 0; d < rank - 2; ++d) {
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value extent = memref::DimOp::create(b, loc, out, d);
        if (d == 0 && parallelBatch) {
          auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{extent},
                                              ValueRange{one});
          b.setInsertionPointToStart(loop.getBody());
          batchIndex.push_back(toI64(loop.getInductionVars().front()));
          continue;
        }
        auto loop = scf::ForOp::create(b, loc, zero, extent, one);
        b.setInsertionPointToStart(loop.getBody());
        batchIndex.push_back(toI64(loop.getInductionVar()));
      }
      ArrayRef<unsigned> batch = dims.batch;
      // Address of the current batch element's first element, and its leading dimension: the
      // stride of result `lead`; the results before the last other than it read batch loops.
      auto matrix = [&](Operand operand, AffineMap map, unsigned lead) -> std::pair<Value, Value> {
        ValueRange strides = operand.meta.getStrides();
        Value offset = toI64(operand.meta.getOffset());
        for (unsigned i = 0; i + 1 < map.getNumResults(); ++i) {
          auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
          if (i == lead || !dim) // not a batch loop, or pinned to 0: broadcast
            continue;
          Value index = batchIndex[llvm::find(batch, dim.getPosition()) - batch.begin()];
          offset = arith::AddIOp::create(b, loc, offset,
                                         arith::MulIOp::create(b, loc, index, toI64(strides[i])));
        }
        Value address = arith::AddIOp::create(
            b, loc, operand.base, arith::MulIOp::create(b, loc, offset, constant(elementBytes)));
        return {address, toI64(strides[lead])};
      };
      auto [a, lda] = matrix(lhsOperand, maps[0], dims.leadA);
      auto [bm, ldb] = matrix(rhsOperand, maps[1], dims.leadB);
      auto [c, ldc] = matrix(outOperand, maps[2], rank - 2);
      if (shared && !parallelBatch)
        splitAmongThreads(b, loc, dims, outShape, elementBytes, m, n, a, lda, bm, ldb, c, ldc);
      func::CallOp::create(b, loc, calleeFor(dims.element),
                           ValueRange{constant(dims.transposeA), constant(dims.transposeB), m, n, k,
                                      a, lda, bm, ldb, c, ldc});
      op.erase();
    }
  }
};
} // namespace
