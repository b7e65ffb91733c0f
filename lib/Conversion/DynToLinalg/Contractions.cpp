//===- Contractions.cpp - dyn.matmul and dyn.linear to linalg -------------===//
//
// Products whose right operand is one matrix (`linear` on any input rank, `x @ W` with a
// batched x) become one rank-2 product over the input's rows: the leading dimensions collapse
// into the rows, and the result expands back. A rank-2 product is what dyn-blas hands to
// BLAS; a rank-3 generic was a loop nest (the 4x64x256 GELU MLP's two linears: 23 ms, torch
// 1.3 ms). Batched products keep their batch loops; dyn-blas calls BLAS once per batch.
// dyn.unfold, the im2col that turns a convolution into such a product, is here too.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Conversion/DynToLinalg/DynToLinalg.h"

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynScalar.h"
#include "dynamir/Dialect/Dyn/DynShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::dyn;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// An empty tensor of `type` whose dynamic sizes are `dims` of `sources` (one pair per dynamic
/// dimension of `type`, in order).
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type,
                ArrayRef<std::pair<Value, int64_t>> dims) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, dims[d].first, dims[d].second));
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), sizes);
}

/// `acc + a * b` in the element type of `acc` (complex products as numpy's). Floats may contract
/// into one fused multiply-add, as BLAS kernels compute it: with two roundings per term a float32
/// dot of 8 terms came out an ulp further from the exact sum than torch's (difftest 197577016:11).
Value multiplyAdd(OpBuilder &b, Location loc, Value a, Value x, Value acc) {
  if (isa<FloatType>(acc.getType())) {
    auto contract = arith::FastMathFlags::contract;
    return arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, a, x, contract), acc,
                                 contract);
  }
  if (isa<ComplexType>(acc.getType()))
    return complex::AddOp::create(b, loc, ComplexMulScalar::create(b, loc, a, x), acc);
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, a, x), acc);
}

/// `v` [lead..., k] as [prod(lead), k].
Value collapseRows(OpBuilder &b, Location loc, Value v) {
  int64_t rank = tensorType(v).getRank();
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d < rank - 1; ++d)
    groups[0].push_back(d);
  groups[1].push_back(rank - 1);
  return tensor::CollapseShapeOp::create(b, loc, v, groups);
}

/// The rank-2 `product` [rows, n] expanded to `type` [lead..., n], whose leading sizes are
/// those of `rowsOf` and whose last size is `columns`.
Value expandRows(OpBuilder &b, Location loc, Value product, RankedTensorType type, Value rowsOf,
                 OpFoldResult columns) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> shape;
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d < rank - 1; ++d) {
    shape.push_back(tensor::getMixedSize(b, loc, rowsOf, d));
    groups[0].push_back(d);
  }
  shape.push_back(columns);
  groups[1].push_back(rank - 1);
  return expandOrReshape(b, loc, type, product, groups, shape);
}

/// The type of a rank-2 product of `rows` x `type`'s last dimension.
RankedTensorType rowsType(Value rows, RankedTensorType type) {
  return RankedTensorType::get({tensorType(rows).getDimSize(0), type.getShape().back()},
                               type.getElementType());
}

/// A contraction out[batch..., m, n] += lhs[..., m, k] * rhs[..., k, n] with numpy batch
/// broadcasting; named linalg ops for the shapes that have one.
struct MatmulLowering : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    int64_t lr = tensorType(lhs).getRank(), rk = tensorType(rhs).getRank();
    auto resultType = cast<RankedTensorType>(signlessType(op.getType()));
    if (lr >= 3 && rk == 2) { // [lead..., m, k] @ [k, n]: one product over all rows
      Value rows = collapseRows(rewriter, loc, lhs);
      Value product = contract(rewriter, loc, rows, rhs, rowsType(rows, resultType));
      rewriter.replaceOp(op, expandRows(rewriter, loc, product, resultType, lhs,
                                        tensor::getMixedSize(rewriter, loc, rhs, 1)));
      return success();
    }
    if ((lr == 1 && rk >= 3) || (lr >= 3 && rk == 1)) {
      // A vector against a batch of matrices (`cholesky(a) @ ones`): the vector as a
      // matrix of one row or column, the product's dimension of 1 folded away again.
      if (!resultType.hasStaticShape() || !tensorType(lhs).hasStaticShape() ||
          !tensorType(rhs).hasStaticShape())
        return rewriter.notifyMatchFailure(op, "dynamic sizes of a matmul with a 1-D operand");
      bool vectorFirst = lr == 1;
      Value vector = vectorFirst ? lhs : rhs;
      int64_t k = tensorType(vector).getDimSize(0);
      auto matrixType =
          RankedTensorType::get(vectorFirst ? ArrayRef<int64_t>{1, k} : ArrayRef<int64_t>{k, 1},
                                tensorType(vector).getElementType());
      Value matrix = tensor::ExpandShapeOp::create(rewriter, loc, matrixType, vector,
                                                   ArrayRef<ReassociationIndices>{{0, 1}});
      int64_t rr = resultType.getRank();
      SmallVector<int64_t> shape(resultType.getShape());
      shape.insert(shape.begin() + (vectorFirst ? rr - 1 : rr), 1);
      auto productType = resultType.clone(shape);
      Value product = vectorFirst ? contract(rewriter, loc, matrix, rhs, productType)
                                  : contract(rewriter, loc, lhs, matrix, productType);
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d < rr - 1; ++d)
        groups.push_back({d});
      groups.push_back({rr - 1, rr});
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, resultType, product, groups);
      return success();
    }
    for (auto [d, source] : llvm::enumerate(resultDims(lhs, rhs, resultType))) {
      auto [value, sd] = source;
      if (resultType.isDynamicDim(d) &&
          (sd < 0 || sd >= tensorType(value).getRank() || !tensorType(value).isDynamicDim(sd)))
        return rewriter.notifyMatchFailure(op, "dynamic batch dimensions of a matmul");
    }
    rewriter.replaceOp(op, contract(rewriter, loc, lhs, rhs, resultType));
    return success();
  }

  /// Where each result dimension's size comes from: the last from rhs's columns, the one
  /// before from lhs's rows, the batch from lhs (numpy alignment; a dimension that lhs
  /// broadcasts is not lhs's to give).
  static SmallVector<std::pair<Value, int64_t>> resultDims(Value lhs, Value rhs,
                                                           RankedTensorType type) {
    int64_t lr = tensorType(lhs).getRank(), rk = tensorType(rhs).getRank(), rr = type.getRank();
    SmallVector<std::pair<Value, int64_t>> dims;
    for (int64_t d = 0; d < rr; ++d) {
      if (rk >= 2 && d == rr - 1)
        dims.push_back({rhs, rk - 1});
      else if (lr >= 2 && d == rr - (rk >= 2 ? 2 : 1))
        dims.push_back({lhs, lr - 2});
      else
        dims.push_back({lhs, d - (rr - lr)});
    }
    return dims;
  }

  static Value contract(OpBuilder &b, Location loc, Value lhs, Value rhs, RankedTensorType type) {
    RankedTensorType lt = tensorType(lhs), rt = tensorType(rhs);
    int64_t lr = lt.getRank(), rk = rt.getRank();
    Type et = type.getElementType();
    Value init = linalg::FillOp::create(b, loc, scalarConstant(b, loc, et, 0),
                                        emptyLike(b, loc, type, resultDims(lhs, rhs, type)))
                     .getResult(0);
    if (lr >= 2 && rk >= 2) {
      // A transposed operand is read through a permuted map: dyn-blas passes BLAS a transpose
      // flag and strides instead of a copy (correlation's `centered.T @ centered`, attention's
      // `q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1)` read in qkv's own layout).
      auto [lhsSource, lhsPermutation] = throughTranspose(lhs);
      auto [rhsSource, rhsPermutation] = throughTranspose(rhs);
      if (!lhsPermutation.empty() || !rhsPermutation.empty())
        return broadcastingContraction(b, loc, lhs, rhs, init, type, lhsPermutation,
                                       rhsPermutation);
    }
    SmallVector<Value, 2> ins = {lhs, rhs};
    Value outs = init;
    if (lr == 2 && rk == 2)
      return linalg::MatmulOp::create(b, loc, TypeRange{type}, ins, outs).getResult(0);
    if (lr == 1 && rk == 2)
      return linalg::VecmatOp::create(b, loc, TypeRange{type}, ins, outs).getResult(0);
    if (lr == 2 && rk == 1)
      return linalg::MatvecOp::create(b, loc, TypeRange{type}, ins, outs).getResult(0);
    if (lr == 1 && rk == 1)
      return linalg::DotOp::create(b, loc, TypeRange{type}, ins, outs).getResult(0);
    if (lr == 3 && rk == 3 && lt.getDimSize(0) == rt.getDimSize(0) && !lt.isDynamicDim(0))
      return linalg::BatchMatmulOp::create(b, loc, TypeRange{type}, ins, outs).getResult(0);
    return broadcastingContraction(b, loc, lhs, rhs, init, type);
  }

  /// The permutation of `v` when it is a linalg.transpose (result dimension d is its input's
  /// dimension permutation[d]) that keeps one of the matrix's dimensions innermost in memory, as
  /// BLAS reads it; empty otherwise (a batch dimension innermost is cheaper copied once).
  static std::pair<Value, ArrayRef<int64_t>> throughTranspose(Value v) {
    auto transpose = v.getDefiningOp<linalg::TransposeOp>();
    if (!transpose)
      return {v, {}};
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    int64_t rank = permutation.size();
    if (llvm::find(permutation, rank - 1) - permutation.begin() < rank - 2)
      return {v, {}};
    return {transpose.getInput(), permutation};
  }

  /// The contraction as a generic. An operand with a permutation is read from the input of its
  /// transpose, through the operand's map permuted the same way.
  static Value broadcastingContraction(OpBuilder &b, Location loc, Value lhs, Value rhs, Value init,
                                       RankedTensorType resultType,
                                       ArrayRef<int64_t> lhsPermutation = {},
                                       ArrayRef<int64_t> rhsPermutation = {}) {
    MLIRContext *ctx = b.getContext();
    int64_t rr = resultType.getRank(); // batch..., m, n
    int64_t k = rr;                    // the reduction dimension
    auto operandMap = [&](RankedTensorType t, bool isLhs, ArrayRef<int64_t> permutation) {
      SmallVector<AffineExpr> exprs;
      int64_t batch = t.getRank() - 2, offset = (rr - 2) - batch;
      for (int64_t i = 0; i < batch; ++i)
        exprs.push_back(t.getDimSize(i) == 1 && resultType.getDimSize(offset + i) != 1
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(offset + i, ctx));
      exprs.push_back(getAffineDimExpr(isLhs ? rr - 2 : k, ctx));
      exprs.push_back(getAffineDimExpr(isLhs ? k : rr - 1, ctx));
      if (!permutation.empty()) {
        SmallVector<AffineExpr> permuted(exprs.size());
        for (auto [d, source] : llvm::enumerate(permutation))
          permuted[source] = exprs[d];
        exprs = std::move(permuted);
      }
      return AffineMap::get(rr + 1, 0, exprs, ctx);
    };
    auto source = [](Value v, ArrayRef<int64_t> permutation) {
      return permutation.empty() ? v : throughTranspose(v).first;
    };
    SmallVector<AffineMap> maps = {
        operandMap(tensorType(lhs), true, lhsPermutation),
        operandMap(tensorType(rhs), false, rhsPermutation),
        AffineMap::getMultiDimIdentityMap(rr + 1, ctx).getMajorSubMap(rr)};
    SmallVector<utils::IteratorType> iterators(rr, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    return linalg::GenericOp::create(
               b, loc, TypeRange{resultType},
               ValueRange{source(lhs, lhsPermutation), source(rhs, rhsPermutation)},
               ValueRange{init}, maps, iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(nb, l, multiplyAdd(nb, l, args[0], args[1], args[2]));
               })
        .getResult(0);
  }
};

/// linear: out[lead..., n] = bias[n] + sum_k x[lead..., k] * w[n, k], one contraction whose
/// init is the broadcast bias.
struct LinearLowering : OpConversionPattern<LinearOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), w = adaptor.getWeight(), bias = adaptor.getBias();
    auto resultType = cast<RankedTensorType>(signlessType(op.getType()));
    if (resultType.getRank() <= 2) {
      rewriter.replaceOp(op, linear(rewriter, loc, x, w, bias, resultType));
      return success();
    }
    Value rows = collapseRows(rewriter, loc, x);
    Value product = linear(rewriter, loc, rows, w, bias, rowsType(rows, resultType));
    rewriter.replaceOp(op, expandRows(rewriter, loc, product, resultType, x,
                                      tensor::getMixedSize(rewriter, loc, w, 0)));
    return success();
  }

  static Value linear(OpBuilder &b, Location loc, Value x, Value w, Value bias,
                      RankedTensorType resultType) {
    MLIRContext *ctx = b.getContext();
    int64_t rr = resultType.getRank(); // [rows,] n
    SmallVector<std::pair<Value, int64_t>> dims;
    for (int64_t d = 0; d < rr; ++d)
      dims.push_back(d == rr - 1 ? std::make_pair(w, int64_t(0)) : std::make_pair(x, d));
    Value empty = emptyLike(b, loc, resultType, dims);
    Value init;
    if (bias) {
      // The bias broadcast is the init of the contraction: the add costs nothing extra.
      SmallVector<AffineMap> maps = {AffineMap::get(rr, 0, {getAffineDimExpr(rr - 1, ctx)}, ctx),
                                     AffineMap::getMultiDimIdentityMap(rr, ctx)};
      init = linalg::GenericOp::create(
                 b, loc, TypeRange{resultType}, ValueRange{bias}, ValueRange{empty}, maps,
                 SmallVector<utils::IteratorType>(rr, utils::IteratorType::parallel),
                 [](OpBuilder &nb, Location l, ValueRange args) {
                   linalg::YieldOp::create(nb, l, args[0]);
                 })
                 .getResult(0);
    } else {
      Value zero = scalarConstant(b, loc, resultType.getElementType(), 0);
      init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    }
    int64_t k = rr; // reduction dimension
    SmallVector<AffineExpr> xExprs;
    for (int64_t d = 0; d < rr - 1; ++d)
      xExprs.push_back(getAffineDimExpr(d, ctx));
    xExprs.push_back(getAffineDimExpr(k, ctx));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rr + 1, 0, xExprs, ctx),
        AffineMap::get(rr + 1, 0, {getAffineDimExpr(rr - 1, ctx), getAffineDimExpr(k, ctx)}, ctx),
        AffineMap::getMultiDimIdentityMap(rr + 1, ctx).getMajorSubMap(rr)};
    SmallVector<utils::IteratorType> iterators(rr, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    return linalg::GenericOp::create(
               b, loc, TypeRange{resultType}, ValueRange{x, w}, ValueRange{init}, maps, iterators,
               [](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(nb, l, multiplyAdd(nb, l, args[0], args[1], args[2]));
               })
        .getResult(0);
  }
};

/// unfold: the zero-padded images (tensor.pad, when there is padding), then one generic that
/// reads every window through an affine map, cols[n, c, i, j, oy, ox] = x[n, c, oy * sy + i *
/// dy, ox * sx + j * dx], collapsed to [N, C * kh * kw, OH * OW]. The innermost loop walks a row
/// of the image, so with stride 1 LLVM vectorizes the copy.
struct UnfoldLowering : OpConversionPattern<UnfoldOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(UnfoldOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getX();
    RankedTensorType in = tensorType(x);
    auto out = cast<RankedTensorType>(signlessType(op.getType()));
    ArrayRef<int64_t> kernel = op.getKernel(), dilation = op.getDilation();
    ArrayRef<int64_t> padding = op.getPadding(), stride = op.getStride();
    Type et = in.getElementType();
    if (llvm::any_of(padding, [](int64_t p) { return p > 0; })) {
      SmallVector<int64_t> shape(in.getShape());
      SmallVector<OpFoldResult> pads(2, rewriter.getIndexAttr(0));
      for (int64_t d = 0; d < 2; ++d) {
        shape[d + 2] += 2 * padding[d];
        pads.push_back(rewriter.getIndexAttr(padding[d]));
      }
      x = tensor::PadOp::create(rewriter, loc, in.clone(shape), x, pads, pads,
                                scalarConstant(rewriter, loc, et, 0));
    }
    int64_t oh = dyn::windowCount(in.getDimSize(2), kernel[0], dilation[0], padding[0], stride[0]);
    int64_t ow = dyn::windowCount(in.getDimSize(3), kernel[1], dilation[1], padding[1], stride[1]);
    // Loops (n, c, i, j, oy, ox).
    auto windows = RankedTensorType::get(
        {in.getDimSize(0), in.getDimSize(1), kernel[0], kernel[1], oh, ow}, et);
    auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
    SmallVector<AffineMap> maps = {
        AffineMap::get(6, 0,
                       {dim(0), dim(1), dim(4) * stride[0] + dim(2) * dilation[0],
                        dim(5) * stride[1] + dim(3) * dilation[1]},
                       ctx),
        AffineMap::getMultiDimIdentityMap(6, ctx)};
    Value init = emptyLike(rewriter, loc, windows, {{x, 0}});
    Value cols = linalg::GenericOp::create(
                     rewriter, loc, TypeRange{windows}, ValueRange{x}, ValueRange{init}, maps,
                     SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
                     [](OpBuilder &nb, Location l, ValueRange args) {
                       linalg::YieldOp::create(nb, l, args[0]);
                     })
                     .getResult(0);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, out, cols, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
    return success();
  }
};

} // namespace

void dynamir::populateDynContractionLoweringPatterns(const TypeConverter &converter,
                                                     RewritePatternSet &patterns) {
  patterns.add<MatmulLowering, LinearLowering, UnfoldLowering>(converter, patterns.getContext());
}
