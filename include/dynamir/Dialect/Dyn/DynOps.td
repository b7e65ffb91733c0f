//===- DynOps.td - dyn dialect operations ------------------*- tablegen -*-===//

#ifndef DYNAMIR_DIALECT_DYN_DYNOPS_TD
#define DYNAMIR_DIALECT_DYN_DYNOPS_TD

include "dynamir/Dialect/Dyn/DynBase.td"
include "dynamir/Dialect/Dyn/DynElementwiseOps.td"
include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants and constructors
//===----------------------------------------------------------------------===//

def Dyn_ConstantOp : Dyn_Op<"constant", [ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "tensor constant";
  let description = [{
    A constant tensor given by a dense elements attribute (splats included).

    Example:

    ```mlir
    %c = dyn.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %z = dyn.constant dense<0> : tensor<4x4xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Dyn_FullOp : Dyn_Op<"full", [Pure]> {
  let summary = "a tensor of one value (numpy full/zeros/ones)";
  let description = [{
    A statically shaped tensor whose elements all equal `value`. The frontend emits it for
    `np.full`, `np.zeros` and `np.ones` (and their torch twins); it folds to a splat constant.

    Example:

    ```mlir
    %z = dyn.full 0.0 : f32 : tensor<2x3xf32>
    %t = dyn.full true : tensor<4xi1>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs StaticShapeTensorOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64]>:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dyn_ArangeOp : Dyn_Op<"arange", [Pure]> {
  let summary = "evenly spaced values (numpy arange)";
  let description = [{
    A 1-D tensor `start, start + step, ...` with as many elements as its static size says
    (the frontend computes the size from numpy's stop).

    Example:

    ```mlir
    %r = dyn.arange 0.0, 2.0 : tensor<5xi64>   // [0, 2, 4, 6, 8]
    ```
  }];
  let arguments = (ins F64Attr:$start, F64Attr:$step);
  let results = (outs StaticShapeTensorOf<[F16, BF16, F32, F64, I8, I16, I32, I64]>:$result);
  let assemblyFormat = "$start `,` $step attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Dyn_ReductionOp<string mnemonic, Type tensorType, string what, string resultKind,
                      bit returnsIndex = !or(!eq(resultKind, "ArgMax"), !eq(resultKind, "ArgMin"))>
    : Dyn_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = what # " over a list of dimensions";
  let description = [{
    Reduces `x` over `dims` (distinct, in `[0, rank)`; the frontend turns numpy's `axis=None`
    into every dimension) with }] # what # [{. With `keepdim` the reduced dimensions stay with
    size 1.}] # !if(returnsIndex, [{ The result is the i64 row-major index of the
    first extreme element within the reduced dimensions (numpy/torch `arg`-reductions over
    several dimensions flatten them).}], "") # [{

    Example:

    ```mlir
    %r = dyn.}] # mnemonic # [{ %x dims [1] keepdim : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins tensorType:$x, DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$x `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($x)";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *ctx,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return inferReductionResult(loc, adaptor.getX(), adaptor.getDims(),
          adaptor.getKeepdim(), }] # !if(returnsIndex,
          "::mlir::IntegerType::get(ctx, 64)", "nullptr") # [{, inferred);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      // Over no dimension a reduction is its input (an index reduction: zeros). Lowered as a
      // reduction it was an accumulator that a fused consumer loop kept adding into
      // (`np.stack([x, x]) * np.sum(x)` of a 0-d x doubled the second element).
      if (getDims().empty())
        return foldEmptyReduction(getX(), getType(), ReductionKind::}] # resultKind # [{);
      return constFoldReduction(adaptor.getX(), getDims(), getType(), ReductionKind::}]
          # resultKind # [{);
    }
  }];
}

def Dyn_SumOp : Dyn_ReductionOp<"sum", Dyn_ArithmeticTensor, "summation", "Sum">;
def Dyn_MeanOp : Dyn_ReductionOp<"mean", Dyn_InexactTensor, "the arithmetic mean", "Mean">;
def Dyn_ProdOp : Dyn_ReductionOp<"prod", Dyn_ArithmeticTensor, "the product", "Prod">;
def Dyn_MaxOp : Dyn_ReductionOp<"max", Dyn_NumericTensor, "the maximum", "Max">;
def Dyn_MinOp : Dyn_ReductionOp<"min", Dyn_NumericTensor, "the minimum", "Min">;
def Dyn_ArgMaxOp : Dyn_ReductionOp<"argmax", Dyn_NumericTensor,
                                   "the index of the maximum", "ArgMax">;
def Dyn_ArgMinOp : Dyn_ReductionOp<"argmin", Dyn_NumericTensor,
                                   "the index of the minimum", "ArgMin">;

class Dyn_SoftmaxLikeOp<string mnemonic, string formula>
    : Dyn_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = mnemonic # " over one dimension";
  let description = [{
    `}] # formula # [{` along `dim`, computed stably (the row maximum is subtracted first).

    Example:

    ```mlir
    %p = dyn.}] # mnemonic # [{ %x dim 1 : tensor<4x1024xf32>
    ```
  }];
  let arguments = (ins Dyn_FloatTensor:$x, I64Attr:$dim);
  let results = (outs Dyn_FloatTensor:$result);
  let assemblyFormat = "$x `dim` $dim attr-dict `:` type($x)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      auto type = ::llvm::cast<::mlir::RankedTensorType>(adaptor.getX().getType());
      int64_t dim = static_cast<int64_t>(adaptor.getDim());
      if (dim < 0 || dim >= type.getRank())
        return ::mlir::emitOptionalError(loc, "dim ", dim,
                                         " is out of range for a tensor of rank ",
                                         type.getRank());
      inferred.push_back(type);
      return ::mlir::success();
    }
  }];
}

def Dyn_SoftmaxOp : Dyn_SoftmaxLikeOp<"softmax", "exp(x) / sum(exp(x))">;
def Dyn_LogSoftmaxOp : Dyn_SoftmaxLikeOp<"log_softmax", "x - log(sum(exp(x)))">;

class Dyn_ScanOp<string mnemonic, string what, string combine>
    : Dyn_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "running " # what # " along one dimension";
  let description = [{
    Element `k` along `dim` of the result is the }] # what # [{ of elements `0..k` of `x`
    along `dim`, accumulated in order, `r[k] = }] # combine # [{` (numpy's and torch's
    sequential loop, so float results round as theirs do). A maximum or minimum is NaN from
    the first NaN on (numpy's maximum.accumulate). The result has `x`'s type: the frontend
    casts to the dtype numpy or torch accumulates in first.

    Example:

    ```mlir
    %r = dyn.}] # mnemonic # [{ %x dim 1 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Dyn_NumericTensor:$x, I64Attr:$dim);
  let results = (outs Dyn_NumericTensor:$result);
  let assemblyFormat = "$x `dim` $dim attr-dict `:` type($x)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      auto type = ::llvm::cast<::mlir::RankedTensorType>(adaptor.getX().getType());
      int64_t dim = static_cast<int64_t>(adaptor.getDim());
      if (dim < 0 || dim >= type.getRank())
        return ::mlir::emitOptionalError(loc, "dim ", dim,
                                         " is out of range for a tensor of rank ",
                                         type.getRank());
      inferred.push_back(type);
      return ::mlir::success();
    }
  }];
}

def Dyn_CumsumOp : Dyn_ScanOp<"cumsum", "sum", "r[k-1] + x[k]">;
def Dyn_CumprodOp : Dyn_ScanOp<"cumprod", "product", "r[k-1] * x[k]">;
def Dyn_CummaxOp : Dyn_ScanOp<"cummax", "maximum", "max(r[k-1], x[k])">;
def Dyn_CumminOp : Dyn_ScanOp<"cummin", "minimum", "min(r[k-1], x[k])">;

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Dyn_MatmulOp : Dyn_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "matrix product with numpy's batching rules";
  let description = [{
    `numpy.matmul` / the `@` operator: a 1-D lhs gets a leading 1 and a 1-D rhs a trailing 1
    (both removed from the result), leading batch dimensions broadcast, and the contracted
    dimensions must agree. 0-d operands are rejected, as numpy does.

    Example:

    ```mlir
    %c = dyn.matmul %a, %b : tensor<8x1x4x5xf32>, tensor<3x5x6xf32>
    // %c : tensor<8x3x4x6xf32>
    ```
  }];
  let arguments = (ins Dyn_ArithmeticTensor:$lhs, Dyn_ArithmeticTensor:$rhs);
  let results = (outs Dyn_ArithmeticTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Dyn_LinearOp : Dyn_Op<"linear", [Pure, InferTypeOpAdaptor]> {
  let summary = "affine map x·Wᵀ + b (torch.nn.functional.linear)";
  let description = [{
    `input` is `[..., K]`, `weight` is `[N, K]` and the optional `bias` is `[N]`; the result is
    `[..., N]`.

    Example:

    ```mlir
    %y = dyn.linear %x, %w, %b : tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32>
    // %y : tensor<2xf32>
    ```
  }];
  let arguments = (ins Dyn_FloatTensor:$input, Dyn_FloatTensor:$weight,
                   Optional<Dyn_FloatTensor>:$bias);
  let results = (outs Dyn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)?
  }];
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Dyn_UnfoldOp : Dyn_Op<"unfold", [Pure, InferTypeOpAdaptor]> {
  let summary = "sliding blocks of batched images as columns (torch's F.unfold, im2col)";
  let description = [{
    `torch.nn.functional.unfold(x, kernel, dilation, padding, stride)` on a batch of images
    `x : [N, C, H, W]`: every `kernel[0] x kernel[1]` window of the zero-padded images, read
    with the given dilation and stride, becomes one column of the result
    `[N, C * kh * kw, OH * OW]`, where `OH = (H + 2 * padding[0] - dilation[0] * (kh - 1) - 1)
    / stride[0] + 1` (and OW likewise). Row `(c * kh + i) * kw + j` of column `oy * OW + ox`
    holds `x[n, c, oy * stride[0] + i * dilation[0] - padding[0], ox * stride[1] + j *
    dilation[1] - padding[1]]`, zero outside the image. A convolution is a matrix product
    with these columns; as one op the columns are written once by a single loop nest (made of
    slices and a concatenation they were copied twice, in one loop nest per window). `C`, `H`
    and `W` must be static, the windows must fit the padded image, kernel, dilation and stride
    positive and padding non-negative.

    Example:

    ```mlir
    %cols = dyn.unfold %x kernel [3, 3] dilation [1, 1] padding [1, 1] stride [1, 1]
        : tensor<4x32x16x16xf32>
    // %cols : tensor<4x288x256xf32>
    ```
  }];
  let arguments = (ins Dyn_NumericTensor:$x, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$dilation, DenseI64ArrayAttr:$padding,
                   DenseI64ArrayAttr:$stride);
  let results = (outs Dyn_NumericTensor:$result);
  let assemblyFormat = [{
    $x `kernel` $kernel `dilation` $dilation `padding` $padding `stride` $stride attr-dict `:`
    type($x)
  }];
}

def Dyn_ReshapeOp : Dyn_Op<"reshape", [Pure]> {
  let summary = "same elements, new shape";
  let description = [{
    Reinterprets the row-major elements of `x` with the result's shape. When both shapes are
    static their element counts must agree.

    Example:

    ```mlir
    %y = dyn.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dyn_TransposeOp : Dyn_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permutation of dimensions";
  let description = [{
    Result dimension `i` is operand dimension `perm[i]` (numpy `transpose(axes)`, torch
    `permute`).

    Example:

    ```mlir
    %y = dyn.transpose %x perm [1, 0] : tensor<2x3xf32>
    // %y : tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$x `perm` $perm attr-dict `:` type($x)";
  let hasFolder = 1;
}

def Dyn_BroadcastToOp : Dyn_Op<"broadcast_to", [Pure]> {
  let summary = "broadcast to a larger shape (numpy broadcast_to, torch expand)";
  let description = [{
    Stretches `x` to the result shape with numpy's rules: dimensions align from the right,
    and each operand dimension is 1 or equals the result dimension.

    Example:

    ```mlir
    %y = dyn.broadcast_to %x : tensor<3xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dyn_ExpandDimsOp : Dyn_Op<"expand_dims", [Pure, InferTypeOpAdaptor]> {
  let summary = "insert a dimension of size 1 (numpy expand_dims, torch unsqueeze)";
  let description = [{
    Example:

    ```mlir
    %y = dyn.expand_dims %x dim 0 : tensor<3xf32>
    // %y : tensor<1x3xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x, I64Attr:$dim);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$x `dim` $dim attr-dict `:` type($x)";
}

def Dyn_SqueezeOp : Dyn_Op<"squeeze", [Pure, InferTypeOpAdaptor]> {
  let summary = "remove dimensions of size 1";
  let description = [{
    Removes `dims`, each of which must have static size 1.

    Example:

    ```mlir
    %y = dyn.squeeze %x dims [0, 2] : tensor<1x3x1xf32>
    // %y : tensor<3xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x, DenseI64ArrayAttr:$dims);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$x `dims` $dims attr-dict `:` type($x)";
}

def Dyn_ConcatOp : Dyn_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "join tensors along one dimension";
  let description = [{
    All inputs have one rank and element type and agree on every dimension but `dim`.

    Example:

    ```mlir
    %y = dyn.concat %a, %b dim 0 : tensor<2x3xf32>, tensor<4x3xf32>
    // %y : tensor<6x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Dyn_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$inputs `dim` $dim attr-dict `:` type($inputs)";
  let hasFolder = 1;
}

def Dyn_SliceOp : Dyn_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "basic slicing with static start/stop/step per dimension";
  let description = [{
    `x[start:stop:step, ...]` with one entry per dimension, already normalized by the frontend
    as numpy's `slice.indices` does: with a positive step `0 <= start <= stop <= size`, with a
    negative step `-1 <= stop <= start < size`. A dimension of dynamic size accepts any
    non-negative bounds.

    Example:

    ```mlir
    %y = dyn.slice %x starts [0, 1] stops [4, 7] steps [2, 3] : tensor<4x8xf32>
    // %y : tensor<2x2xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x, DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$stops,
                   DenseI64ArrayAttr:$steps);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = [{
    $x `starts` $starts `stops` $stops `steps` $steps attr-dict `:` type($x)
  }];
  let hasFolder = 1;
}

def Dyn_InsertSliceOp : Dyn_Op<"insert_slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "a copy of `dest` with a basic slice of it replaced by `source`";
  let description = [{
    The value semantics of a store through basic indexing, `x[start:stop:step, ...] = v`: the
    result is `dest` with the elements that `dyn.slice dest` with the same bounds would read
    replaced by `source`, which has exactly that slice's shape and `dest`'s element type (the
    frontend broadcasts and casts the stored value first). Bounds are normalized as for
    `dyn.slice`, with positive steps only. The frontend turns stores into its arguments into
    this op plus a write-back of the final value by the host, so the graph stays pure;
    bufferization updates `dest` in place when nothing else reads it.

    Example:

    ```mlir
    %y = dyn.insert_slice %v into %x starts [1] stops [3] steps [1]
        : tensor<2xf32> into tensor<4xf32>
    // %y : tensor<4xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$source, Dyn_Tensor:$dest, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$stops, DenseI64ArrayAttr:$steps);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = [{
    $source `into` $dest `starts` $starts `stops` $stops `steps` $steps attr-dict `:`
    type($source) `into` type($dest)
  }];
  let hasFolder = 1;
}

def Dyn_WindowOp : Dyn_Op<"window", [Pure, AttrSizedOperandSegments, InferTypeOpAdaptor]> {
  let summary = "a box of `x` at offsets and of sizes the graph computes";
  let description = [{
    Basic indexing whose bounds are values of the graph, `x[i]` or `L[i, :i]` in a loop the
    trace captured: `result[k...] = x[offsets[0] + k[0], ...]`, with one offset per dimension
    (a 0-d i64 tensor) and unit steps. The box's size in each dimension is a constant, or a
    0-d i64 tensor (`dynamic_sizes`). The frontend only makes boxes that lie inside
    `x` for every value their bounds take (a captured loop's variable has a known range); were
    one not to, its sizes are clamped into `[0, size]` and its offsets into `[0, size - box]`,
    so the op never reads outside `x`.

    Example:

    ```mlir
    %row = dyn.window %L[%i, %zero] sizes [1, %i] : tensor<8x8xf64>
    // %row : tensor<1x?xf64>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x, Variadic<Dyn_I64ScalarTensor>:$offsets,
                   Variadic<Dyn_I64ScalarTensor>:$dynamic_sizes, DenseI64ArrayAttr:$sizes);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = [{
    $x `[` $offsets `]` `sizes` custom<DynamicIndexList>($dynamic_sizes, $sizes) attr-dict `:`
    type($x)
  }];
}

def Dyn_InsertWindowOp : Dyn_Op<"insert_window", [Pure, InferTypeOpAdaptor]> {
  let summary = "a copy of `dest` with the box at offsets the graph computes replaced";
  let description = [{
    The store through a `dyn.window`, `x[i] = v`: the result is `dest` with the box of
    `source`'s shape at `offsets` (one 0-d i64 tensor per dimension) replaced by `source`, which
    has `dest`'s rank and element type. Offsets are clamped as `dyn.window` clamps them.

    Example:

    ```mlir
    %y = dyn.insert_window %v into %x[%i, %zero] : tensor<1x8xf64> into tensor<8x8xf64>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$source, Dyn_Tensor:$dest,
                   Variadic<Dyn_I64ScalarTensor>:$offsets);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = [{
    $source `into` $dest `[` $offsets `]` attr-dict `:` type($source) `into` type($dest)
  }];
}

def Dyn_CompressOp : Dyn_Op<"compress", [Pure, InferTypeOpAdaptor]> {
  let summary = "the elements or rows of `x` where `mask` is true, in row-major order (x[mask])";
  let description = [{
    A load through a boolean mask of `x`'s leading dimensions, numpy's and torch's `x[mask]`:
    the entries `x[i...]` (elements for a mask of `x`'s whole shape, else the subarrays of the
    remaining dimensions) whose mask element `mask[i...]` is true, in row-major order, stacked
    along a new first dimension. Its size is the number of true elements, which only the graph
    knows (any size, 0 and 1 included).

    Example:

    ```mlir
    %r = dyn.compress %x, %m : tensor<4x5xf32>, tensor<4x5xi1>
    // %r : tensor<?xf32>
    %s = dyn.compress %x, %rows : tensor<4x5xf32>, tensor<4xi1>
    // %s : tensor<?x5xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x, Dyn_BoolTensor:$mask);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$x `,` $mask attr-dict `:` type($x) `,` type($mask)";
}

def Dyn_GatherOp : Dyn_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "the slices of `x` along `axis` at integer indices (np.take)";
  let description = [{
    Advanced indexing by one integer array, `x[:, idx]`, `np.take(x, idx, axis)`,
    `torch.index_select` and `F.embedding`: the result has `x`'s shape with dimension `axis`
    replaced by the shape of `indices`, and holds
    `result[i..., j..., k...] = x[i..., indices[j...], k...]`. A negative index counts from
    the end, as in numpy. An index still outside `[0, size)` is clamped into it, so the op
    never reads outside `x`; the frontend checks the indices with `dyn.check` first, and the
    program runs eagerly (where numpy and torch raise) when the check fails.

    Example:

    ```mlir
    %r = dyn.gather %x[%idx] axis 0 : tensor<10x4xf32>, tensor<2x3xi64>
    // %r : tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x, Dyn_I64Tensor:$indices,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = [{
    $x `[` $indices `]` `axis` $axis attr-dict `:` type($x) `,` type($indices)
  }];
}

def Dyn_ScatterOp : Dyn_Op<"scatter", [Pure, InferTypeOpAdaptor]> {
  let summary = "`dest` with the slices along `axis` at integer indices replaced (x[idx] = v)";
  let description = [{
    A store through one index array, `x[:, idx] = v`, and, with `accumulate`, `np.add.at`
    and `torch.index_add_`: the result is `dest` where, for each `j` in order,
    `result[i..., indices[j], k...] = updates[i..., j, k...]` (`+=` with `accumulate`).
    `updates` has `dest`'s shape with dimension `axis` replaced by the number of indices,
    which may be a size only the graph knows (np.nonzero's); `dest`'s shape is static.
    Where an index repeats, the last update wins (numpy's order); with `accumulate` every
    update is added, in order. A negative index counts from the end; an index still outside
    `[0, size)` is clamped into it, so the op never writes outside `dest`: the frontend checks
    the indices with `dyn.check` first, as for `dyn.gather`.

    Example:

    ```mlir
    %r = dyn.scatter %v into %x[%idx] axis 0 : tensor<2x4xf32> into tensor<10x4xf32>, tensor<2xi64>
    // %r : tensor<10x4xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$updates, Dyn_Tensor:$dest, 1DTensorOf<[I64]>:$indices,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$axis, UnitAttr:$accumulate);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = [{
    $updates `into` $dest `[` $indices `]` `axis` $axis (`accumulate` $accumulate^)? attr-dict `:`
    type($updates) `into` type($dest) `,` type($indices)
  }];
}

//===----------------------------------------------------------------------===//
// Factorizations
//===----------------------------------------------------------------------===//

// A factorization through LAPACK (numpy's own OpenBLAS): bufferized into a new buffer for the
// result and a call to the runtime, which runs the routine on each matrix of the batch.
class Dyn_LapackOp<string mnemonic>
    : Dyn_Op<mnemonic, [Pure, InferTypeOpAdaptor,
                        DeclareOpInterfaceMethods<BufferizableOpInterface,
                          ["bufferize", "bufferizesToMemoryRead", "bufferizesToMemoryWrite",
                           "getAliasingValues", "bufferizesToAllocation"]>]> {
  let results = (outs RankedTensorOf<[F32, F64]>:$result, Dyn_BoolScalarTensor:$ok);
}

def Dyn_CholeskyOp : Dyn_LapackOp<"cholesky"> {
  let summary = "the lower Cholesky factor of each matrix (np.linalg.cholesky)";
  let description = [{
    For each matrix `a[..., :, :]`, symmetric positive definite (only its lower triangle is
    read), the lower triangular `l` with `a = l @ l^T`, zeros above the diagonal, as
    `np.linalg.cholesky` and `torch.linalg.cholesky` compute it. `ok` is false when a matrix is
    not positive definite, where numpy and torch raise: the result is then meaningless, and the
    frontend checks `ok` with `dyn.check`. CPU graphs call LAPACK's `potrf`.

    Example:

    ```mlir
    %l, %ok = dyn.cholesky %a : tensor<3x3xf64>
    // %l : tensor<3x3xf64>, %ok : tensor<i1>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, F64]>:$a);
  let assemblyFormat = "$a attr-dict `:` type($a)";
}

def Dyn_SolveOp : Dyn_LapackOp<"solve"> {
  let summary = "the solution of `a @ x = b` for each matrix (np.linalg.solve)";
  let description = [{
    For each square matrix `a[..., :, :]` and the columns of `b[..., :, :]` (the same batch),
    `x` with `a @ x = b`, as `np.linalg.solve` and `torch.linalg.solve` compute it (an LU
    factorization with partial pivoting). `ok` is false when a matrix is singular, where numpy
    and torch raise: the result is then meaningless, and the frontend checks `ok` with
    `dyn.check`. CPU graphs call LAPACK's `getrf` and `getrs`.

    Example:

    ```mlir
    %x, %ok = dyn.solve %a, %b : tensor<4x4xf64>, tensor<4x2xf64>
    // %x : tensor<4x2xf64>, %ok : tensor<i1>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, F64]>:$a, RankedTensorOf<[F32, F64]>:$b);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($a) `,` type($b)";
}

//===----------------------------------------------------------------------===//
// Sorting
//===----------------------------------------------------------------------===//

def Dyn_SortOp : Dyn_Op<"sort", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
      ["bufferize", "bufferizesToMemoryRead", "bufferizesToMemoryWrite", "getAliasingValues",
       "bufferizesToAllocation"]>]> {
  let summary = "a stable sort along one axis, and its permutation (np.sort, torch.sort)";
  let description = [{
    Each lane of `x` along `axis` sorted: `values` the sorted elements, `indices` (int64) the
    position in `x` each came from, as `np.sort`/`np.argsort(kind="stable")` and
    `torch.sort(stable=True)` compute them. The sort is stable: equal elements keep their
    order in `x`, also with `descending` (largest first), as torch's stable descending sort
    keeps it. NaN is greater than every number, as in both libraries: last in an ascending
    sort, first in a descending one. Where a library leaves the order of equal elements
    unspecified (numpy's default quicksort, torch's `stable=False`), the frontend checks that
    the lane has none.

    Bufferization gives `values` a new buffer holding a copy of `x` and `indices` a new one,
    and calls the runtime, which sorts every lane in place (addresses as integers, as the
    LAPACK ops pass them; kind 0-6 is f32, f64, i1, i8, i16, i32, i64):

      void dynamir_sort(i64 kind, i64 values, i64 indices, i64 outer, i64 n, i64 inner,
                        i64 descending)

    GPU graphs have no such function: dyn-gpu-map refuses the call. A lane of at most 16
    elements of a tensor of static shape never gets there: convert-dyn-to-linalg computes
    each element's rank in its lane and places it, on every target.

    Example:

    ```mlir
    %v, %i = dyn.sort %x axis 1 descending : tensor<4x8xf32>
    // %v : tensor<4x8xf32>, %i : tensor<4x8xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64]>:$x,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis, UnitAttr:$descending);
  let results = (outs RankedTensorOf<[F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64]>:$values,
                      RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$x `axis` $axis (`descending` $descending^)? attr-dict `:` type($x)";
}

//===----------------------------------------------------------------------===//
// Convolution the runtime computes
//===----------------------------------------------------------------------===//

def Dyn_Conv2dOp : Dyn_Op<"conv2d", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
      ["bufferize", "bufferizesToMemoryRead", "bufferizesToMemoryWrite", "getAliasingValues",
       "bufferizesToAllocation"]>]> {
  let summary = "a 2-D convolution of stride 1 computed directly, without im2col columns";
  let description = [{
    `F.conv2d(x, w, padding=padding)` of float32 images `x : [N, C, H, W]` and filters
    `w : [F, C, KH, KW]` with stride 1, dilation 1 and one group: `result[n, f, y, x]` is the
    sum over `c, i, j` of `w[f, c, i, j] * x[n, c, y + i - padding[0], x + j - padding[1]]`
    (zero outside the image), of shape `[N, F, H + 2 * padding[0] - KH + 1, W + 2 * padding[1]
    - KW + 1]`. All shapes are static.

    `dyn-direct-convolutions` makes it of the product of the filters with `dyn.unfold`'s
    columns on CPU graphs. Bufferization gives the result a new buffer and calls the runtime
    with the addresses of row-major `x`, `w` and the result (a copy of an operand that is not
    row-major):

      void dynamir_conv2d(i64 x, i64 w, i64 result, i64 n, i64 c, i64 h, i64 w, i64 f,
                          i64 kh, i64 kw, i64 pad_h, i64 pad_w)

    GPU graphs have no such function (their convolutions stay columns and a product).

    Example:

    ```mlir
    %y = dyn.conv2d %x, %w padding [1, 1] : tensor<4x32x32x32xf32>, tensor<64x32x3x3xf32>
    // %y : tensor<4x64x32x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$x, RankedTensorOf<[F32]>:$w,
                       DenseI64ArrayAttr:$padding);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$x `,` $w `padding` $padding attr-dict `:` type($x) `,` type($w)";
}

//===----------------------------------------------------------------------===//
// Host boundary
//===----------------------------------------------------------------------===//

def Dyn_ItemOp : Dyn_Op<"item", [Pure, InferTypeOpAdaptor]> {
  let summary = "the value of a 0-d tensor on the host";
  let description = [{
    `tensor.item()`, `float(t)`, `int(t)`: the point where a real value must exist on the host
    (on a GPU, a device-to-host copy and a sync). The result is the element as a scalar.

    Example:

    ```mlir
    %v = dyn.item %s : tensor<f32>
    // %v : f32
    ```
  }];
  let arguments = (ins 0DTensorOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32,
                                      UI64]>:$x);
  let results = (outs Dyn_ElementType:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasFolder = 1;
}

def Dyn_ToBoolOp : Dyn_Op<"to_bool", [Pure]> {
  let summary = "the truth value of a 0-d tensor on the host";
  let description = [{
    `bool(t)` and `if t:`: true when the single element is non-zero. Like `dyn.item`, this is
    where the host needs a real value.

    Example:

    ```mlir
    %b = dyn.to_bool %p : tensor<i1>
    ```
  }];
  let arguments = (ins 0DTensorOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32,
                                      UI64]>:$x);
  let results = (outs I1:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasFolder = 1;
}

def Dyn_CheckOp : Dyn_Op<"check"> {
  let summary = "a condition the compiled code relies on, checked on the host";
  let description = [{
    Where numpy or torch would raise on some values (an index out of bounds), the graph
    computes a result that is safe to compute but meaningless for them, and this op reads
    whether the values were fine. When `%ok` is false, the host program stops before anything
    it computed becomes visible (results, stores into arguments, replayed side effects), and
    the frame runs eagerly from its start, where the program raises as it would without
    Dynamir. `reason` is logged. The frontend places checks at the end of the trace.

    Example:

    ```mlir
    dyn.check %ok, "an index of L['idx'] is out of bounds" : tensor<i1>
    ```
  }];
  let arguments = (ins Dyn_BoolScalarTensor:$ok, StrAttr:$reason);
  let assemblyFormat = "$ok `,` $reason attr-dict `:` type($ok)";
  let hasCanonicalizeMethod = 1;
}

def Dyn_SourceOp : Dyn_Op<"source", [Pure]> {
  let summary = "a Python object named by its source";
  let description = [{
    Reads the Python object at a Dynamo-style source (`L['xs']`, `G['np']`,
    `L['self'].linear`) for the host program.

    Example:

    ```mlir
    %xs = dyn.source "L['xs']" : !dyn.pyobj
    ```
  }];
  let arguments = (ins StrAttr:$source);
  let results = (outs Dyn_PyObjType:$result);
  let assemblyFormat = "$source attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

class Dyn_GuardOp<string mnemonic, int cost, list<Trait> traits = []>
    : Dyn_Op<"guard." # mnemonic,
             !listconcat(traits, [DeclareOpInterfaceMethods<Dyn_GuardOpInterface>])> {
  // The definition of getSource for a guard without a `source` attribute.
  code sourceDefinition = "";
  let extraClassDefinition = [{
    unsigned $cppClass::getCost() { return }] # cost # [{; }
  }] # sourceDefinition;
}

def Dyn_TensorMatchGuardOp : Dyn_GuardOp<"tensor_match", 4> {
  let summary = "the object at `source` is a tensor of this type, dtype and shape";
  let description = [{
    Checks that the Python object at `source` has the exact type `type_name`
    (`numpy.ndarray`, `torch.Tensor`), the operand's element type and rank, and the operand's
    static sizes. A `?` dimension (`dynamic=True`) is checked by `symbols`, one entry per
    dimension (-1 for a static one): a dynamic size is at least 2 (sizes 0 and 1 are traced as
    static, as Dynamo specializes them: broadcasting depends on them), and dimensions with the
    same symbol, in this and the function's other tensor matches, have equal sizes (the trace
    combined them: `x + y`, a product's contracted dimension). `contiguous` is whether the
    array or tensor is C-contiguous, checked both ways: the trace of a strided one relied on
    its being strided (`x.contiguous()` made a copy). A strided one of static sizes has its
    `strides` (in elements) checked exactly, as Dynamo checks them: the trace relied on them
    (whether `x[0]` is contiguous, how numpy and torch lay out `x * 2`). With `written` the
    program stores into
    the object (the host
    writes the graph's final value back into it), so it must be writeable and share no memory
    with any other tensor the function takes: otherwise a store through it would change what
    another argument reads, which the graph does not model. A torch tensor's `requires_grad`
    must equal `requires_grad` (which `x.requires_grad` reads); one that requires
    grad must be called with autograd disabled, unless `no_grad`: the program reads it only
    inside `with torch.no_grad()`, where eager results do not require grad either. The operand
    is the function argument the object is passed as.

    Example:

    ```mlir
    dyn.guard.tensor_match "L['x']", %arg0 type "torch.Tensor" contiguous : tensor<3xf32>
    dyn.guard.tensor_match "L['u']", %arg1 type "numpy.ndarray" written : tensor<8xf64>
    dyn.guard.tensor_match "L['t']", %arg3 type "torch.Tensor" strides [1, 4] : tensor<4x3xf32>
    dyn.guard.tensor_match "L['w']", %arg2 type "torch.nn.parameter.Parameter" contiguous
        requires_grad no_grad : tensor<4x4xf32>
    dyn.guard.tensor_match "L['a']", %arg4 type "numpy.ndarray" contiguous symbols [0, -1]
        : tensor<?x3xf32>
    ```
  }];
  let arguments = (ins StrAttr:$source, Dyn_Tensor:$value, StrAttr:$type_name,
                   UnitAttr:$contiguous, UnitAttr:$written, UnitAttr:$requires_grad,
                   UnitAttr:$no_grad, OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$symbols);
  let assemblyFormat = [{
    $source `,` $value `type` $type_name (`contiguous` $contiguous^)? (`strides` $strides^)?
    (`symbols` $symbols^)? (`written` $written^)?
    (`requires_grad` $requires_grad^)? (`no_grad` $no_grad^)? attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Dyn_TypeMatchGuardOp : Dyn_GuardOp<"type_match", 1> {
  let summary = "the object at `source` has exactly this Python type";
  let description = [{
    `type_name` is the qualified name of the type (`builtins.int`, `torch.nn.Linear`).

    Example:

    ```mlir
    dyn.guard.type_match "L['n']", "builtins.int"
    ```
  }];
  let arguments = (ins StrAttr:$source, StrAttr:$type_name);
  let assemblyFormat = "$source `,` $type_name attr-dict";
  let hasCanonicalizer = 1;
}

def Dyn_IdMatchGuardOp : Dyn_GuardOp<"id_match", 0> {
  let summary = "the object at `source` is this very object";
  let description = [{
    Checks object identity (`id(obj)`), as for modules and functions read from globals.
    `description` names the object for people reading the IR.

    Example:

    ```mlir
    dyn.guard.id_match "G['np']", 140234425 {description = "<module 'numpy'>"}
    ```
  }];
  let arguments = (ins StrAttr:$source, I64Attr:$id, OptionalAttr<StrAttr>:$description);
  let assemblyFormat = "$source `,` $id attr-dict";
}

def Dyn_ValueEqGuardOp : Dyn_GuardOp<"value_eq", 2> {
  let summary = "the Python scalar at `source` equals this value";
  let description = [{
    The trace specialized on a Python scalar: an integer (`i64`), a float (`f64`), a bool
    (`i1`), a string, or `unit` for `None`. The type is checked too (`1 == 1.0` does not hold).

    Example:

    ```mlir
    dyn.guard.value_eq "L['n']", 3 : i64
    dyn.guard.value_eq "L['mode']", "fast"
    ```
  }];
  let arguments = (ins StrAttr:$source, AnyAttr:$value);
  let assemblyFormat = "$source `,` $value attr-dict";
  let hasVerifier = 1;
}

def Dyn_LenEqGuardOp : Dyn_GuardOp<"len_eq", 1> {
  let summary = "the tuple or list at `source` has this length";
  let description = [{
    Example:

    ```mlir
    dyn.guard.len_eq "L['shapes']", 2
    ```
  }];
  let arguments = (ins StrAttr:$source, ConfinedAttr<I64Attr, [IntNonNegative]>:$length);
  let assemblyFormat = "$source `,` $length attr-dict";
}

def Dyn_DictKeysGuardOp : Dyn_GuardOp<"dict_keys", 1> {
  let summary = "the dict at `source` has exactly these keys, in this order";
  let description = [{
    The trace iterated over the dict, or reads its items by key: it assumed these keys (strings
    or integers) in this order.

    Example:

    ```mlir
    dyn.guard.dict_keys "L['params']", ["w", "b"]
    ```
  }];
  let arguments = (ins StrAttr:$source, ArrayAttr:$keys);
  let assemblyFormat = "$source `,` $keys attr-dict";
  let hasVerifier = 1;
}

def Dyn_DistinctGuardOp : Dyn_GuardOp<"distinct", 1> {
  let summary = "the object at `source` is none of the objects at `others`";
  let description = [{
    The program changes the object at `source` (a list, a dict, an object's attributes), and
    the host replays the change on it after the graph. The trace modelled the objects it read
    through `others` as different objects: were one of them the same object, it would see the
    change, which the trace did not.

    Example:

    ```mlir
    dyn.guard.distinct "L['history']", ["L['config'].items", "G['CACHE']"]
    ```
  }];
  let arguments = (ins StrAttr:$source, StrArrayAttr:$others);
  let assemblyFormat = "$source `,` $others attr-dict";
}

def Dyn_GradModeGuardOp : Dyn_GuardOp<"grad_mode", 1> {
  let summary = "torch's autograd is enabled, or disabled, when the frame is called";
  let description = [{
    The trace read `torch.is_grad_enabled()` outside a `with torch.no_grad()` block of its own
    and took its value, as Dynamo's global-state guard does: `enabled` is what it must return
    when the frame is called. The guard has no object to read; its source is that call.

    Example:

    ```mlir
    dyn.guard.grad_mode false
    ```
  }];
  let arguments = (ins BoolAttr:$enabled);
  let assemblyFormat = "$enabled attr-dict";
  let sourceDefinition = [{
    ::llvm::StringRef $cppClass::getSource() { return "torch.is_grad_enabled()"; }
  }];
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

def Dyn_IfOp : Dyn_Op<"if", [RecursiveMemoryEffects, NoRegionArguments,
                             SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a data-dependent branch traced on both sides";
  let description = [{
    `if t:` on a tensor value: both branches were traced with fake tensors, both are pure
    tensor code, and they rejoin with the same types. The predicate is a 0-d i1 tensor that
    stays on the device; passes either keep the branch there (`scf.if`) or split it into
    separate graphs with a host decision.

    Example:

    ```mlir
    %r = dyn.if %p : tensor<i1> -> tensor<3xf32> {
      %s = dyn.sin %x : tensor<3xf32>
      dyn.yield %s : tensor<3xf32>
    } else {
      dyn.yield %x : tensor<3xf32>
    }
    ```
  }];
  let arguments = (ins Dyn_BoolScalarTensor:$predicate);
  let results = (outs Variadic<Dyn_LiveValue>:$results);
  let regions = (region SizedRegion<1>:$then_region, SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $predicate `:` type($predicate) (`->` type($results)^)? $then_region `else` $else_region
    attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Dyn_ForOp : Dyn_Op<"for", [RecursiveMemoryEffects,
                               AllTypesMatch<["lower", "upper", "step"]>,
                               SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a Python `for` loop over a range, traced once";
  let description = [{
    `for i in range(lower, upper, step):` whose body is the same code in every iteration:
    the tracer traced the body once, with `i` a 0-d i64 tensor (the body's first argument) and
    the values the loop changes (the tensors its variables hold) carried from one iteration to
    the next (`iter_args`, then the body's further arguments, which the body yields). The
    results are the carried values after the last iteration. The bounds are 0-d i64 tensors;
    the step is positive. The IR, and the time to compile it, do not grow with the trip count.

    Example:

    ```mlir
    %u = dyn.for %lb, %ub, %step iter_args(%u0 : tensor<64xf64>) -> tensor<64xf64> {
    ^bb0(%i: tensor<i64>, %u: tensor<64xf64>):
      %v = dyn.mul %u, %c : tensor<64xf64>, tensor<f64>
      dyn.yield %v : tensor<64xf64>
    }
    ```
  }];
  let arguments = (ins Dyn_I64Tensor:$lower, Dyn_I64Tensor:$upper, Dyn_I64Tensor:$step,
                   Variadic<Dyn_Tensor>:$inits);
  let results = (outs Variadic<Dyn_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $lower `,` $upper `,` $step (`iter_args` `(` $inits^ `:` type($inits) `)`)?
    (`->` type($results)^)? $body attr-dict `:` type($lower)
  }];
  let hasVerifier = 1;
}

def Dyn_WhileOp : Dyn_Op<"while", [RecursiveMemoryEffects,
                                   SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a Python `while` loop on a tensor condition, traced once";
  let description = [{
    `while cond:` where `cond` is computed from tensors and the body is the same code in every
    iteration. CPython tests the condition before the first iteration and again at the end of
    each (its bytecode has the test twice); the op keeps that shape: `predicate` is the first
    test, and the body yields the next test's 0-d i1 predicate first, then the carried values
    (the body's arguments, initially `inits`). The body runs while the last predicate is true;
    the results are the carried values after the last iteration (`inits` when the first test
    is false). The decision stays where the graph runs (`scf.while`): no host round trip per
    iteration on the CPU. The IR does not grow with the trip count, which no one knows.

    Example:

    ```mlir
    %x = dyn.while %p0 : tensor<i1> iter_args(%x0 : tensor<64xf64>) -> tensor<64xf64> {
    ^bb0(%x: tensor<64xf64>):
      %y = dyn.mul %x, %half : tensor<64xf64>, tensor<f64>
      %m = dyn.max %y dims [0] : tensor<64xf64>
      %p = dyn.gt %m, %tol : tensor<f64>, tensor<f64>
      dyn.yield %p, %y : tensor<i1>, tensor<64xf64>
    }
    ```
  }];
  let arguments = (ins Dyn_BoolScalarTensor:$predicate, Variadic<Dyn_Tensor>:$inits);
  let results = (outs Variadic<Dyn_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $predicate `:` type($predicate) (`iter_args` `(` $inits^ `:` type($inits) `)`)?
    (`->` type($results)^)? $body attr-dict
  }];
  let hasVerifier = 1;
}

def Dyn_YieldOp : Dyn_Op<"yield", [Pure, Terminator, ReturnLike,
                                   ParentOneOf<["IfOp", "ForOp", "WhileOp"]>]> {
  let summary = "the values a `dyn.if` branch or a `dyn.for` or `dyn.while` iteration produces";
  let description = [{
    In a `dyn.if`, `fresh` lists the positions of the values that are arrays the branch side
    made (eagerly each is a new Python object) and `traced` those of arrays the trace made
    before the branch (`r = v`: that object, never one of the caller's). Folds may turn either
    into an argument (`np.where(c, x, x)` is `x`), and a fresh one into any value from outside
    the side: where the side runs on the host, the host program hands out a copy of such a
    value, not the caller's array or another live array.

    Example:

    ```mlir
    dyn.yield %a, %b : tensor<3xf32>, tensor<i1>
    dyn.yield {fresh = array<i64: 0>, traced = array<i64: 1>} %x, %y : tensor<3xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Variadic<Dyn_LiveValue>:$values, OptionalAttr<DenseI64ArrayAttr>:$fresh,
                   OptionalAttr<DenseI64ArrayAttr>:$traced);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>,
                  OpBuilder<(ins "::mlir::ValueRange":$values), [{
                    build($_builder, $_state, values, ::mlir::DenseI64ArrayAttr(),
                          ::mlir::DenseI64ArrayAttr());
                  }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let hasVerifier = 1;
}

def Dyn_GraphBreakOp : Dyn_Op<"graph_break", [Terminator,
                                              ParentOneOf<["::mlir::func::FuncOp"]>]> {
  let summary = "where the trace stops and the host takes over";
  let description = [{
    Ends a traced function: the graph so far computes `live`, the arrays the host needs to
    recreate the frame state at the break (tensors on the bytecode stack and in the locals
    that the trace computed; arguments are read back from the caller, and a frame that must
    restart eagerly needs none). The host then runs the breaking instruction for real and
    resumes the bytecode at one of `resume` (byte offsets into the code object; a
    `data_dependent_branch` has two, for the true and the false target, and its first live
    value is the predicate) in a compiled continuation. `reason` says why in words, `kind` in a
    category, and `file`:`line` where.

    Example:

    ```mlir
    dyn.graph_break data_dependent_branch "if on a tensor with side effects in a branch"
        at "model.py" : 12 resume [40, 58] (%p, %x : tensor<i1>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins Dyn_BreakKind:$kind, StrAttr:$reason, StrAttr:$file, I64Attr:$line,
                   DenseI64ArrayAttr:$resume, Variadic<Dyn_LiveValue>:$live);
  let assemblyFormat = [{
    $kind $reason `at` $file `:` $line `resume` $resume (` ` `(` $live^ `:` type($live) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

#endif // DYNAMIR_DIALECT_DYN_DYNOPS_TD
