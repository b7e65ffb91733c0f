// Loop nests split over two OpenMP threads (dyn-lower-to-llvm threads=2, dyn-cpu-parallel),
// executed: the rows on either side of the chunk boundary (row 256) and a sum over every
// element (its blocks run in parallel) come out as with one thread. Expected values: numpy.
// REQUIRES: openmp
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm=threads=2 > %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir --check-prefix=IR
// RUN: %openmp_runner < %t.mlir | FileCheck %s

// The work is shared out by OpenMP worksharing loops (what the LLVM IR translation turns into
// __kmpc_fork_call and static-schedule calls).
// IR-LABEL: llvm.func @rows(
// IR: omp.parallel num_threads
// IR: omp.wsloop

func.func @rows(%x: tensor<512x512xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %c2 = dyn.full 2.0 : f32 : tensor<f32>
  %c1 = dyn.full 1.0 : f32 : tensor<f32>
  %y = dyn.mul %x, %c2 : tensor<512x512xf32>, tensor<f32>
  %z = dyn.add %y, %c1 : tensor<512x512xf32>, tensor<f32>
  %m = dyn.max %z dims [1] : tensor<512x512xf32>
  %s = dyn.slice %m starts [254] stops [258] steps [1] : tensor<512xf32>
  %w = dyn.mul %z, %c1 : tensor<512x512xf32>, tensor<f32>
  %ones = dyn.div %w, %z : tensor<512x512xf32>, tensor<512x512xf32>
  %n = dyn.sum %ones dims [0, 1] : tensor<512x512xf32>
  return %s, %n : tensor<4xf32>, tensor<f32>
}

func.func @main() {
  %a = dyn.arange 0.0, 1.0 : tensor<262144xf32>
  %x = dyn.reshape %a : tensor<262144xf32> -> tensor<512x512xf32>
  %s, %n = call @rows(%x) : (tensor<512x512xf32>) -> (tensor<4xf32>, tensor<f32>)
  // Row i's maximum is 2 * (512 i + 511) + 1.
  // CHECK: [261119,  262143,  263167,  264191]
  %su = bufferization.to_buffer %s : tensor<4xf32> to memref<4xf32>
  %suu = memref.cast %su : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%suu) : (memref<*xf32>) -> ()
  // CHECK: [262144]
  %nu = bufferization.to_buffer %n : tensor<f32> to memref<f32>
  %nuu = memref.cast %nu : memref<f32> to memref<*xf32>
  call @printMemrefF32(%nuu) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>)
