// dyn.for lowered through dyn-to-linalg and dyn-lower-to-llvm and executed: a loop that
// carries a tensor and reads its induction variable, and one whose trip count is 0.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

// u = u * 0.5 + i for i in range(lower, upper, step).
func.func @decay(%u0: tensor<4xf32>, %lower: tensor<i64>, %upper: tensor<i64>,
                 %step: tensor<i64>) -> tensor<4xf32> {
  %half = dyn.constant dense<0.5> : tensor<f32>
  %r = dyn.for %lower, %upper, %step iter_args(%u0 : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<i64>, %u: tensor<4xf32>):
    %fi = dyn.cast %i to f32 : tensor<i64>
    %v = dyn.mul %u, %half : tensor<4xf32>, tensor<f32>
    %w = dyn.add %v, %fi : tensor<4xf32>, tensor<f32>
    dyn.yield %w : tensor<4xf32>
  } : tensor<i64>
  return %r : tensor<4xf32>
}

func.func @main() {
  %x = arith.constant dense<[16.0, 8.0, -4.0, 0.0]> : tensor<4xf32>
  %zero = arith.constant dense<0> : tensor<i64>
  %one = arith.constant dense<1> : tensor<i64>
  %two = arith.constant dense<2> : tensor<i64>
  %four = arith.constant dense<4> : tensor<i64>
  // i = 0, 1, 2, 3: ((((x/2 + 0)/2 + 1)/2 + 2)/2 + 3) = x/16 + 4.25
  %r = call @decay(%x, %zero, %four, %one)
      : (tensor<4xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xf32>
  // CHECK: [5.25,  4.75,  4,  4.25]
  call @print_f32(%r) : (tensor<4xf32>) -> ()
  // i = 1, 3: ((x/2 + 1)/2 + 3) = x/4 + 3.5
  %s = call @decay(%x, %one, %four, %two)
      : (tensor<4xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xf32>
  // CHECK: [7.5,  5.5,  2.5,  3.5]
  call @print_f32(%s) : (tensor<4xf32>) -> ()
  // No iteration: x itself.
  %t = call @decay(%x, %four, %one, %one)
      : (tensor<4xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xf32>
  // CHECK: [16,  8,  -4,  0]
  call @print_f32(%t) : (tensor<4xf32>) -> ()
  return
}

func.func @print_f32(%t: tensor<4xf32>) {
  %m = bufferization.to_buffer %t : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>)
