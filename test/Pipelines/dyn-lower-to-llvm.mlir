// dyn-lower-to-llvm with the options the runtime's graph compiler lowers CPU graphs with (it
// calls the same builder): results as out-parameters, dynamir_sgemm for f32 products, and
// allocations through the generic functions the runtime routes to its buffer pool.
// RUN: tensor-opt %S/../../examples/seed.mlir -dyn-optimize -dyn-split-graphs -dyn-to-linalg -dyn-lower-to-llvm="results-as-out-params=1 blas=1 use-generic-functions=1" > %t
// RUN: FileCheck %s --input-file=%t --check-prefix=SEED
// RUN: FileCheck %s --input-file=%t --check-prefix=LLVMONLY
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm="results-as-out-params=1 blas=1 use-generic-functions=1" | FileCheck %s --check-prefix=RUNTIME
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm="results-as-out-params=1 blas=1 use-generic-functions=1 threads=2 parallel-calls=1" | FileCheck %s --check-prefix=POOL
// The defaults give code mlir-runner can execute: aligned_alloc, loops, results returned.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | FileCheck %s --check-prefix=DEFAULT

// Everything is in the LLVM dialect: no op of another dialect, no cast left unreconciled.
// LLVMONLY-NOT: {{^ *(%[^ ]* = )?"?(dyn|func|linalg|memref|bufferization|scf|cf|arith|math|affine|tensor)\.}}
// LLVMONLY-NOT: unrealized_conversion_cast

// The seed program: the host program and its five graphs, each returning nothing (its results
// are out-parameters its caller allocates), temporaries from the generic allocation functions.
// Aligned by the allocator: a pointer rounded up through integers would hide from LLVM that a
// temporary is a fresh (noalias) allocation, and copies between temporaries stayed scalar.
// SEED-NOT: @malloc
// SEED: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// SEED: llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
// SEED-LABEL: llvm.func @forward(
// SEED-SAME: {{[^>]*}}) attributes {dyn.guards = [{{.*}}], dyn.host}
// SEED: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// SEED: llvm.call @forward_graph0({{.*}}) -> ()
// SEED: llvm.cond_br
// SEED: llvm.call @forward_graph4({{.*}}) -> ()
// SEED: llvm.call @_mlir_memref_to_llvm_free
// SEED: llvm.return{{$}}
// SEED-LABEL: llvm.func @forward_graph0(
// SEED-SAME: {{[^>]*}}) attributes {dyn.graph
// SEED-LABEL: llvm.func @forward_graph1(
// SEED-SAME: {{[^>]*}}) attributes {dyn.graph
// SEED-LABEL: llvm.func @forward_graph2(
// SEED-SAME: {{[^>]*}}) attributes {dyn.graph
// SEED-LABEL: llvm.func @forward_graph3(
// SEED-SAME: {{[^>]*}}) attributes {dyn.graph
// SEED-LABEL: llvm.func @forward_graph4(
// SEED-SAME: {{[^>]*}}) attributes {dyn.graph
// SEED-NOT: @malloc

// A graph as the runtime compiles it (public, C interface, inputs read-only), with a product
// large enough for the BLAS: one dynamir_sgemm call with B transposed, the result written into
// the out-parameter.
// RUNTIME: llvm.func @dynamir_sgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// RUNTIME-LABEL: llvm.func @graph(
// RUNTIME-SAME: {{[^>]*}}) attributes {llvm.emit_c_interface}
// RUNTIME-DAG: %[[NO:.*]] = llvm.mlir.constant(0 : i64) : i64
// RUNTIME-DAG: %[[YES:.*]] = llvm.mlir.constant(1 : i64) : i64
// RUNTIME-DAG: %[[M:.*]] = llvm.mlir.constant(64 : i64) : i64
// RUNTIME-DAG: %[[N:.*]] = llvm.mlir.constant(32 : i64) : i64
// RUNTIME-DAG: %[[K:.*]] = llvm.mlir.constant(128 : i64) : i64
// RUNTIME: llvm.call @dynamir_sgemm(%[[NO]], %[[YES]], %[[M]], %[[N]], %[[K]], %{{[0-9]+}}, %[[K]], %{{[0-9]+}}, %[[K]], %{{[0-9]+}}, %[[N]])
// RUNTIME: llvm.return{{$}}
// RUNTIME-LABEL: llvm.func @_mlir_ciface_graph(

// On two threads with parallel-calls, as the runtime compiles: the product's two parts run on
// the runtime's pool (dynamir_parallel), each a dynamir_sgemm call; no OpenMP op is left.
// POOL-NOT: omp.
// POOL: llvm.func @dynamir_parallel(!llvm.ptr, !llvm.ptr, i64)
// POOL-LABEL: llvm.func @graph(
// POOL: llvm.call @dynamir_parallel(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// POOL-LABEL: llvm.func internal @graph_parallel0(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// POOL: llvm.call @dynamir_sgemm(
// POOL-NOT: omp.

// DEFAULT-NOT: dynamir_sgemm
// DEFAULT: llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// DEFAULT-LABEL: llvm.func @graph(
// DEFAULT-SAME: -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// DEFAULT-NOT: dynamir_sgemm
// DEFAULT-NOT: _mlir_memref_to_llvm_aligned_alloc
func.func @graph(%x: tensor<64x128xf32> {bufferization.writable = false},
                 %w: tensor<32x128xf32> {bufferization.writable = false},
                 %b: tensor<32xf32> {bufferization.writable = false}) -> tensor<64x32xf32>
    attributes {llvm.emit_c_interface} {
  %y = dyn.linear %x, %w, %b : tensor<64x128xf32>, tensor<32x128xf32>, tensor<32xf32>
  return %y : tensor<64x32xf32>
}
