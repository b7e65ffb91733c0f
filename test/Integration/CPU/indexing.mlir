// Masked loads and scatters executed both ways: the loops the CPU runs, and the parallel forms
// GPU graphs get (parallel-indexing), which must give the same results.
// - x[mask] (a log-step scan of the mask, a binary search per result row): 11 mask elements
//   (not a power of two), rows of a mask of the leading dimension, a mask with nothing selected
//   and one with everything.
// - Scatters (a parallel loop over the destination's columns, each running over the indices
//   in order): repeated indices, where the last store wins and additions accumulate in order,
//   and a negative index.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s
// RUN: tensor-opt %s -dyn-to-linalg="parallel-indexing" -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

func.func @elements(%x: tensor<11xf32>, %m: tensor<11xi1>) -> tensor<?xf32> {
  %0 = dyn.compress %x, %m : tensor<11xf32>, tensor<11xi1>
  return %0 : tensor<?xf32>
}

func.func @rows(%x: tensor<5x2xf32>, %m: tensor<5xi1>) -> tensor<?x2xf32> {
  %0 = dyn.compress %x, %m : tensor<5x2xf32>, tensor<5xi1>
  return %0 : tensor<?x2xf32>
}

func.func @scatter(%d: tensor<4x3xf32>, %u: tensor<5x3xf32>, %i: tensor<5xi64>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = dyn.scatter %u into %d[%i] axis 0 : tensor<5x3xf32> into tensor<4x3xf32>, tensor<5xi64>
  %1 = dyn.scatter %u into %d[%i] axis 0 accumulate : tensor<5x3xf32> into tensor<4x3xf32>, tensor<5xi64>
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

func.func @main() {
  %x = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]> : tensor<11xf32>
  %some = arith.constant dense<[true, false, false, true, true, false, true, false, false, false, true]> : tensor<11xi1>
  %none = arith.constant dense<false> : tensor<11xi1>
  %all = arith.constant dense<true> : tensor<11xi1>
  // CHECK: sizes = [5]
  // CHECK-NEXT: [0,  3,  4,  6,  10]
  %0 = call @elements(%x, %some) : (tensor<11xf32>, tensor<11xi1>) -> tensor<?xf32>
  call @print(%0) : (tensor<?xf32>) -> ()
  // CHECK: sizes = [0]
  %1 = call @elements(%x, %none) : (tensor<11xf32>, tensor<11xi1>) -> tensor<?xf32>
  call @print(%1) : (tensor<?xf32>) -> ()
  // CHECK: sizes = [11]
  // CHECK-NEXT: [0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10]
  %2 = call @elements(%x, %all) : (tensor<11xf32>, tensor<11xi1>) -> tensor<?xf32>
  call @print(%2) : (tensor<?xf32>) -> ()
  %y = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]> : tensor<5x2xf32>
  %r = arith.constant dense<[false, true, true, false, true]> : tensor<5xi1>
  // CHECK: sizes = [3, 2]
  // CHECK-NEXT: {{\[}}[2,   3],
  // CHECK-NEXT: [4,   5],
  // CHECK-NEXT: [8,   9]]
  %3 = call @rows(%y, %r) : (tensor<5x2xf32>, tensor<5xi1>) -> tensor<?x2xf32>
  %u = tensor.cast %3 : tensor<?x2xf32> to tensor<*xf32>
  %b = bufferization.to_buffer %u : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%b) : (memref<*xf32>) -> ()
  %d = arith.constant dense<1.0> : tensor<4x3xf32>
  %upd = arith.constant dense<[[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [100.0, 200.0, 300.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]> : tensor<5x3xf32>
  %idx = arith.constant dense<[2, 0, 2, -1, 2]> : tensor<5xi64>
  %set, %added = call @scatter(%d, %upd, %idx) : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xi64>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  // CHECK: sizes = [4, 3]
  // CHECK-NEXT: {{\[}}[10,   20,   30],
  // CHECK-NEXT: [1,   1,   1],
  // CHECK-NEXT: [7,   8,   9],
  // CHECK-NEXT: [4,   5,   6]]
  call @print2(%set) : (tensor<4x3xf32>) -> ()
  // CHECK: sizes = [4, 3]
  // CHECK-NEXT: {{\[}}[11,   21,   31],
  // CHECK-NEXT: [1,   1,   1],
  // CHECK-NEXT: [109,   211,   313],
  // CHECK-NEXT: [5,   6,   7]]
  call @print2(%added) : (tensor<4x3xf32>) -> ()
  return
}

func.func @print2(%t: tensor<4x3xf32>) {
  %m = bufferization.to_buffer %t : tensor<4x3xf32> to memref<4x3xf32>
  %u = memref.cast %m : memref<4x3xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @print(%t: tensor<?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?xf32> to memref<?xf32>
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>)
