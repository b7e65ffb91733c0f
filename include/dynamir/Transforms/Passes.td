//===- Passes.td - Dynamir transformation passes -----------*- tablegen -*-===//

#ifndef DYNAMIR_TRANSFORMS_PASSES_TD
#define DYNAMIR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DynOptimizeGuards : Pass<"dyn-optimize-guards"> {
  let summary = "Hoist, deduplicate, simplify and order the guards of each traced function";
  let description = [{
    Brings the guards of every traced function (any function-like op nested in the anchor)
    into the form the runtime evaluates:

    * every guard moves to the run of guards at the top of the entry block (guards are
      assumptions about the inputs and hold for the whole trace);
    * duplicate guards merge, a type match implied by a tensor match of the same source goes,
      and a tensor match on a value computed inside the function (known to hold) goes;
    * the guards are stably ordered by cost (identity, then type and length, then scalar value,
      then tensor checks), so that a miss is found by the cheapest check;
    * the function gets a `dyn.guards` attribute: an array with one dictionary per guard
      (`kind`, `source`, and the guard's attributes; tensor matches add `type` and `arg`), which
      the runtime reads without walking the IR.

    Example:

    ```mlir
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = dyn.sin %x : tensor<3xf32>
      dyn.guard.tensor_match "L['x']", %x type "numpy.ndarray" : tensor<3xf32>
      dyn.guard.id_match "G['np']", 7
      return %y : tensor<3xf32>
    }
    ```

    becomes a function whose first two ops are the `id_match`, then the `tensor_match`, and
    whose `dyn.guards` attribute lists both in that order.
  }];
  let dependentDialects = ["::dynamir::dyn::DynDialect"];
}

def DynSplitGraphs : Pass<"dyn-split-graphs", "mlir::ModuleOp"> {
  let summary = "Split traced functions into device graphs and a host program";
  let description = [{
    Turns each traced function into

    * **graphs**: private `func.func`s marked `dyn.graph`, pure tensor compute that a backend
      compiles as a unit (the runtime compiles each one lazily, on its first call);
    * a **host program**: the original function, keeping its name and signature, holding the
      guards, `func.call`s of the graphs, `dyn.to_bool` on predicates (where the host syncs),
      `scf.if` over the branch graphs, and the final `return` or `dyn.graph_break`.

    A data-dependent `dyn.if` becomes: the graph before it (which computes the predicate and
    every value the rest needs), a host branch, and one graph per side (none for a side that
    only forwards values). The code after the join is its own graph, shared by both paths rather
    than duplicated into each: duplication would compile the tail twice and grow code with every
    further `if` (2^n tails for n ifs), to save one call on a path that already pays a host
    sync. Each side hands out the Python objects eager code would: where a fold turned an
    array the `dyn.yield` marks `fresh` or `traced` into a caller's argument (or a fresh one
    into any value from outside the side), the side's graph hands out a copy
    (`dyn.cast {copy}`), not the caller's array.

    A `dyn.if` stays inside its graph (and later becomes `scf.if`) when `capture-control-flow`
    is set, when the module carries `dyn.capture_control_flow` (the user's
    `capture_control_flow=True`), when it computes 0-d values alone (the Python numbers and
    bools of `total += v` under `if v > 0:`, or the bool that picks a string), or when both
    sides together have at most `max-device-branch-ops` compute ops (default 0). Keeping a
    cheap branch on the device avoids a device-to-host sync and two graph launches at the cost
    of computing the predicate's branch on the device.
  }];
  let options = [
    Option<"captureControlFlow", "capture-control-flow", "bool", /*default=*/"false",
           "Keep every data-dependent if on the device">,
    Option<"maxDeviceBranchOps", "max-device-branch-ops", "unsigned", /*default=*/"0",
           "Keep an if on the device when both sides have at most this many compute ops">
  ];
  let dependentDialects = ["::dynamir::dyn::DynDialect", "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect"];
}

def DynMathApproximation : Pass<"dyn-math-approximation", "::mlir::ModuleOp"> {
  let summary = "Replace f32 transcendental math ops by vectorizable polynomial approximations";
  let description = [{
    Rewrites `math.sin`, `cos`, `exp`, `log`, `tanh`, `erf`, ... on f32 (scalars and vectors)
    into upstream's polynomial approximations, plain arithmetic accurate to float32 rounding
    (not `atan` and `atan2`: upstream's atan2 was 41 ulp off; they stay libm calls). tanh from
    |x| = 0.625 on is `1 - 2 / (exp(2|x|) + 1)` with x's sign: upstream's was 1 for every |x|
    above 7.9988, up to 4 ulp before tanh rounds to 1. A call to libm in a loop stops LLVM's vectorizer; the approximations let a fused
    elementwise loop vectorize to the host's full vector width. f64 ops are left to libm.
    Upstream's exp flushes results below 2^-126 to zero; inputs below -87 are shifted into the
    normal range first and the result scaled back, so subnormal results stay numpy's. Upstream's
    sin and cos reduce the argument with one float32 constant (an error of 6e-6 at |x| ~ 100,
    and meaningless results beyond 2^24); here the argument is first reduced by half periods,
    with fused multiply-adds (pi in three float32 parts) below 2^16 and exactly, by Payne-Hanek
    in integer arithmetic on a table of the bits of 4/pi (a private `memref.global` of the
    module), above: at most 1.9 ulp from 0.1 to 3.4e38. The exact reduction is left out when
    the argument is provably below 2^16 (a sin's result plus a constant, say). Otherwise a
    scalar calls it, as a private function named `__dynamir_lanewise_sin` (or `_cos`), under a
    branch taken only from 2^16 up; the runtime gives that function masked vector variants so
    that LLVM's loop vectorizer keeps such a loop vectorized (`LanewiseCalls.h`). A vector
    computes both reductions and selects. sin r, |r| <= pi/2, is then one odd polynomial.

    Upstream exposes these rewrites only as a test pass; this is the production one.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def DynFuseElementwise : Pass<"dyn-fuse-elementwise"> {
  let summary = "Fuse elementwise producers into consumers that compute each element once";
  let description = [{
    Upstream's elementwise fusion (`linalg-fuse-elementwise-ops`) with one more rule: a
    producer is fused into a consumer only where the consumer reads it with every one of its
    loops (an indexing map that uses all loop dimensions), so each produced element is computed
    exactly once. Fusing into a contraction reads the producer once per output column instead:
    `fc2(gelu(fc1(x)))` on a 4x64x256 input recomputed the GELU 256 times per element (57 ms,
    torch 1.3 ms) and the contraction no longer matched `dyn-blas`. Such producers are
    materialized; reductions over all of a producer's elements (sums, norms, softmax
    denominators) still fuse. Reshapes fold into all-parallel generics only, for the same
    reason (folding them into a contraction undoes the collapse that makes it a BLAS call).

    When no producer fuses any more, all-parallel generics of static loops that read a common
    input merge into one generic with the results of both (at the later one's place, if no
    use of the earlier one's results comes between), and producers they both read become
    single-use and fuse in: the butterfly's `even + w * odd` and `even - w * odd` were three
    passes over the data and are one (0.193 -> 0.149 ms for 2^16 complex128 values).

    Example: in

    ```mlir
    %g = linalg.generic {... iterator_types = ["parallel", "parallel"]} ins(%h) ... // gelu
    %y = linalg.generic {indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (k, n),
                                          (m, n, k) -> (m, n)], ...} ins(%g, %w) ...
    ```

    `%g` stays its own loop, while an elementwise `%g` feeding a sum over `(m, k)` is fused.

    With `recompute-shared` (GPU graphs), a producer with several users also fuses into each of
    them when each reads every element once: a softmax's `e = exp(x - max)`, read by the row
    sums and by `e / sum`, becomes part of both, the form whose reductions and final op
    `dyn-gpu-map` makes one kernel that reads the row once (an exp costs less there than a
    pass through memory).
  }];
  let options = [
    Option<"recomputeShared", "recompute-shared", "bool", /*default=*/"false",
           "fuse a producer into each of several consumers that read every element once">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def DynSplitReductions : Pass<"dyn-split-reductions"> {
  let summary = "Sum large float reductions in blocks, then sum the block partials";
  let description = [{
    A `linalg.generic` on tensors that reduces one dimension of static size N >= 2 *
    `block-size` with a reassociable float add (what `convert-dyn-to-linalg` emits for sums
    and means) becomes: partial sums of the `block-size`-element blocks
    (`linalg::splitReduction`), the sum of the partials, and the tail of N % `block-size`
    elements accumulated onto that. Every accumulator then adds few values, so the error stays
    at numpy's pairwise-summation level for any N, while each level still vectorizes. Run it
    after elementwise fusion: producers fused into the reduction stay fused (the reshape is of
    the fused op's inputs). Reductions with a keepdim output (a constant in an indexing map)
    stay whole: `linalg::splitReduction` would build an invalid map from it.

    Maxima and minima (`arith.maximumf` / `minimumf`, exact in any order, NaN included) along
    the input's innermost dimension are split the same way: the block maxima of a row read it
    front to back in vectorized 1024-element runs (x.max(axis=1) on 4096x4096: 3.1 ms ->
    2.0-2.3 ms, numpy's time). Maxima along other dimensions already vectorize across the
    innermost one and stay as they are.

    A reduction of every element of static arrays read whole and in order (`x.sum()` of a 2-D
    `x`, producers fused) is first rewritten over the arrays collapsed to one dimension, so it
    splits too: one accumulator over 16M floats was off by 6.5e-6 relative (numpy: 3.6e-8; now
    2.6e-8), and GPU graphs get a reduction they can map.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"1024",
           "Elements summed per partial">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def DynFuseProductOperands : Pass<"dyn-fuse-product-operands"> {
  let summary = "Compute a batched product one batch element at a time, with the copies that "
                "feed it";
  let description = [{
    A convolution is a window copy (`dyn.unfold`, im2col) and a product per image. As two ops,
    the copy writes the columns of every image before the first product reads any: 4.7 MB for
    a 3x3 convolution of 4x32x32x32, which leaves the cache and comes back. On tensors, every
    batched product (`C[b,m,n] += A[m,k] * B[b,k,n]`, what `dyn-blas` takes) of static sizes
    whose outermost batch loop has at least two elements, and at least `threads`, and one of
    whose batched inputs is produced by a copy (a `linalg.generic` that only yields its input,
    through reshapes) is tiled along that loop by one, as an `scf.forall`, and the producers
    that only move elements are fused into it: the copy, a `tensor.pad` before it, the fill of
    the result. Each iteration then writes one image's columns (1.2 MB there) and multiplies
    them while they are in the cache; computations are never fused (they would run again for
    their other users). After bufferization the loop is an `scf.parallel` whose iterations the
    threads share (`dyn-blas` and `dyn-cpu-parallel` split nothing nested in it). The residual
    block of bench/models.py (2 threads, same run): 1.41 -> 1.01 ms, LeNet 1.04 -> 0.83 ms.

    Example:

    ```mlir
    %cols = linalg.generic {...copy of each window...} ins(%padded : tensor<4x32x34x34xf32>)
        outs(%e : tensor<4x32x3x3x32x32xf32>) -> tensor<4x32x3x3x32x32xf32>
    %b = tensor.collapse_shape %cols [[0], [1, 2, 3], [4, 5]] : ... into tensor<4x288x1024xf32>
    %c = linalg.generic {...C[b,m,n] += A[m,k] * B[b,k,n]...}
        ins(%w, %b : tensor<32x288xf32>, tensor<4x288x1024xf32>) outs(%zero : ...)
    ```

    becomes

    ```mlir
    %c = scf.forall (%i) in (4) shared_outs(%out = %init) -> (tensor<4x32x1024xf32>) {
      // the padding, the window copy and the fill of image %i, then its product
      %ci = linalg.generic {...} ins(%w, %bi : tensor<32x288xf32>, tensor<1x288x1024xf32>) ...
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %ci into %out[%i, 0, 0] [1, 32, 1024] [1, 1, 1] : ...
      }
    }
    ```
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "1",
           "threads that will share the loop's iterations (a batch smaller stays one op)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def DynCPULoopOrder : Pass<"dyn-cpu-loop-order"> {
  let summary = "Order the loops of linalg reductions and contractions for the CPU";
  let description = [{
    Loops lowered from a `linalg.generic` nest in iteration-space order, so the innermost loop
    decides how memory is walked and whether LLVM can vectorize. For every generic with a
    reduction loop (named ops should be generalized first), the loop that is the last index of
    the most operands (stride-1 access) becomes the innermost: `C[m,n] += A[m,k] * B[k,n]`
    runs m-k-n (unit stride on B and C), `x[m,k] * W[n,k]` (linear) keeps k innermost as a dot
    product. When the op's only input spans every loop and already has that loop last (a
    reduction of one array, its producers fused), all loops follow that input's layout, so it is
    read front to back: the block partials of a split row sum walk each row once instead of a
    block of every row per pass (x.sum(axis=1) on 4096x4096: 5.3 ms -> 2.0 ms). Generics whose
    maps have constant results (keepdim outputs) are not interchanged. When a float add
    reduction ends up innermost it may reassociate (as BLAS does), which lets LLVM keep vector
    partial sums. All-parallel generics keep their row-major order.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def DynDistinctResults : Pass<"dyn-distinct-results"> {
  let summary = "Return a copy for each repeat of a tensor a function already returns";
  let description = [{
    A graph may return one tensor at several positions (`return %b, %b`, e.g. after
    `maximum(b, b)` folds to `b`). Bufferized, that is one buffer at several positions:
    `buffer-results-to-out-params` crashes on it (it hoists the one allocation once per
    position), and a caller that owns each returned buffer would free it twice. The runtime
    maps results by position, so the signature must stay: every repeat of a returned tensor is
    replaced by a copy (`bufferization.alloc_tensor ... copy`), which bufferizes to its own
    buffer. Runs on every `func.return` nested in the anchor, on tensors, before bufferization.

    Example:

    ```mlir
    return %b, %b : tensor<4xf32>, tensor<4xf32>
    ```

    becomes

    ```mlir
    %copy = bufferization.alloc_tensor() copy(%b) : tensor<4xf32>
    return %b, %copy : tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def DynStripGuards : Pass<"dyn-strip-guards"> {
  let summary = "Erase guards before a module is lowered to native code";
  let description = [{
    Guards are checks on the caller's Python objects (their types, identities, values and
    tensor layouts) that the runtime evaluates before it runs any compiled code, from the
    `dyn.guards` list `dyn-optimize-guards` attaches to each function. Compiled code never sees
    those objects, so a host program lowered to LLVM or NVVM (as in
    `tensor-opt examples/seed.mlir -dyn-split-graphs -dyn-to-linalg -dyn-lower-to-llvm`) has
    nothing to check them against: `dyn-lower-to-llvm` and `dyn-lower-to-nvvm` start with this
    pass, which erases every op implementing `GuardOpInterface`. Graphs carry no guards.
  }];
}

def DynGPULibdevice : Pass<"dyn-gpu-libdevice", "mlir::ModuleOp"> {
  let summary = "Call libdevice for the libm functions that graphs call";
  let description = [{
    Some elementwise dyn ops are libm calls on the CPU, where no closed form of arith and math
    ops is libm's function bit for bit (`dyn.hypot`: numpy calls libm's `hypot`). On the GPU
    the same calls go to libdevice's twins (`__nv_hypot`, `__nv_hypotf`), which
    `gpu-module-to-binary` links: this pass renames the declarations and every call of them in
    the module, before kernels are outlined. Unrenamed, ptxas would reject the kernel for an
    unresolved extern function.

    Example: `func.func private @hypot(f64, f64) -> f64` and `func.call @hypot(%a, %b)` become
    `@__nv_hypot`.
  }];
}

def DynGPUMap : Pass<"dyn-gpu-map"> {
  let summary = "Map bufferized elementwise ops and row reductions to GPU kernels";
  let description = [{
    Writes the two kernel shapes Dynamir's graphs are made of as `gpu.launch` ops, on the
    bufferized `linalg.generic` ops, where upstream's parallel-loop mapping falls short:

    * an all-parallel generic whose outputs are plain buffers (static shape, identity layout)
      and whose innermost size is a multiple of 16 bytes: each thread computes 16 bytes of the
      output (4 f32), reading operands in the output's order with one 16-byte aligned
      `vector.load` (`ld.global.v4.f32` in PTX) and writing with one `vector.store`; broadcast
      or transposed operands are loaded per element;
    * a reduction over the innermost loop of at most two loops (row sums, maxima and softmax's
      statistics), ending in `acc = combine(value, acc)`: one block per row, threads stride over
      the row (16-byte loads when every row operand allows), then a `gpu.all_reduce` (warp
      shuffles and shared memory after upstream's lowering), and thread 0 folds the total into
      the output's initial value.

    * a chain of row reductions ending in an elementwise op over the same `[rows, n]` input,
      consecutive in a block with the fills that start the reductions (softmax: max, sum of
      `exp(x - max)`, normalize): one kernel, one block per row, each thread keeping its
      elements of the row in registers (up to 8 x 16 bytes), every reduction an all-reduce
      whose value all threads use, so the input is read once and the output written once.

    Elementwise generics that cannot move 16 bytes per thread (odd row lengths, 0-d results
    such as a predicate) run one element per thread; other generics with a parallel loop are
    left for `convert-linalg-to-parallel-loops`, and one without (argmin of a whole array)
    runs as loops in a single GPU thread. Named ops other than fills are generalized first,
    and copies between views become copy generics.

    An `if` kept in the graph (`capture_control_flow`) is decided on the device when its
    sides hold only kernels and buffers: both sides' kernels are launched, each reads the
    predicate from device memory and returns at once on the side not taken, and each side
    copies its results into buffers allocated before the `if`: no host round trip. Host-side `memref.alloc`,
    `memref.dealloc` and `memref.copy` become `gpu.alloc`, `gpu.dealloc` and `gpu.memcpy`: all
    buffers of a GPU graph live in device memory.

    The 16-byte alignment the vector accesses claim holds because plain buffers start at the
    allocation (the runtime's and cuMemAlloc's are 256-byte aligned) and each thread's first
    element is a multiple of 16 bytes into its row.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256", "threads per block">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::affine::AffineDialect"];
}

def DynForwardCopies : Pass<"dyn-forward-copies"> {
  let summary = "Write a buffer's producer into the buffer it is copied to";
  let description = [{
    Bufferization computes each part of a concatenation (and of any insertion into a tensor
    the graph allocates) into a buffer of its own, then copies it into the result: the
    butterfly's two halves were written twice. On bufferized IR, where a `linalg.generic`
    writes a whole temporary buffer (an allocation used only by it, as an output its payload
    does not read, and by one `memref.copy` from it later in the block), the generic writes
    into the copy's target instead and the copy and the allocation go. Only where that is
    unobservable: the target is a view of an allocation of the function that the generic does
    not read (an input of it may not alias the target: `u[1:-1] = f(u)` keeps its
    temporary) and no op between the generic and the copy uses, and other outputs of the
    generic on the same allocation do not overlap it. Upstream's `eliminate-empty-tensors`
    works on tensors before the analysis: it also rewrote the heat stencil's in-place update,
    and bufferization then copied every slice it read (0.8 -> 3.8 ms); and one-shot
    bufferization does not prove the two outputs of one generic disjoint slices of a result.

    Example:

    ```mlir
    %tmp = memref.alloc() : memref<4xf32>
    linalg.generic ... outs(%tmp : memref<4xf32>)
    %part = memref.subview %result[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    memref.copy %tmp, %part : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
    ```

    becomes `linalg.generic ... outs(%part : ...)` with the subview before it.
  }];
}

def DynStridedCopies : Pass<"dyn-strided-copies"> {
  let summary = "Copy strided buffers with loops instead of the runtime's memrefCopy";
  let description = [{
    Bufferization copies slices, concatenation pieces and reshapes of views with
    `memref.copy`. Between identity layouts that becomes a `memcpy`; any other layout calls
    MLIR's C runner `memrefCopy`, which walks the elements one by one through generic index
    arithmetic: the im2col columns of one 3x3 convolution on a 4x32x32x32 input took 7.9 ms
    that way (torch: 0.4 ms for the whole convolution). This pass turns every `memref.copy`
    whose source or target is not contiguous into a `linalg.copy`, which becomes a loop nest
    with unit-stride inner loops that LLVM vectorizes. Contiguous copies stay `memcpy`s.

    Example:

    ```mlir
    memref.copy %a, %b : memref<4x32xf32, strided<[34, 1]>> to memref<4x32xf32>
    ```

    becomes `linalg.copy ins(%a : ...) outs(%b : ...)`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def DynBlas : Pass<"dyn-blas", "mlir::ModuleOp"> {
  let summary = "Call a runtime sgemm/dgemm for f32 and f64 matrix products";
  let description = [{
    Loops lowered from linalg compute a matrix product without register blocking or packing
    (`x @ W` ran at 0.19x numpy's speed on the CPU, a float64 product 0.16x). On bufferized IR,
    every `linalg.generic` computing `C[m,n] += A[m,k] * B[k,n]` in f32 or f64, in any loop
    order and with A or B transposed in memory, on buffers whose rows are contiguous, becomes a
    call to

    ```mlir
    func.func private @dynamir_sgemm(%transA: i64, %transB: i64, %M: i64, %N: i64, %K: i64,
                                     %A: i64, %lda: i64, %B: i64, %ldb: i64,
                                     %C: i64, %ldc: i64)
    ```

    (row-major, pointers as integers, C accumulated so a bias already in it stays; the name is
    the `function` option, `function-f64` for f64, which may be empty to keep f64 products as
    loops). The runtime implements `dynamir_sgemm` and `dynamir_dgemm` with the BLAS numpy uses
    (its bundled OpenBLAS), so CPU products run at numpy's speed and give numpy's results, and
    `dynamir_cuda_sgemm` with cuBLAS on the runtime's stream for GPU graphs. Batched products
    (`C[b,m,n] += A[b,m,k] * B[b,k,n]`, any number of batch dimensions, an operand with fewer
    or size-1 batch dimensions broadcast) become `scf.for` loops over the output's batch
    dimensions around one call per batch element: a 4x64x64 attention product `q @ k.T` ran
    as a loop nest 4x slower than torch. An operand may read the batch loops in any order and
    between its matrix's dimensions, as long as its innermost dimension is one of the matrix's:
    attention's `q.view(B, T, H, D).transpose(1, 2)` is read in the qkv projection's own
    layout, [b, m, h, k], each head's address 64 elements on, its leading dimension 3 * H * D. A matrix times a vector (`C[m] += A[m,k] * x[k]`,
    linalg.matvec, or `x @ A` as A transposed times x, linalg.vecmat) is a call of one column
    (N = 1, the vector's stride its leading dimension, which must be a known positive one):
    OpenBLAS runs it as fast as its gemv here, where the loop ran a 512x512 float32 product at
    a fifth of numpy's speed. Products of fewer than `min-flops` multiply-adds per
    call stay loops. With `threads` above 1 each product is shared out in an `scf.parallel`
    of one iteration per thread (the outermost batch loop when it has an element per thread,
    else a part of the rows per thread, or of the columns when there are more of them): the
    runtime runs each call on its calling thread alone, so that one pool of threads runs both
    a graph's loops and its products.
  }];
  let options = [
    Option<"function", "function", "std::string", "\"dynamir_sgemm\"",
           "the runtime function to call for f32 products">,
    Option<"functionF64", "function-f64", "std::string", "\"dynamir_dgemm\"",
           "the runtime function to call for f64 products (empty: keep them as loops)">,
    Option<"minFlops", "min-flops", "int64_t", "32768",
           "smallest M*N*K handed to the call">,
    Option<"threads", "threads", "int64_t", "1",
           "share each product out among this many threads (scf.parallel), one call each">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
}

def DynFuseRowReductions : Pass<"dyn-fuse-row-reductions"> {
  let summary = "Compute row reductions and the elementwise op that reads them a block of rows "
                "at a time";
  let description = [{
    A row softmax is four loop nests over the whole array (the row maxima, `e = exp(x - max)`,
    the row sums of `e`, and `e / sum`), and a layer norm is as many: on 4096x1024 floats each
    one streams 16 MB through memory. On tensors, an elementwise `linalg.generic` of static
    sizes that reads a generic's result row-wise (an operand whose indexing map is
    `d0, ..., d(k-1)` followed by zeros, k below its number of loops) is tiled by blocks of
    rows: its first k - 1 loops by one, the k-th by the rows whose result fills 64 KiB (a
    divisor of the loop), its other loops whole. Fused into the same loop are the
    generics it reads, transitively, that keep those loops as rows, are read row-wise, compute
    no matrix product and have no user outside (fused, such a producer would run again for
    its other users), among them at least one reduction, and every fill they read (a
    `linalg.fill` or a generic broadcasting a scalar). Attention is the same with products at
    both ends: a matrix product that reads such a row-wise result over its reduction loop (the
    softmax's `P` in `P V`) is tiled too, and its cluster may hold products (the scores
    `Q K^T`); its blocks are the rows whose largest row among the cluster's results fills 64
    KiB, but at least 64, so that each block's products are BLAS calls of 64 rows or more, and
    the scores never exist beyond one block. A keepdim
    reduction is first rewritten to write its rows without the unit dimension (tiling wants
    outputs indexed by loops), expanded back. Each block is then read from memory once, and
    `e` lives in a 64 KiB buffer instead of a 16 MB one; the later passes over a block find it
    in the cache. The loop is an `scf.forall`, whose iterations the threads share
    (`dyn-cpu-parallel` makes it one-dimensional), when the cluster's work (as
    `dyn-cpu-parallel` counts it) is at least its default `min-work` and `threads` > 1, else an
    `scf.for`.

    Example:

    ```mlir
    %max = linalg.generic {iterator_types = ["parallel", "reduction"], ...}
        ins(%x : tensor<4096x1024xf32>) outs(%m0 : tensor<4096x1xf32>)
    %e = linalg.generic {...exp(x - max)...} ins(%x, %max : ...) outs(%t : tensor<4096x1024xf32>)
    %sum = linalg.generic {...sum of e...} ins(%e : ...) outs(%s0 : tensor<4096x1xf32>)
    %y = linalg.generic {iterator_types = ["parallel", "parallel"], ...}
        ins(%e, %sum : tensor<4096x1024xf32>, tensor<4096x1xf32>) outs(%r : ...)
    ```

    becomes (`threads=2`) an `scf.forall` over 256 blocks of 16 rows whose body computes the
    four generics on `tensor<4x1024xf32>` slices.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "1",
           "threads the graph runs on (1: the blocks are a sequential loop)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def DynCPUParallel : Pass<"dyn-cpu-parallel"> {
  let summary = "Split large loop nests on buffers into one chunk per thread";
  let description = [{
    Loops lowered from linalg run on one core. On bufferized IR, every linalg op of at least
    `min-work` units of work (static sizes; an iteration is one unit, and 8 more for each math
    function its body calls: `cos(sin(2x) + 1) * 3` took 3.4 ns per element on one core of
    an AVX2 machine, `2x + 1` 0.15) is tiled along its outermost parallel loop whose size
    is at least `threads`, into `threads` chunks of consecutive iterations: an `scf.parallel`
    over the chunks around the op on subviews, which `convert-scf-to-openmp` turns into an
    OpenMP worksharing loop (static schedule, `threads` threads). Each element is computed by
    the same code whatever the thread count, and reductions stay inside one chunk (a sum over
    every element was split into blocks by `dyn-split-reductions`, the blocks are what runs in
    parallel), so results do not depend on the thread count. Ops nested in another parallel
    loop, and ops with dynamic sizes, stay as they are. On this project's 2-core machines
    `F.gelu` on 1M floats took 0.65 ms on one thread and 0.45 on two, on 256K 0.18 and 0.14,
    and on 64K the same on both with libomp's own pool: starting a parallel loop cost about
    what the second core saved there, hence the default `min-work` for plain loops. On the
    process's pool (dyn-parallel-calls) and counting its erf, 64K elements of `F.gelu` took
    0.080 ms on one thread and 0.068 on two, and 100K of the chain above 0.32 and 0.21.

    Example (`threads=2`):

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel"], ...}
        ins(%x : memref<512x1024xf32>) outs(%y : memref<512x1024xf32>)
    ```

    becomes

    ```mlir
    scf.parallel (%i) = (%c0) to (%c512) step (%c256) {
      %xs = memref.subview %x[%i, 0] [256, 1024] [1, 1] : ...
      %ys = memref.subview %y[%i, 0] [256, 1024] [1, 1] : ...
      linalg.generic {...} ins(%xs : ...) outs(%ys : ...)
    }
    ```
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "1",
           "threads to split each loop nest for (1: leave everything alone)">,
    Option<"minWork", "min-work", "int64_t", "::dynamir::kMinParallelWork",
           "smallest work (iterations, math functions counting 8 more) worth a parallel "
           "region">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect"];
}

def DynParallelCalls : Pass<"dyn-parallel-calls", "::mlir::ModuleOp"> {
  let summary = "Run OpenMP parallel loops on the process's own pool, through the runtime";
  let description = [{
    On the LLVM dialect, after `convert-openmp-to-llvm`: each `omp.parallel` that
    `convert-scf-to-openmp` made of a one-dimensional `scf.parallel` (an `omp.wsloop` without
    clauses around the loop body) is outlined into an internal function
    `void (ptr data, i64 thread, i64 threads)` that runs its thread's chunk of the iterations
    (ceil(trip / threads) consecutive ones, OpenMP's static schedule), and replaced by a frame of
    the values the body uses (constants are made again inside instead) and a call of

    ```
    void dynamir_parallel(ptr function, ptr data, i64 threads)
    ```

    The runtime runs it on the OpenMP pool the process already has: torch's libgomp when torch
    is loaded, else libomp. A graph on libomp's own pool and torch's ops on libgomp's took the
    cores from each other (each pool's workers spin after their loop): right after a torch op,
    an LSTM cell's graph took 1.68 ms on 2 threads against 0.23 on one. Regions of any other
    form (reductions, nested regions) stay OpenMP, on libomp.

    Example (`threads=2`):

    ```mlir
    omp.parallel num_threads(%c2 : i32) {
      omp.wsloop {
        omp.loop_nest (%i) : i64 = (%c0) to (%c2) step (%c1) {
          llvm.store %v, %p : f32, !llvm.ptr
          omp.yield
        }
      }
      omp.terminator
    }
    ```

    becomes a store of `%v` and `%p` into a frame on the stack and

    ```mlir
    %f = llvm.mlir.addressof @graph_parallel0 : !llvm.ptr
    llvm.call @dynamir_parallel(%f, %frame, %threads) : (!llvm.ptr, !llvm.ptr, i64) -> ()
    ```
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "1",
           "threads for a region without a num_threads clause">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def DynDirectConvolutions : Pass<"dyn-direct-convolutions"> {
  let summary = "Convolutions of stride 1 as dyn.conv2d, which the CPU runtime computes directly";
  let description = [{
    Rewrites a product of reshaped filters `[F, C, KH, KW]` with `dyn.unfold`'s columns of
    stride and dilation 1 (how the frontend writes `F.conv2d`) into `dyn.conv2d` and a reshape
    of its result, for float32 with `F` a multiple of 4 and output rows a multiple of 16: the
    runtime's direct kernel writes no columns, and keeps a 4-filter by 16-column tile of the
    output in registers. For a residual block's 3x3 convolution (32 channels, 32x32 images, one
    thread), MKL's product of the columns alone took 271 us per image, torch's oneDNN
    convolution 243 us and the direct kernel 213 us. For CPU graphs only: GPU graphs keep the
    product, which cuBLAS runs.

    Example:

    ```mlir
    %cols = dyn.unfold %x kernel [3, 3] dilation [1, 1] padding [1, 1] stride [1, 1]
        : tensor<4x32x32x32xf32>
    %w2 = dyn.reshape %w : tensor<32x32x3x3xf32> -> tensor<32x288xf32>
    %y = dyn.matmul %w2, %cols : tensor<32x288xf32>, tensor<4x288x1024xf32>
    ```

    becomes

    ```mlir
    %c = dyn.conv2d %x, %w padding [1, 1] : tensor<4x32x32x32xf32>, tensor<32x32x3x3xf32>
    %y = dyn.reshape %c : tensor<4x32x32x32xf32> -> tensor<4x32x1024xf32>
    ```
  }];
  let dependentDialects = ["::dynamir::dyn::DynDialect"];
}

#endif // DYNAMIR_TRANSFORMS_PASSES_TD
