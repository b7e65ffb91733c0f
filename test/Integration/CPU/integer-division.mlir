// Integer // and % lowered and executed with numpy's results at the edges: a zero divisor
// gives 0 for both (the generated code used to raise SIGFPE or return garbage), MIN // -1 wraps
// to MIN and MIN % -1 is 0, and negative operands keep Python's floor semantics.
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm | %mlir_runner | FileCheck %s

func.func @div64(%a: tensor<12xi64>, %b: tensor<12xi64>) -> (tensor<12xi64>, tensor<12xi64>) {
  %0 = dyn.floordiv %a, %b : tensor<12xi64>, tensor<12xi64>
  %1 = dyn.mod %a, %b : tensor<12xi64>, tensor<12xi64>
  return %0, %1 : tensor<12xi64>, tensor<12xi64>
}

// `7 // x` with a zero in x: the constant dividend broadcasts.
func.func @seven(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %seven = dyn.constant dense<7> : tensor<i64>
  %0 = dyn.floordiv %seven, %x : tensor<i64>, tensor<4xi64>
  %1 = dyn.mod %seven, %x : tensor<i64>, tensor<4xi64>
  return %0, %1 : tensor<4xi64>, tensor<4xi64>
}

// `x // zeros`: a zero divisor for every element.
func.func @by_zeros(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %zeros = dyn.constant dense<0> : tensor<4xi64>
  %0 = dyn.floordiv %x, %zeros : tensor<4xi64>, tensor<4xi64>
  %1 = dyn.mod %x, %zeros : tensor<4xi64>, tensor<4xi64>
  return %0, %1 : tensor<4xi64>, tensor<4xi64>
}

func.func @div32(%a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>) {
  %0 = dyn.floordiv %a, %b : tensor<6xi32>, tensor<6xi32>
  %1 = dyn.mod %a, %b : tensor<6xi32>, tensor<6xi32>
  return %0, %1 : tensor<6xi32>, tensor<6xi32>
}

func.func @main() {
  %a = arith.constant dense<[7, -7, 7, -7, 0, 5, -5, -9223372036854775808, -9223372036854775808,
                             -9223372036854775808, 9223372036854775807, -9223372036854775808]> : tensor<12xi64>
  %b = arith.constant dense<[2, 2, -2, -2, 0, 0, 0, -1, 1, 0, -1, 3]> : tensor<12xi64>
  %q, %r = call @div64(%a, %b) : (tensor<12xi64>, tensor<12xi64>) -> (tensor<12xi64>, tensor<12xi64>)
  // CHECK: [3,  -4,  -4,  3,  0,  0,  0,  -9223372036854775808,  -9223372036854775808,  0,  -9223372036854775807,  -3074457345618258603]
  call @print_i64(%q) : (tensor<12xi64>) -> ()
  // CHECK: [1,  1,  -1,  -1,  0,  0,  0,  0,  0,  0,  0,  1]
  call @print_i64(%r) : (tensor<12xi64>) -> ()

  %x = arith.constant dense<[3, 0, -2, -1]> : tensor<4xi64>
  %sq, %sr = call @seven(%x) : (tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)
  // CHECK: [2,  0,  -4,  -7]
  call @print_i64_4(%sq) : (tensor<4xi64>) -> ()
  // CHECK: [1,  0,  -1,  0]
  call @print_i64_4(%sr) : (tensor<4xi64>) -> ()

  %y = arith.constant dense<[5, -5, 0, -9223372036854775808]> : tensor<4xi64>
  %zq, %zr = call @by_zeros(%y) : (tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)
  // CHECK: [0,  0,  0,  0]
  call @print_i64_4(%zq) : (tensor<4xi64>) -> ()
  // CHECK: [0,  0,  0,  0]
  call @print_i64_4(%zr) : (tensor<4xi64>) -> ()

  %c = arith.constant dense<[-2147483648, -2147483648, -2147483648, 7, -7, 2147483647]> : tensor<6xi32>
  %d = arith.constant dense<[-1, 0, 3, 0, -3, -1]> : tensor<6xi32>
  %iq, %ir = call @div32(%c, %d) : (tensor<6xi32>, tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>)
  // CHECK: [-2147483648,  0,  -715827883,  0,  2,  -2147483647]
  call @print_i32(%iq) : (tensor<6xi32>) -> ()
  // CHECK: [0,  0,  1,  0,  -1,  0]
  call @print_i32(%ir) : (tensor<6xi32>) -> ()
  return
}

func.func @print_i64(%t: tensor<12xi64>) {
  %m = bufferization.to_buffer %t : tensor<12xi64> to memref<12xi64>
  %u = memref.cast %m : memref<12xi64> to memref<*xi64>
  call @printMemrefI64(%u) : (memref<*xi64>) -> ()
  return
}
func.func @print_i64_4(%t: tensor<4xi64>) {
  %m = bufferization.to_buffer %t : tensor<4xi64> to memref<4xi64>
  %u = memref.cast %m : memref<4xi64> to memref<*xi64>
  call @printMemrefI64(%u) : (memref<*xi64>) -> ()
  return
}
func.func @print_i32(%t: tensor<6xi32>) {
  %m = bufferization.to_buffer %t : tensor<6xi32> to memref<6xi32>
  %u = memref.cast %m : memref<6xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
func.func private @printMemrefI64(memref<*xi64>)
func.func private @printMemrefI32(memref<*xi32>)
