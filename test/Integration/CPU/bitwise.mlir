// int8 bitwise ops and shifts lowered and executed with numpy's (and torch's) results at the
// edges: a shift by the width or more, or by a negative amount, is poison in arith; numpy and
// torch give 0 to the left and the sign to the right; floats convert to int8 through int32,
// keeping its low bits (300.0 is 44, NaN 0). Results are widened to i64 to print.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

func.func @bits(%a: tensor<6xi8>, %b: tensor<6xi8>) -> (tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>) {
  %0 = dyn.shl %a, %b : tensor<6xi8>, tensor<6xi8>
  %1 = dyn.shr %a, %b : tensor<6xi8>, tensor<6xi8>
  %2 = dyn.bitand %a, %b : tensor<6xi8>, tensor<6xi8>
  %3 = dyn.bitor %a, %b : tensor<6xi8>, tensor<6xi8>
  %4 = dyn.bitxor %a, %b : tensor<6xi8>, tensor<6xi8>
  %5 = dyn.not %a : tensor<6xi8>
  %w0 = dyn.cast %0 to i64 : tensor<6xi8>
  %w1 = dyn.cast %1 to i64 : tensor<6xi8>
  %w2 = dyn.cast %2 to i64 : tensor<6xi8>
  %w3 = dyn.cast %3 to i64 : tensor<6xi8>
  %w4 = dyn.cast %4 to i64 : tensor<6xi8>
  %w5 = dyn.cast %5 to i64 : tensor<6xi8>
  return %w0, %w1, %w2, %w3, %w4, %w5 : tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>
}

func.func @to_int8(%x: tensor<6xf32>) -> tensor<6xi64> {
  %0 = dyn.cast %x to i8 : tensor<6xf32>
  %1 = dyn.cast %0 to i64 : tensor<6xi8>
  return %1 : tensor<6xi64>
}

func.func @main() {
  %a = arith.constant dense<[1, -128, 64, -3, 5, 7]> : tensor<6xi8>
  %b = arith.constant dense<[8, 7, -1, 1, 3, 0]> : tensor<6xi8>
  %shl, %shr, %and, %or, %xor, %not = call @bits(%a, %b) : (tensor<6xi8>, tensor<6xi8>) -> (tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>)
  // CHECK: [0,  0,  0,  -6,  40,  7]
  call @print(%shl) : (tensor<6xi64>) -> ()
  // CHECK: [0,  -1,  0,  -2,  0,  7]
  call @print(%shr) : (tensor<6xi64>) -> ()
  // CHECK: [0,  0,  64,  1,  1,  0]
  call @print(%and) : (tensor<6xi64>) -> ()
  // CHECK: [9,  -121,  -1,  -3,  7,  7]
  call @print(%or) : (tensor<6xi64>) -> ()
  // CHECK: [9,  -121,  -65,  -4,  6,  7]
  call @print(%xor) : (tensor<6xi64>) -> ()
  // CHECK: [-2,  127,  -65,  2,  -6,  -8]
  call @print(%not) : (tensor<6xi64>) -> ()
  %f = arith.constant dense<[300.0, -300.7, 0x7FC00000, 127.9, -128.9, 40000.0]> : tensor<6xf32>
  %i8 = call @to_int8(%f) : (tensor<6xf32>) -> tensor<6xi64>
  // CHECK: [44,  -44,  0,  127,  -128,  64]
  call @print(%i8) : (tensor<6xi64>) -> ()
  return
}

func.func @print(%t: tensor<6xi64>) {
  %m = bufferization.to_buffer %t : tensor<6xi64> to memref<6xi64>
  %u = memref.cast %m : memref<6xi64> to memref<*xi64>
  call @printMemrefI64(%u) : (memref<*xi64>) -> ()
  return
}
func.func private @printMemrefI64(memref<*xi64>)
