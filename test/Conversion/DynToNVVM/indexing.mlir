// Masked loads and scatters in a GPU graph, with parallel-indexing (what the runtime asks for
// CUDA graphs). A masked load is kernels only: ten log-step scan kernels for 1000 mask elements plus the first one
// widening the mask, the count's reduction, the count copied to the host (4 bytes) for the
// result's allocation, and one kernel finding each result's source and gathering it. Without
// the option the count loop would run on the host over the device's mask, which is refused.
// REQUIRES: libdevice
// RUN: tensor-opt %s -dyn-to-linalg="parallel-indexing" -dyn-lower-to-nvvm -split-input-file | FileCheck %s
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-nvvm -split-input-file -verify-diagnostics

// CHECK-LABEL: llvm.func @positions
// CHECK-COUNT-11: gpu.launch_func <%{{.*}} : !llvm.ptr> @positions_map{{[0-9]+}}_line
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @positions_reduce11_line
// CHECK: llvm.call @mgpuMemcpy
// CHECK: llvm.call @mgpuStreamSynchronize
// CHECK: %[[ROWS:.*]] = llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
func.func @positions(%x: tensor<1000xf32>, %m: tensor<1000xi1>) -> tensor<?xf32> {
  // expected-error@+1 {{'memref.load' op the host would read a large device buffer}}
  %0 = dyn.compress %x, %m : tensor<1000xf32>, tensor<1000xi1>
  return %0 : tensor<?xf32>
}

// -----

// A scatter is one kernel with a thread per column of the destination (64 here: one block),
// each running over the indices in order; without the option it would be one thread for all.
// CHECK-LABEL: llvm.func @scatter_rows
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK-DAG: %[[THREADS:.*]] = llvm.mlir.constant(256 : index) : i64
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @scatter_rows_kernel::@scatter_rows_kernel blocks in (%[[ONE]], %[[ONE]], %[[ONE]]) threads in (%[[THREADS]], %[[ONE]], %[[ONE]])
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
func.func @scatter_rows(%d: tensor<256x64xf32>, %u: tensor<?x64xf32>, %i: tensor<?xi64>) -> tensor<256x64xf32> {
  %0 = dyn.scatter %u into %d[%i] axis 0 accumulate : tensor<?x64xf32> into tensor<256x64xf32>, tensor<?xi64>
  return %0 : tensor<256x64xf32>
}
