// dyn graphs lowered through dyn-to-linalg and dyn-lower-to-llvm and executed; expected
// values are numpy's (float32) for the same inputs.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = dyn.constant dense<2.0> : tensor<f32>
  %one = dyn.constant dense<1.0> : tensor<f32>
  %three = dyn.constant dense<3.0> : tensor<f32>
  %0 = dyn.mul %x, %two : tensor<4xf32>, tensor<f32>
  %1 = dyn.sin %0 : tensor<4xf32>
  %2 = dyn.add %1, %one : tensor<4xf32>, tensor<f32>
  %3 = dyn.cos %2 : tensor<4xf32>
  %4 = dyn.mul %3, %three : tensor<4xf32>, tensor<f32>
  return %4 : tensor<4xf32>
}

// Python floor division and modulo on int64 with broadcasting of a row.
func.func @pydiv(%a: tensor<2x3xi64>, %b: tensor<3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>) {
  %0 = dyn.floordiv %a, %b : tensor<2x3xi64>, tensor<3xi64>
  %1 = dyn.mod %a, %b : tensor<2x3xi64>, tensor<3xi64>
  return %0, %1 : tensor<2x3xi64>, tensor<2x3xi64>
}

func.func @select(%v: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %three = dyn.constant dense<3.0> : tensor<f32>
  %c = dyn.gt %v, %three : tensor<2x4xf32>, tensor<f32>
  %n = dyn.neg %v : tensor<2x4xf32>
  %0 = dyn.where %c, %v, %n : tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// bf16 <-> f16 (through f32): bf16's range overflows f16, f16's precision rounds in bf16.
func.func @half_casts(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %b = dyn.cast %x to bf16 : tensor<4xf32>
  %bh = dyn.cast %b to f16 : tensor<4xbf16>
  %0 = dyn.cast %bh to f32 : tensor<4xf16>
  %h = dyn.cast %x to f16 : tensor<4xf32>
  %hb = dyn.cast %h to bf16 : tensor<4xf16>
  %1 = dyn.cast %hb to f32 : tensor<4xbf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

func.func @main() {
  %x = arith.constant dense<[0.0, 0.5, -1.0, 2.0]> : tensor<4xf32>
  %r = call @chain(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: [1.62091,  -0.802145,  2.98767,  2.91172]
  call @print_f32(%r) : (tensor<4xf32>) -> ()

  %a = arith.constant dense<[[7, -7, 7], [-7, 0, 9]]> : tensor<2x3xi64>
  %b = arith.constant dense<[2, 2, -2]> : tensor<3xi64>
  %q, %m = call @pydiv(%a, %b) : (tensor<2x3xi64>, tensor<3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>)
  // CHECK: [3,   -4,   -4],
  // CHECK: [-4,   0,   -5]]
  call @print_i64(%q) : (tensor<2x3xi64>) -> ()
  // CHECK: [1,   1,   -1],
  // CHECK: [1,   0,   -1]]
  call @print_i64(%m) : (tensor<2x3xi64>) -> ()

  %v = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]> : tensor<2x4xf32>
  %w = call @select(%v) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK: [-0,   -1,   -2,   -3],
  // CHECK: [4,   5,   6,   7]]
  call @print_f32_2d(%w) : (tensor<2x4xf32>) -> ()

  %hx = arith.constant dense<[1.5, -2.0, 0.1, 100000.0]> : tensor<4xf32>
  %bh, %hb = call @half_casts(%hx) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  // CHECK: [1.5,  -2,  0.100098,  inf]
  call @print_f32(%bh) : (tensor<4xf32>) -> ()
  // CHECK: [1.5,  -2,  0.100098,  inf]
  call @print_f32(%hb) : (tensor<4xf32>) -> ()
  return
}

func.func @print_f32(%t: tensor<4xf32>) {
  %m = bufferization.to_buffer %t : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func @print_f32_2d(%t: tensor<2x4xf32>) {
  %m = bufferization.to_buffer %t : tensor<2x4xf32> to memref<2x4xf32>
  %u = memref.cast %m : memref<2x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func @print_i64(%t: tensor<2x3xi64>) {
  %m = bufferization.to_buffer %t : tensor<2x3xi64> to memref<2x3xi64>
  %u = memref.cast %m : memref<2x3xi64> to memref<*xi64>
  call @printMemrefI64(%u) : (memref<*xi64>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI64(memref<*xi64>)
