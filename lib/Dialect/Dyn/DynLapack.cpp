//===- DynLapack.cpp - dyn.cholesky and dyn.solve: types and bufferization ===//
//
// The factorizations no linalg op expresses. Bufferization gives each a new buffer holding a
// copy of each operand, contiguous and row-major (the result is made in place in the first), a
// one-byte buffer for `ok`, and a call of the runtime function that runs the LAPACK routine on
// every matrix of the batch, with addresses as integers as dyn-blas's calls take them:
//
//   void dynamir_potrf(i64 f64, i64 a, i64 n, i64 batch, i64 ok)
//   void dynamir_gesv(i64 f64, i64 b, i64 a, i64 n, i64 k, i64 batch, i64 ok)
//
// (potrf factors `a` in place; gesv overwrites `b` with the solution)
//
// CPU graphs get the functions' bodies from the runtime (numpy's OpenBLAS); GPU graphs have
// none, and dyn-gpu-map refuses such calls.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Dialect/Dyn/DynOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace dynamir::dyn;

/// Checks that `a` is a batch of square matrices; sets `n`.
static LogicalResult squareMatrices(std::optional<Location> loc, Type a, int64_t &n) {
  auto type = dyn_cast<RankedTensorType>(a);
  if (!type || type.getRank() < 2 || !type.hasStaticShape() ||
      type.getDimSize(type.getRank() - 1) != type.getDimSize(type.getRank() - 2))
    return emitOptionalError(loc, "expected square matrices of a static shape, got ", a);
  n = type.getDimSize(type.getRank() - 1);
  return success();
}

static Type okType(MLIRContext *ctx) { return RankedTensorType::get({}, IntegerType::get(ctx, 1)); }

LogicalResult CholeskyOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  int64_t n;
  if (failed(squareMatrices(loc, adaptor.getA().getType(), n)))
    return failure();
  inferred.push_back(adaptor.getA().getType());
  inferred.push_back(okType(ctx));
  return success();
}

LogicalResult SolveOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  int64_t n;
  if (failed(squareMatrices(loc, adaptor.getA().getType(), n)))
    return failure();
  auto a = cast<RankedTensorType>(adaptor.getA().getType());
  auto b = cast<RankedTensorType>(adaptor.getB().getType());
  if (b.getElementType() != a.getElementType() || b.getRank() != a.getRank() ||
      !b.hasStaticShape() || b.getShape().drop_back(1) != a.getShape().drop_back(1))
    return emitOptionalError(loc, "solve expects right-hand sides of ", a.getShape().drop_back(1),
                             " by k columns and ", a.getElementType(), ", got ", b);
  inferred.push_back(b);
  inferred.push_back(okType(ctx));
  return success();
}

/// The runtime call that replaces a LAPACK op: `copied` (the operands the routine overwrites)
/// copied into new buffers, which with a new `ok` buffer become the op's results, and
/// `callee(f64, addresses of the copies..., sizes..., batch, address of ok)`.
static LogicalResult bufferizeLapackOp(Operation *op, RewriterBase &rewriter,
                                       const bufferization::BufferizationOptions &options,
                                       bufferization::BufferizationState &state, StringRef callee,
                                       ValueRange copied, ArrayRef<int64_t> sizes) {
  Location loc = op->getLoc();
  Type i64 = rewriter.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(rewriter, loc, i64, v);
  };
  auto address = [&](Value buffer) -> Value {
    Value index = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, buffer);
    return arith::IndexCastOp::create(rewriter, loc, i64, index);
  };
  auto matrices = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<Value> args = {constant(matrices.getElementType().isF64())}, results;
  for (Value tensor : copied) {
    FailureOr<Value> source = bufferization::getBuffer(rewriter, tensor, options, state);
    if (failed(source))
      return failure();
    auto type = cast<RankedTensorType>(tensor.getType());
    FailureOr<Value> buffer = options.createAlloc(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()), ValueRange());
    if (failed(buffer) || failed(options.createMemCpy(rewriter, loc, *source, *buffer)))
      return failure();
    args.push_back(address(*buffer));
    results.push_back(*buffer);
  }
  for (int64_t size : sizes)
    args.push_back(constant(size));
  int64_t batch = 1;
  for (int64_t size : matrices.getShape().drop_back(2))
    batch *= size;
  args.push_back(constant(batch));
  FailureOr<Value> ok =
      options.createAlloc(rewriter, loc, MemRefType::get({}, rewriter.getI1Type()), ValueRange());
  if (failed(ok))
    return failure();
  args.push_back(address(*ok));
  // The routine writes the results: the one result buffer, and ok.
  results.resize(1);
  results.push_back(*ok);
  auto module = op->getParentOfType<ModuleOp>();
  auto type = rewriter.getFunctionType(SmallVector<Type>(args.size(), i64), {});
  if (!module.lookupSymbol(callee)) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    func::FuncOp::create(rewriter, loc, callee, type).setPrivate();
  }
  func::CallOp::create(rewriter, loc, callee, TypeRange(), args);
  bufferization::replaceOpWithBufferizedValues(rewriter, op, results);
  return success();
}

// Both read their operands into copies of their own and write only new buffers.
#define DYN_LAPACK_BUFFERIZATION(Op)                                                               \
  bool Op::bufferizesToMemoryRead(OpOperand &, const bufferization::AnalysisState &) {             \
    return true;                                                                                   \
  }                                                                                                \
  bool Op::bufferizesToMemoryWrite(OpOperand &, const bufferization::AnalysisState &) {            \
    return false;                                                                                  \
  }                                                                                                \
  bufferization::AliasingValueList Op::getAliasingValues(OpOperand &,                              \
                                                         const bufferization::AnalysisState &) {   \
    return {};                                                                                     \
  }                                                                                                \
  bool Op::bufferizesToAllocation(Value) { return true; }
DYN_LAPACK_BUFFERIZATION(CholeskyOp)
DYN_LAPACK_BUFFERIZATION(SolveOp)
#undef DYN_LAPACK_BUFFERIZATION

LogicalResult CholeskyOp::bufferize(RewriterBase &rewriter,
                                    const bufferization::BufferizationOptions &options,
                                    bufferization::BufferizationState &state) {
  auto type = cast<RankedTensorType>(getA().getType());
  return bufferizeLapackOp(*this, rewriter, options, state, "dynamir_potrf", {getA()},
                           {type.getShape().back()});
}

LogicalResult SolveOp::bufferize(RewriterBase &rewriter,
                                 const bufferization::BufferizationOptions &options,
                                 bufferization::BufferizationState &state) {
  // The solution overwrites the copy of b.
  auto a = cast<RankedTensorType>(getA().getType());
  auto b = cast<RankedTensorType>(getB().getType());
  Value operands[] = {getB(), getA()};
  return bufferizeLapackOp(*this, rewriter, options, state, "dynamir_gesv", operands,
                           {a.getShape().back(), b.getShape().back()});
}
