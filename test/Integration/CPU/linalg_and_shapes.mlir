// Matmul with broadcast batches, linear with bias, strided/negative slices, transpose and
// concat, executed; expected values are numpy's.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

func.func @mm(%a: tensor<2x1x2x3xf32>, %b: tensor<3x3x2xf32>) -> tensor<24xf32> {
  %0 = dyn.matmul %a, %b : tensor<2x1x2x3xf32>, tensor<3x3x2xf32>
  %1 = dyn.reshape %0 : tensor<2x3x2x2xf32> -> tensor<24xf32>
  return %1 : tensor<24xf32>
}

func.func @lin(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x2xf32> {
  %0 = dyn.linear %x, %w, %b : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>
  return %0 : tensor<2x2xf32>
}

func.func @shapes(%v: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<8xf32>, tensor<16xf32>) {
  %0 = dyn.slice %v starts [1, 1] stops [-1, 4] steps [-1, 2] : tensor<2x4xf32>
  %t = dyn.transpose %v perm [1, 0] : tensor<2x4xf32>
  %1 = dyn.reshape %t : tensor<4x2xf32> -> tensor<8xf32>
  %ten = dyn.constant dense<10.0> : tensor<f32>
  %v10 = dyn.mul %v, %ten : tensor<2x4xf32>, tensor<f32>
  %c = dyn.concat %v, %v10 dim 0 : tensor<2x4xf32>, tensor<2x4xf32>
  %2 = dyn.reshape %c : tensor<4x4xf32> -> tensor<16xf32>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<8xf32>, tensor<16xf32>
}

func.func @main() {
  %a = dyn.arange 0.0, 1.0 : tensor<12xf32>
  %a4 = dyn.reshape %a : tensor<12xf32> -> tensor<2x1x2x3xf32>
  %b = dyn.arange 0.0, 1.0 : tensor<18xf32>
  %b3 = dyn.reshape %b : tensor<18xf32> -> tensor<3x3x2xf32>
  %r = call @mm(%a4, %b3) : (tensor<2x1x2x3xf32>, tensor<3x3x2xf32>) -> tensor<24xf32>
  // CHECK: [10,  13,  28,  40,  28,  31,  100,  112,  46,  49,  172,  184,  46,  67,  64,  94,  172,  193,  244,  274,  298,  319,  424,  454]
  %ru = bufferization.to_buffer %r : tensor<24xf32> to memref<24xf32>
  %ruu = memref.cast %ru : memref<24xf32> to memref<*xf32>
  call @printMemrefF32(%ruu) : (memref<*xf32>) -> ()

  %x = arith.constant dense<[[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]> : tensor<2x3xf32>
  %w = arith.constant dense<[[1.0, 0.0, -1.0], [2.0, 1.0, 0.5]]> : tensor<2x3xf32>
  %bias = arith.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %l = call @lin(%x, %w, %bias) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // CHECK: [-1.5,   4.5],
  // CHECK: [-2.5,   -1.5]]
  %lu = bufferization.to_buffer %l : tensor<2x2xf32> to memref<2x2xf32>
  %luu = memref.cast %lu : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%luu) : (memref<*xf32>) -> ()

  %v = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]> : tensor<2x4xf32>
  %s, %t, %c = call @shapes(%v) : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<8xf32>, tensor<16xf32>)
  // CHECK: [5,   7],
  // CHECK: [1,   3]]
  %su = bufferization.to_buffer %s : tensor<2x2xf32> to memref<2x2xf32>
  %suu = memref.cast %su : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%suu) : (memref<*xf32>) -> ()
  // CHECK: [0,  4,  1,  5,  2,  6,  3,  7]
  %tu = bufferization.to_buffer %t : tensor<8xf32> to memref<8xf32>
  %tuu = memref.cast %tu : memref<8xf32> to memref<*xf32>
  call @printMemrefF32(%tuu) : (memref<*xf32>) -> ()
  // CHECK: [0,  1,  2,  3,  4,  5,  6,  7,  0,  10,  20,  30,  40,  50,  60,  70]
  %cu = bufferization.to_buffer %c : tensor<16xf32> to memref<16xf32>
  %cuu = memref.cast %cu : memref<16xf32> to memref<*xf32>
  call @printMemrefF32(%cuu) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>)
