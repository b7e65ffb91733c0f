// A masked load in a GPU graph: with parallel-compress (what the runtime asks for CUDA graphs)
// it is kernels only: ten log-step scan kernels for 1000 mask elements plus the first one
// widening the mask, the count's reduction, the count copied to the host (4 bytes) for the
// result's allocation, and one kernel finding each result's source and gathering it. Without
// the option the count loop would run on the host over the device's mask, which is refused.
// REQUIRES: libdevice
// RUN: tensor-opt %s -dyn-to-linalg="parallel-compress" -dyn-lower-to-nvvm | FileCheck %s
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-nvvm -verify-diagnostics

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
