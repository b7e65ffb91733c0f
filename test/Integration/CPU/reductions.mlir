// Reductions, arg-reductions (first extreme wins, NaN is the extreme) and softmax, executed;
// expected values are numpy's.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

func.func @stats(%y: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2x1xf32>) {
  %0 = dyn.sum %y dims [1] : tensor<2x3xf32>
  %1 = dyn.mean %y dims [0] : tensor<2x3xf32>
  %2 = dyn.max %y dims [1] keepdim : tensor<2x3xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<3xf32>, tensor<2x1xf32>
}

func.func @args(%y: tensor<2x3xf32>, %n: tensor<4xf32>) -> (tensor<2xi64>, tensor<i64>, tensor<i64>) {
  %0 = dyn.argmax %y dims [1] : tensor<2x3xf32>
  %1 = dyn.argmin %y dims [0, 1] : tensor<2x3xf32>
  %2 = dyn.argmax %n dims [0] : tensor<4xf32>
  return %0, %1, %2 : tensor<2xi64>, tensor<i64>, tensor<i64>
}

func.func @softmax(%z: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = dyn.softmax %z dim 1 : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

func.func @main() {
  %y = arith.constant dense<[[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]> : tensor<2x3xf32>
  %s, %m, %x = call @stats(%y) : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2x1xf32>)
  // CHECK: [9,  12]
  %su = bufferization.to_buffer %s : tensor<2xf32> to memref<2xf32>
  %suu = memref.cast %su : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%suu) : (memref<*xf32>) -> ()
  // CHECK: [2.5,  3.5,  4.5]
  %mu = bufferization.to_buffer %m : tensor<3xf32> to memref<3xf32>
  %muu = memref.cast %mu : memref<3xf32> to memref<*xf32>
  call @printMemrefF32(%muu) : (memref<*xf32>) -> ()
  // CHECK: [5],
  // CHECK: [6]]
  %xu = bufferization.to_buffer %x : tensor<2x1xf32> to memref<2x1xf32>
  %xuu = memref.cast %xu : memref<2x1xf32> to memref<*xf32>
  call @printMemrefF32(%xuu) : (memref<*xf32>) -> ()

  %n = arith.constant dense<[1.0, 0x7FC00000, 5.0, 0x7FC00000]> : tensor<4xf32>
  %a0, %a1, %a2 = call @args(%y, %n) : (tensor<2x3xf32>, tensor<4xf32>) -> (tensor<2xi64>, tensor<i64>, tensor<i64>)
  // CHECK: [1,  2]
  %a0u = bufferization.to_buffer %a0 : tensor<2xi64> to memref<2xi64>
  %a0uu = memref.cast %a0u : memref<2xi64> to memref<*xi64>
  call @printMemrefI64(%a0uu) : (memref<*xi64>) -> ()
  // CHECK: [0]
  %a1u = bufferization.to_buffer %a1 : tensor<i64> to memref<i64>
  %a1uu = memref.cast %a1u : memref<i64> to memref<*xi64>
  call @printMemrefI64(%a1uu) : (memref<*xi64>) -> ()
  // CHECK: [1]
  %a2u = bufferization.to_buffer %a2 : tensor<i64> to memref<i64>
  %a2uu = memref.cast %a2u : memref<i64> to memref<*xi64>
  call @printMemrefI64(%a2uu) : (memref<*xi64>) -> ()

  %z = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<2x4xf32>
  %p = call @softmax(%z) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK: [0.0320586,   0.0871443,   0.236883,   0.643914],
  // CHECK: [0.25,   0.25,   0.25,   0.25]]
  %pu = bufferization.to_buffer %p : tensor<2x4xf32> to memref<2x4xf32>
  %puu = memref.cast %pu : memref<2x4xf32> to memref<*xf32>
  call @printMemrefF32(%puu) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI64(memref<*xi64>)
