//===- DynRuntimeCalls.cpp - ops the runtime computes: types, bufferization =//
//
// The ops no linalg op expresses: the factorizations (dyn.cholesky, dyn.solve), dyn.sort, and
// dyn.conv2d (a direct convolution the runtime computes faster than columns and a product).
// Bufferization gives each a new buffer holding a copy of each operand it overwrites,
// contiguous and row-major, new buffers for its other results, and a call of a runtime
// function with their addresses as integers, as dyn-blas's calls take them:
//
//   void dynamir_potrf(i64 f64, i64 a, i64 n, i64 batch, i64 ok)
//   void dynamir_gesv(i64 f64, i64 b, i64 a, i64 n, i64 k, i64 batch, i64 ok)
//   void dynamir_sort(i64 kind, i64 values, i64 indices, i64 outer, i64 n, i64 inner,
//                     i64 descending)
//   void dynamir_conv2d(i64 x, i64 w, i64 result, i64 n, i64 c, i64 h, i64 w, i64 f, i64 kh,
//                       i64 kw, i64 pad_h, i64 pad_w)
//
// (potrf factors `a` in place; gesv overwrites `b` with the solution; sort sorts `values` in
// place and writes `indices`; conv2d reads its operands where they are when they are row-major)
//
// CPU graphs get the functions' bodies from the runtime (LAPACK from numpy's OpenBLAS); GPU
// graphs have none, and dyn-gpu-map refuses such calls.
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

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto x = cast<RankedTensorType>(adaptor.getX().getType());
  auto w = cast<RankedTensorType>(adaptor.getW().getType());
  ArrayRef<int64_t> padding = adaptor.getPadding();
  if (x.getRank() != 4 || w.getRank() != 4 || !x.hasStaticShape() || !w.hasStaticShape())
    return emitOptionalError(loc,
                             "conv2d expects images [N, C, H, W] and filters [F, C, KH, KW] "
                             "of static shapes, got ",
                             x, " and ", w);
  if (padding.size() != 2 || padding[0] < 0 || padding[1] < 0)
    return emitOptionalError(loc, "conv2d expects two non-negative paddings");
  int64_t height = x.getDimSize(2) + 2 * padding[0] - w.getDimSize(2) + 1;
  int64_t width = x.getDimSize(3) + 2 * padding[1] - w.getDimSize(3) + 1;
  if (w.getDimSize(1) != x.getDimSize(1) || height < 1 || width < 1)
    return emitOptionalError(loc, "conv2d's filters ", w, " do not fit the images ", x);
  inferred.push_back(
      RankedTensorType::get({x.getDimSize(0), w.getDimSize(0), height, width}, x.getElementType()));
  return success();
}

namespace {
/// The builders of a runtime call: i64 arguments, new buffers, the call itself.
struct RuntimeCall {
  RewriterBase &rewriter;
  const bufferization::BufferizationOptions &options;
  bufferization::BufferizationState &state;
  Location loc;
  SmallVector<Value> args;

  Value constant(int64_t v) {
    return arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), v);
  }
  /// `v` (an index) as an i64 argument.
  Value index(Value v) {
    return arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), v);
  }
  /// A new buffer of `type`'s shape (its dynamic sizes `sizes`).
  FailureOr<Value> alloc(MemRefType type, ValueRange sizes) {
    return options.createAlloc(rewriter, loc, type, sizes);
  }
  /// The address of `buffer` as the next argument.
  void address(Value buffer) {
    args.push_back(index(memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, buffer)));
  }
  /// A new buffer whose address is the next argument.
  FailureOr<Value> newBuffer(MemRefType type, ValueRange sizes) {
    FailureOr<Value> buffer = alloc(type, sizes);
    if (succeeded(buffer))
      address(*buffer);
    return buffer;
  }
  /// The sizes of the dynamic dimensions of `buffer`, of tensor type `type`.
  SmallVector<Value> dynamicSizes(Value buffer, RankedTensorType type) {
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(memref::DimOp::create(rewriter, loc, buffer, d));
    return sizes;
  }
  /// A new buffer holding a copy of `tensor`, whose address is the next argument.
  FailureOr<Value> copyOf(Value tensor) {
    FailureOr<Value> source = bufferization::getBuffer(rewriter, tensor, options, state);
    if (failed(source))
      return failure();
    auto type = cast<RankedTensorType>(tensor.getType());
    FailureOr<Value> buffer =
        alloc(MemRefType::get(type.getShape(), type.getElementType()), dynamicSizes(*source, type));
    if (failed(buffer) || failed(options.createMemCpy(rewriter, loc, *source, *buffer)))
      return failure();
    address(*buffer);
    return buffer;
  }
  /// The address of `tensor`'s buffer as the next argument when it is row-major, else of a
  /// copy of it.
  LogicalResult rowMajor(Value tensor) {
    FailureOr<Value> source = bufferization::getBuffer(rewriter, tensor, options, state);
    if (failed(source))
      return failure();
    if (cast<MemRefType>(source->getType()).getLayout().isIdentity()) {
      address(*source);
      return success();
    }
    return success(succeeded(copyOf(tensor)));
  }
  /// Calls `callee` (declared once per module) with the arguments, and replaces `op` with
  /// `results`.
  void replace(Operation *op, StringRef callee, ValueRange results) {
    auto module = op->getParentOfType<ModuleOp>();
    auto type = rewriter.getFunctionType(SmallVector<Type>(args.size(), rewriter.getI64Type()), {});
    if (!module.lookupSymbol(callee)) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      func::FuncOp::create(rewriter, loc, callee, type).setPrivate();
    }
    func::CallOp::create(rewriter, loc, callee, TypeRange(), args);
    bufferization::replaceOpWithBufferizedValues(rewriter, op, results);
  }
};
} // namespace

/// The runtime call that replaces a LAPACK op: `copied` (the operands the routine overwrites)
/// copied into new buffers, the first of which with a new `ok` buffer become the op's results,
/// and `callee(f64, addresses of the copies..., sizes..., batch, address of ok)`.
static LogicalResult bufferizeLapackOp(Operation *op, RewriterBase &rewriter,
                                       const bufferization::BufferizationOptions &options,
                                       bufferization::BufferizationState &state, StringRef callee,
                                       ValueRange copied, ArrayRef<int64_t> sizes) {
  RuntimeCall call{rewriter, options, state, op->getLoc(), {}};
  auto matrices = cast<RankedTensorType>(op->getResult(0).getType());
  call.args.push_back(call.constant(matrices.getElementType().isF64()));
  SmallVector<Value> results;
  for (Value tensor : copied) {
    FailureOr<Value> buffer = call.copyOf(tensor);
    if (failed(buffer))
      return failure();
    results.push_back(*buffer);
  }
  for (int64_t size : sizes)
    call.args.push_back(call.constant(size));
  int64_t batch = 1;
  for (int64_t size : matrices.getShape().drop_back(2))
    batch *= size;
  call.args.push_back(call.constant(batch));
  FailureOr<Value> ok = call.newBuffer(MemRefType::get({}, rewriter.getI1Type()), {});
  if (failed(ok))
    return failure();
  // The routine writes the results: the one result buffer, and ok.
  results.resize(1);
  results.push_back(*ok);
  call.replace(op, callee, results);
  return success();
}

// Each reads its operands (the ops that overwrite one, into copies of their own) and writes only
// new buffers.
#define DYN_RUNTIME_CALL_BUFFERIZATION(Op)                                                         \
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
DYN_RUNTIME_CALL_BUFFERIZATION(CholeskyOp)
DYN_RUNTIME_CALL_BUFFERIZATION(SolveOp)
DYN_RUNTIME_CALL_BUFFERIZATION(SortOp)
DYN_RUNTIME_CALL_BUFFERIZATION(Conv2dOp)
#undef DYN_RUNTIME_CALL_BUFFERIZATION

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

LogicalResult SortOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getX().getType());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis >= type.getRank())
    return emitOptionalError(loc, "sort axis ", axis, " out of range for ", type);
  inferred.push_back(type);
  inferred.push_back(type.clone(IntegerType::get(ctx, 64)));
  return success();
}

/// The runtime's code for an element type (see the file comment).
static int64_t sortKind(Type element) {
  if (element.isF32())
    return 0;
  if (element.isF64())
    return 1;
  switch (element.getIntOrFloatBitWidth()) {
  case 1:
    return 2;
  case 8:
    return 3;
  case 16:
    return 4;
  case 32:
    return 5;
  default:
    return 6;
  }
}

LogicalResult SortOp::bufferize(RewriterBase &rewriter,
                                const bufferization::BufferizationOptions &options,
                                bufferization::BufferizationState &state) {
  auto type = cast<RankedTensorType>(getX().getType());
  if (type.getElementType().isUnsignedInteger())
    return emitOpError("sorts unsigned integers once convert-dyn-to-linalg has made them "
                       "signless keys");
  RuntimeCall call{rewriter, options, state, getLoc(), {}};
  call.args.push_back(call.constant(sortKind(type.getElementType())));
  FailureOr<Value> values = call.copyOf(getX());
  if (failed(values))
    return failure();
  FailureOr<Value> indices = call.newBuffer(MemRefType::get(type.getShape(), rewriter.getI64Type()),
                                            call.dynamicSizes(*values, type));
  if (failed(indices))
    return failure();
  // The lanes: `outer` blocks of `n` elements `inner` apart.
  int64_t axis = static_cast<int64_t>(getAxis());
  auto product = [&](int64_t from, int64_t to) -> Value {
    int64_t known = 1;
    Value p;
    for (int64_t d = from; d < to; ++d) {
      if (!type.isDynamicDim(d)) {
        known *= type.getDimSize(d);
        continue;
      }
      Value size = call.index(memref::DimOp::create(rewriter, getLoc(), *values, d));
      p = p ? arith::MulIOp::create(rewriter, getLoc(), p, size) : size;
    }
    Value constant = call.constant(known);
    return p ? arith::MulIOp::create(rewriter, getLoc(), p, constant) : constant;
  };
  call.args.append({product(0, axis), product(axis, axis + 1), product(axis + 1, type.getRank()),
                    call.constant(getDescending())});
  call.replace(*this, "dynamir_sort", {*values, *indices});
  return success();
}

LogicalResult Conv2dOp::bufferize(RewriterBase &rewriter,
                                  const bufferization::BufferizationOptions &options,
                                  bufferization::BufferizationState &state) {
  RuntimeCall call{rewriter, options, state, getLoc(), {}};
  if (failed(call.rowMajor(getX())) || failed(call.rowMajor(getW())))
    return failure();
  auto type = cast<RankedTensorType>(getType());
  FailureOr<Value> result =
      call.newBuffer(MemRefType::get(type.getShape(), type.getElementType()), {});
  if (failed(result))
    return failure();
  ArrayRef<int64_t> x = cast<RankedTensorType>(getX().getType()).getShape();
  ArrayRef<int64_t> w = cast<RankedTensorType>(getW().getType()).getShape();
  for (int64_t size : {x[0], x[1], x[2], x[3], w[0], w[2], w[3], getPadding()[0], getPadding()[1]})
    call.args.push_back(call.constant(size));
  call.replace(*this, "dynamir_conv2d", {*result});
  return success();
}
