// dyn.for and dyn.while lowered through dyn-to-linalg and dyn-lower-to-llvm and executed: a
// for loop that carries a tensor and reads its induction variable, one whose trip count is 0,
// and while loops that halve until a tolerance, run no iteration, or carry a counter.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s
// RUN: tensor-opt %s -dyn-to-linalg | FileCheck %s --check-prefix=SCF

// The while loop's predicate is carried: the before region only tests it (the canonicalizer
// then forwards the carried values alone), the body yields the next one first.
// SCF-LABEL: func.func @halve
// SCF: %[[P0:.*]] = tensor.extract
// SCF: scf.while (%[[C:.*]] = %[[P0]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (i1, tensor<4xf32>, tensor<i64>)
// SCF:   scf.condition(%[[C]])
// SCF: } do {
// SCF:   linalg.generic
// SCF:   %[[P:.*]] = tensor.extract
// SCF:   scf.yield %[[P]], %{{.*}}, %{{.*}} : i1, tensor<4xf32>, tensor<i64>

// (x, n) halved while max(|x|) > tol, n counting the iterations.
func.func @halve(%x0: tensor<4xf32>, %tol: tensor<f32>) -> (tensor<4xf32>, tensor<i64>) {
  %half = dyn.constant dense<0.5> : tensor<f32>
  %one = dyn.constant dense<1> : tensor<i64>
  %zero = dyn.constant dense<0> : tensor<i64>
  %a0 = dyn.abs %x0 : tensor<4xf32>
  %m0 = dyn.max %a0 dims [0] : tensor<4xf32>
  %p0 = dyn.gt %m0, %tol : tensor<f32>, tensor<f32>
  %r:2 = dyn.while %p0 : tensor<i1> iter_args(%x0, %zero : tensor<4xf32>, tensor<i64>)
      -> tensor<4xf32>, tensor<i64> {
  ^bb0(%x: tensor<4xf32>, %n: tensor<i64>):
    %y = dyn.mul %x, %half : tensor<4xf32>, tensor<f32>
    %k = dyn.add %n, %one : tensor<i64>, tensor<i64>
    %a = dyn.abs %y : tensor<4xf32>
    %m = dyn.max %a dims [0] : tensor<4xf32>
    %p = dyn.gt %m, %tol : tensor<f32>, tensor<f32>
    dyn.yield %p, %y, %k : tensor<i1>, tensor<4xf32>, tensor<i64>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<i64>
}

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
  // 16 / 2^5 = 0.5 is the first maximum under 0.75: five iterations.
  %tol = arith.constant dense<0.75> : tensor<f32>
  %h:2 = call @halve(%x, %tol) : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<i64>)
  // CHECK: [0.5,  0.25,  -0.125,  0]
  call @print_f32(%h#0) : (tensor<4xf32>) -> ()
  // CHECK: [5]
  call @print_i64(%h#1) : (tensor<i64>) -> ()
  // No iteration: the first test is false.
  %big = arith.constant dense<100.0> : tensor<f32>
  %g:2 = call @halve(%x, %big) : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<i64>)
  // CHECK: [16,  8,  -4,  0]
  call @print_f32(%g#0) : (tensor<4xf32>) -> ()
  // CHECK: [0]
  call @print_i64(%g#1) : (tensor<i64>) -> ()
  return
}

func.func @print_i64(%t: tensor<i64>) {
  %e = tensor.extract %t[] : tensor<i64>
  %r = tensor.from_elements %e : tensor<1xi64>
  %m = bufferization.to_buffer %r : tensor<1xi64> to memref<1xi64>
  %u = memref.cast %m : memref<1xi64> to memref<*xi64>
  call @printMemrefI64(%u) : (memref<*xi64>) -> ()
  return
}
func.func private @printMemrefI64(memref<*xi64>)

func.func @print_f32(%t: tensor<4xf32>) {
  %m = bufferization.to_buffer %t : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>)
