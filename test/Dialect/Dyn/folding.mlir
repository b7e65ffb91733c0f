// RUN: tensor-opt %s -canonicalize -split-input-file --verify-roundtrip | FileCheck %s

// Constant folding of elementwise ops, broadcasts, casts and reductions on small constants
// and splats (folding is bounded to 4096 elements unless the constant is a splat).

// CHECK-LABEL: func.func @unary_dense
func.func @unary_dense() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) {
  %c = dyn.constant dense<[-1.0, 0.0, 4.0]> : tensor<3xf32>
  %i = dyn.constant dense<[-3, 0, 7]> : tensor<3xi32>
  // CHECK-DAG: %[[NEG:.*]] = dyn.constant dense<[1.000000e+00, -0.000000e+00, -4.000000e+00]> : tensor<3xf32>
  %0 = dyn.neg %c : tensor<3xf32>
  // CHECK-DAG: %[[RELU:.*]] = dyn.constant dense<[0.000000e+00, 0.000000e+00, 4.000000e+00]> : tensor<3xf32>
  %1 = dyn.relu %c : tensor<3xf32>
  // CHECK-DAG: %[[ABS:.*]] = dyn.constant dense<[3, 0, 7]> : tensor<3xi32>
  %2 = dyn.abs %i : tensor<3xi32>
  // CHECK: return %[[NEG]], %[[RELU]], %[[ABS]]
  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @unary_splat
func.func @unary_splat() -> (tensor<1024x1024xf32>, tensor<2xf32>) {
  %c = dyn.constant dense<0.0> : tensor<1024x1024xf32>
  // A splat folds whatever its size.
  // CHECK-DAG: %[[COS:.*]] = dyn.constant dense<1.000000e+00> : tensor<1024x1024xf32>
  %0 = dyn.cos %c : tensor<1024x1024xf32>
  %four = dyn.constant dense<4.0> : tensor<2xf32>
  // CHECK-DAG: %[[RS:.*]] = dyn.constant dense<5.000000e-01> : tensor<2xf32>
  %1 = dyn.rsqrt %four : tensor<2xf32>
  // CHECK: return %[[COS]], %[[RS]]
  return %0, %1 : tensor<1024x1024xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @binary_broadcast
func.func @binary_broadcast() -> tensor<2x3xf32> {
  %a = dyn.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %b = dyn.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  // CHECK: %[[R:.*]] = dyn.constant dense<{{\[}}[1.100000e+01, 2.100000e+01, 3.100000e+01], [1.200000e+01, 2.200000e+01, 3.200000e+01]]> : tensor<2x3xf32>
  %0 = dyn.add %a, %b : tensor<2x1xf32>, tensor<3xf32>
  // CHECK: return %[[R]]
  return %0 : tensor<2x3xf32>
}

// -----

// Python semantics for // and % on negative integers; wrapping i32 arithmetic.
// CHECK-LABEL: func.func @integer_semantics
func.func @integer_semantics() -> (tensor<4xi64>, tensor<4xi64>, tensor<i32>, tensor<i64>) {
  %a = dyn.constant dense<[7, -7, 7, -7]> : tensor<4xi64>
  %b = dyn.constant dense<[2, 2, -2, -2]> : tensor<4xi64>
  // CHECK-DAG: %[[FD:.*]] = dyn.constant dense<[3, -4, -4, 3]> : tensor<4xi64>
  %0 = dyn.floordiv %a, %b : tensor<4xi64>, tensor<4xi64>
  // CHECK-DAG: %[[MOD:.*]] = dyn.constant dense<[1, 1, -1, -1]> : tensor<4xi64>
  %1 = dyn.mod %a, %b : tensor<4xi64>, tensor<4xi64>
  %big = dyn.constant dense<2147483647> : tensor<i32>
  %one = dyn.constant dense<1> : tensor<i32>
  // CHECK-DAG: %[[WRAP:.*]] = dyn.constant dense<-2147483648> : tensor<i32>
  %2 = dyn.add %big, %one : tensor<i32>, tensor<i32>
  %three = dyn.constant dense<3> : tensor<i64>
  // CHECK-DAG: %[[POW:.*]] = dyn.constant dense<27> : tensor<i64>
  %3 = dyn.pow %three, %three : tensor<i64>, tensor<i64>
  // CHECK: return %[[FD]], %[[MOD]], %[[WRAP]], %[[POW]]
  return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xi64>, tensor<i32>, tensor<i64>
}

// -----

// Integer // and % by zero and MIN // -1 fold to numpy's results (x // 0 == x % 0 == 0,
// MIN // -1 == MIN, MIN % -1 == 0) at every width; folding them used to raise SIGFPE.
// CHECK-LABEL: func.func @division_edge_cases
func.func @division_edge_cases() -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi32>, tensor<4xi32>) {
  %a = dyn.constant dense<[-9223372036854775808, 5, -5, 0]> : tensor<4xi64>
  %b = dyn.constant dense<[-1, 0, 0, 0]> : tensor<4xi64>
  // CHECK-DAG: %[[FD:.*]] = dyn.constant dense<[-9223372036854775808, 0, 0, 0]> : tensor<4xi64>
  %0 = dyn.floordiv %a, %b : tensor<4xi64>, tensor<4xi64>
  // CHECK-DAG: %[[MOD:.*]] = dyn.constant dense<0> : tensor<4xi64>
  %1 = dyn.mod %a, %b : tensor<4xi64>, tensor<4xi64>
  %c = dyn.constant dense<[-2147483648, 7, -7, -2147483648]> : tensor<4xi32>
  %d = dyn.constant dense<[-1, 0, -1, 3]> : tensor<4xi32>
  // CHECK-DAG: %[[FD32:.*]] = dyn.constant dense<[-2147483648, 0, 7, -715827883]> : tensor<4xi32>
  %2 = dyn.floordiv %c, %d : tensor<4xi32>, tensor<4xi32>
  // CHECK-DAG: %[[MOD32:.*]] = dyn.constant dense<[0, 0, 0, 1]> : tensor<4xi32>
  %3 = dyn.mod %c, %d : tensor<4xi32>, tensor<4xi32>
  // CHECK: return %[[FD]], %[[MOD]], %[[FD32]], %[[MOD32]]
  return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xi64>, tensor<4xi32>, tensor<4xi32>
}

// -----

// Float // and % fold as numpy's npy_divmod: from the remainder (floor(a / b) gave -0.0 for
// -1.0 // inf and 10.0 for 1.0 // 0.1); a zero remainder has the divisor's sign.
// CHECK-LABEL: func.func @float_division
func.func @float_division() -> (tensor<4xf64>, tensor<4xf64>) {
  %a = dyn.constant dense<[-1.0, 1.0, 0.0, -5.0]> : tensor<4xf64>
  %b = dyn.constant dense<[0x7FF0000000000000, 1.000000e-01, -3.0, 0x7FF0000000000000]> : tensor<4xf64>
  // CHECK-DAG: %[[FD:.*]] = dyn.constant dense<[-1.000000e+00, 9.000000e+00, -0.000000e+00, -1.000000e+00]> : tensor<4xf64>
  %0 = dyn.floordiv %a, %b : tensor<4xf64>, tensor<4xf64>
  // CHECK-DAG: %[[MOD:.*]] = dyn.constant dense<[0x7FF0000000000000, 0.09999999999999995, -0.000000e+00, 0x7FF0000000000000]> : tensor<4xf64>
  %1 = dyn.mod %a, %b : tensor<4xf64>, tensor<4xf64>
  // CHECK: return %[[FD]], %[[MOD]]
  return %0, %1 : tensor<4xf64>, tensor<4xf64>
}

// -----

// i64 arithmetic wraps like numpy's int64 (it used to be C++ signed overflow: undefined).
// CHECK-LABEL: func.func @int64_wraps
func.func @int64_wraps() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>,
                             tensor<3xi64>, tensor<i64>, tensor<i64>) {
  %a = dyn.constant dense<[9223372036854775807, -9223372036854775808, 4611686018427387904]> : tensor<3xi64>
  %b = dyn.constant dense<[1, 1, 2]> : tensor<3xi64>
  // CHECK-DAG: %[[ADD:.*]] = dyn.constant dense<[-9223372036854775808, -9223372036854775807, 4611686018427387906]> : tensor<3xi64>
  %0 = dyn.add %a, %b : tensor<3xi64>, tensor<3xi64>
  // CHECK-DAG: %[[SUB:.*]] = dyn.constant dense<[9223372036854775806, 9223372036854775807, 4611686018427387902]> : tensor<3xi64>
  %1 = dyn.sub %a, %b : tensor<3xi64>, tensor<3xi64>
  // CHECK-DAG: %[[MUL:.*]] = dyn.constant dense<[9223372036854775807, -9223372036854775808, -9223372036854775808]> : tensor<3xi64>
  %2 = dyn.mul %a, %b : tensor<3xi64>, tensor<3xi64>
  // CHECK-DAG: %[[NEG:.*]] = dyn.constant dense<[-9223372036854775807, -9223372036854775808, -4611686018427387904]> : tensor<3xi64>
  %3 = dyn.neg %a : tensor<3xi64>
  // CHECK-DAG: %[[ABS:.*]] = dyn.constant dense<[9223372036854775807, -9223372036854775808, 4611686018427387904]> : tensor<3xi64>
  %4 = dyn.abs %a : tensor<3xi64>
  %m = dyn.constant dense<[9223372036854775807, 1]> : tensor<2xi64>
  // CHECK-DAG: %[[SUM:.*]] = dyn.constant dense<-9223372036854775808> : tensor<i64>
  %5 = dyn.sum %m dims [0] : tensor<2xi64>
  %big = dyn.constant dense<[4611686018427387904, 3]> : tensor<2xi64>
  // CHECK-DAG: %[[PROD:.*]] = dyn.constant dense<-4611686018427387904> : tensor<i64>
  %6 = dyn.prod %big dims [0] : tensor<2xi64>
  // CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[NEG]], %[[ABS]], %[[SUM]], %[[PROD]]
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>,
                                      tensor<3xi64>, tensor<i64>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @nan_semantics
func.func @nan_semantics() -> (tensor<2xf32>, tensor<2xi1>, tensor<2xi1>) {
  %a = dyn.constant dense<[0x7FC00000, 1.0]> : tensor<2xf32>
  %b = dyn.constant dense<[2.0, 3.0]> : tensor<2xf32>
  // CHECK-DAG: %[[MAX:.*]] = dyn.constant dense<[0x7FC00000, 3.000000e+00]> : tensor<2xf32>
  %0 = dyn.maximum %a, %b : tensor<2xf32>, tensor<2xf32>
  // CHECK-DAG: %[[EQ:.*]] = dyn.constant dense<false> : tensor<2xi1>
  %1 = dyn.eq %a, %b : tensor<2xf32>, tensor<2xf32>
  // CHECK-DAG: %[[NE:.*]] = dyn.constant dense<true> : tensor<2xi1>
  %2 = dyn.ne %a, %b : tensor<2xf32>, tensor<2xf32>
  // CHECK: return %[[MAX]], %[[EQ]], %[[NE]]
  return %0, %1, %2 : tensor<2xf32>, tensor<2xi1>, tensor<2xi1>
}

// -----

// CHECK-LABEL: func.func @compare_and_logic
func.func @compare_and_logic() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xf32>) {
  %a = dyn.constant dense<[1, 5, 3]> : tensor<3xi64>
  %t = dyn.constant dense<3> : tensor<i64>
  // CHECK-DAG: %[[GT:.*]] = dyn.constant dense<[false, true, false]> : tensor<3xi1>
  %0 = dyn.gt %a, %t : tensor<3xi64>, tensor<i64>
  %1 = dyn.le %a, %t : tensor<3xi64>, tensor<i64>
  // CHECK-DAG: %[[OR:.*]] = dyn.constant dense<true> : tensor<3xi1>
  %2 = dyn.logical_or %0, %1 : tensor<3xi1>, tensor<3xi1>
  %x = dyn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = dyn.constant dense<-1.0> : tensor<3xf32>
  // CHECK-DAG: %[[W:.*]] = dyn.constant dense<[-1.000000e+00, 2.000000e+00, -1.000000e+00]> : tensor<3xf32>
  %3 = dyn.where %0, %x, %y : tensor<3xi1>, tensor<3xf32>, tensor<3xf32>
  %w = dyn.cast %3 to f32 : tensor<3xf32>
  // CHECK: return %[[GT]], %[[OR]], %[[W]]
  return %0, %2, %w : tensor<3xi1>, tensor<3xi1>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @casts
func.func @casts() -> (tensor<3xi32>, tensor<3xi1>, tensor<3xf64>) {
  %c = dyn.constant dense<[-2.7, 0.0, 3.9]> : tensor<3xf32>
  // CHECK-DAG: %[[TRUNC:.*]] = dyn.constant dense<[-2, 0, 3]> : tensor<3xi32>
  %0 = dyn.cast %c to i32 : tensor<3xf32>
  // CHECK-DAG: %[[BOOL:.*]] = dyn.constant dense<[true, false, true]> : tensor<3xi1>
  %1 = dyn.cast %c to i1 : tensor<3xf32>
  // CHECK-DAG: %[[WIDE:.*]] = dyn.constant dense<[1.000000e+00, 0.000000e+00, 1.000000e+00]> : tensor<3xf64>
  %2 = dyn.cast %1 to f64 : tensor<3xi1>
  // CHECK: return %[[TRUNC]], %[[BOOL]], %[[WIDE]]
  return %0, %1, %2 : tensor<3xi32>, tensor<3xi1>, tensor<3xf64>
}

// -----

// A cast to the same type is its operand, unless it is a copy (x.copy() of what may be the
// caller's array): that stays, a new array.
// CHECK-LABEL: func.func @same_type_casts
// CHECK: %[[COPY:.*]] = dyn.cast %arg0 to f32 {copy} : tensor<3xf32>
// CHECK: return %arg0, %[[COPY]]
func.func @same_type_casts(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = dyn.cast %x to f32 : tensor<3xf32>
  %1 = dyn.cast %x to f32 {copy} : tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @no_fold_nan_to_int
func.func @no_fold_nan_to_int() -> tensor<i32> {
  %c = dyn.constant dense<0x7FC00000> : tensor<f32>
  // CHECK: dyn.cast
  %0 = dyn.cast %c to i32 : tensor<f32>
  return %0 : tensor<i32>
}

// -----

// CHECK-LABEL: func.func @reductions
func.func @reductions() -> (tensor<2xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2xi64>,
                            tensor<i64>, tensor<2xf32>, tensor<3xi64>) {
  %c = dyn.constant dense<[[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]> : tensor<2x3xf32>
  // CHECK-DAG: %[[SUM:.*]] = dyn.constant dense<[9.000000e+00, 1.200000e+01]> : tensor<2xf32>
  %0 = dyn.sum %c dims [1] : tensor<2x3xf32>
  // CHECK-DAG: %[[MAX:.*]] = dyn.constant dense<{{\[}}[4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<1x3xf32>
  %1 = dyn.max %c dims [0] keepdim : tensor<2x3xf32>
  // CHECK-DAG: %[[MEAN:.*]] = dyn.constant dense<3.500000e+00> : tensor<f32>
  %2 = dyn.mean %c dims [0, 1] : tensor<2x3xf32>
  // CHECK-DAG: %[[ARGMIN:.*]] = dyn.constant dense<[0, 1]> : tensor<2xi64>
  %3 = dyn.argmin %c dims [1] : tensor<2x3xf32>
  // CHECK-DAG: %[[ARGMAX:.*]] = dyn.constant dense<5> : tensor<i64>
  %4 = dyn.argmax %c dims [0, 1] : tensor<2x3xf32>
  // CHECK-DAG: %[[PROD:.*]] = dyn.constant dense<[1.500000e+01, 4.800000e+01]> : tensor<2xf32>
  %5 = dyn.prod %c dims [1] : tensor<2x3xf32>
  %s = dyn.constant dense<2> : tensor<4x3xi64>
  // A splat input reduces too.
  // CHECK-DAG: %[[SPLATSUM:.*]] = dyn.constant dense<8> : tensor<3xi64>
  %6 = dyn.sum %s dims [0] : tensor<4x3xi64>
  // CHECK: return %[[SUM]], %[[MAX]], %[[MEAN]], %[[ARGMIN]], %[[ARGMAX]], %[[PROD]], %[[SPLATSUM]]
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2xi64>,
                                      tensor<i64>, tensor<2xf32>, tensor<3xi64>
}

// -----

// Reductions over no elements: the empty sum is 0 and the empty product 1; max, min and their
// arg-reductions raise in numpy and stay for run time.
// CHECK-LABEL: func.func @empty_reductions
func.func @empty_reductions() -> (tensor<f32>, tensor<2xi64>, tensor<2xf32>, tensor<f32>,
                                  tensor<2xi64>, tensor<0xf32>) {
  %e = dyn.constant dense<> : tensor<0xf32>
  %ei = dyn.constant dense<> : tensor<2x0xi64>
  // CHECK-DAG: %[[PROD:.*]] = dyn.constant dense<1.000000e+00> : tensor<f32>
  %0 = dyn.prod %e dims [0] : tensor<0xf32>
  // CHECK-DAG: %[[PRODI:.*]] = dyn.constant dense<1> : tensor<2xi64>
  %1 = dyn.prod %ei dims [1] : tensor<2x0xi64>
  %ef = dyn.constant dense<> : tensor<2x0xf32>
  // CHECK-DAG: %[[SUM:.*]] = dyn.constant dense<0.000000e+00> : tensor<2xf32>
  %2 = dyn.sum %ef dims [1] : tensor<2x0xf32>
  // CHECK-DAG: %[[MAX:.*]] = dyn.max %{{.*}} dims [0] : tensor<0xf32>
  %3 = dyn.max %e dims [0] : tensor<0xf32>
  // CHECK-DAG: %[[ARG:.*]] = dyn.argmin %{{.*}} dims [1] : tensor<2x0xi64>
  %4 = dyn.argmin %ei dims [1] : tensor<2x0xi64>
  // Nothing is reduced into an empty result: it folds.
  // CHECK-DAG: %[[NONE:.*]] = dyn.constant dense<> : tensor<0xf32>
  %5 = dyn.min %ef dims [0] : tensor<2x0xf32>
  // CHECK: return %[[PROD]], %[[PRODI]], %[[SUM]], %[[MAX]], %[[ARG]], %[[NONE]]
  return %0, %1, %2, %3, %4, %5 : tensor<f32>, tensor<2xi64>, tensor<2xf32>, tensor<f32>,
                                  tensor<2xi64>, tensor<0xf32>
}

// -----

// relu, maximum and minimum fold like the arith ops they lower to: NaN propagates (relu(NaN)
// used to fold to 0) and -0.0 < +0.0.
// CHECK-LABEL: func.func @nan_and_signed_zero
func.func @nan_and_signed_zero() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %n = dyn.constant dense<[0x7FC00000, -0.0]> : tensor<2xf32>
  %p = dyn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  // CHECK-DAG: %[[RELU:.*]] = dyn.constant dense<[0x7FC00000, 0.000000e+00]> : tensor<2xf32>
  %0 = dyn.relu %n : tensor<2xf32>
  %1 = dyn.maximum %p, %n : tensor<2xf32>, tensor<2xf32>
  // CHECK-DAG: %[[MIN:.*]] = dyn.constant dense<[0x7FC00000, -0.000000e+00]> : tensor<2xf32>
  %2 = dyn.minimum %p, %n : tensor<2xf32>, tensor<2xf32>
  // CHECK: return %[[RELU]], %[[RELU]], %[[MIN]]
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @generators_and_shapes
func.func @generators_and_shapes() -> (tensor<2x3xf32>, tensor<4xi64>, tensor<3x2xf32>, tensor<3x2xf32>) {
  // CHECK-DAG: %[[FULL:.*]] = dyn.constant dense<1.500000e+00> : tensor<2x3xf32>
  %0 = dyn.full 1.5 : f32 : tensor<2x3xf32>
  // CHECK-DAG: %[[AR:.*]] = dyn.constant dense<[1, 4, 7, 10]> : tensor<4xi64>
  %1 = dyn.arange 1.0, 3.0 : tensor<4xi64>
  %c = dyn.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  // CHECK-DAG: %[[RS:.*]] = dyn.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
  %2 = dyn.reshape %c : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK-DAG: %[[TS:.*]] = dyn.constant dense<1.500000e+00> : tensor<3x2xf32>
  %3 = dyn.transpose %0 perm [1, 0] : tensor<2x3xf32>
  // CHECK: return %[[FULL]], %[[AR]], %[[RS]], %[[TS]]
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<4xi64>, tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// The host boundary folds to arith constants when the tensor is known.
// CHECK-LABEL: func.func @host_scalars
func.func @host_scalars() -> (f32, i1) {
  %c = dyn.constant dense<2.5> : tensor<f32>
  // CHECK-DAG: %[[V:.*]] = arith.constant 2.500000e+00 : f32
  %0 = dyn.item %c : tensor<f32>
  // CHECK-DAG: %[[B:.*]] = arith.constant true
  %1 = dyn.to_bool %c : tensor<f32>
  // CHECK: return %[[V]], %[[B]]
  return %0, %1 : f32, i1
}

// -----

// Large non-splat constants are not expanded.
// CHECK-LABEL: func.func @no_fold_large
func.func @no_fold_large(%x: tensor<8192xf32>) -> tensor<8192xf32> {
  %a = dyn.arange 0.0, 1.0 : tensor<8192xf32>
  // CHECK: dyn.arange
  // CHECK: dyn.sin
  %0 = dyn.sin %a : tensor<8192xf32>
  return %0 : tensor<8192xf32>
}

// -----

// Splats of huge shapes (whose element count overflows int64) are not expanded: folding them
// used to size buffers by the wrapped count and abort.
// CHECK-LABEL: func.func @no_fold_huge_splats
func.func @no_fold_huge_splats() -> (tensor<4611686018427387904xf32>,
                                     tensor<4611686018427387904x2xf32>) {
  %c = dyn.constant dense<1.0> : tensor<4611686018427387904x4xf32>
  // CHECK: dyn.sum
  %0 = dyn.sum %c dims [1] : tensor<4611686018427387904x4xf32>
  %s = dyn.constant dense<1.0> : tensor<4611686018427387904x2xf32>
  %r = dyn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: dyn.add
  %1 = dyn.add %s, %r : tensor<4611686018427387904x2xf32>, tensor<2xf32>
  return %0, %1 : tensor<4611686018427387904xf32>, tensor<4611686018427387904x2xf32>
}

// -----

// A reduction over no dimension is its input (an index reduction: zeros); lowered as an
// accumulator, a fused consumer loop kept adding into it.
// CHECK-LABEL: func.func @empty_reductions
// CHECK-DAG: %[[ZERO:.*]] = dyn.constant dense<0> : tensor<i64>
// CHECK: return %arg0, %arg1, %[[ZERO]]
func.func @empty_reductions(%x: tensor<f32>, %y: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<i64>) {
  %0 = dyn.sum %x dims [] : tensor<f32>
  %1 = dyn.max %y dims [] : tensor<3xf32>
  %2 = dyn.argmax %x dims [] : tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<3xf32>, tensor<i64>
}

// -----

// A complex mean over no dimension divides by 1 + 0i, which is not x where a part is infinite
// ((inf + inf·i) / (1 + 0i) is NaN + NaN·i in numpy): not folded. A complex sum is.
// CHECK-LABEL: func.func @empty_complex_mean
// CHECK: %[[MEAN:.*]] = dyn.mean %arg0 dims [] : tensor<complex<f64>>
// CHECK: return %[[MEAN]], %arg0
func.func @empty_complex_mean(%z: tensor<complex<f64>>) -> (tensor<complex<f64>>, tensor<complex<f64>>) {
  %0 = dyn.mean %z dims [] : tensor<complex<f64>>
  %1 = dyn.sum %z dims [] : tensor<complex<f64>>
  return %0, %1 : tensor<complex<f64>>, tensor<complex<f64>>
}

// -----

// trunc rounds toward zero, rint to the nearest integer with ties to even.
// CHECK-LABEL: func.func @trunc
func.func @trunc() -> (tensor<4xf32>, tensor<4xf32>) {
  %c = dyn.constant dense<[-1.5, -0.5, 0.5, 2.7]> : tensor<4xf32>
  // CHECK: %[[T:.*]] = dyn.constant dense<[-1.000000e+00, -0.000000e+00, 0.000000e+00, 2.000000e+00]> : tensor<4xf32>
  %0 = dyn.trunc %c : tensor<4xf32>
  %h = dyn.constant dense<[0.5, 1.5, 2.5, -2.5]> : tensor<4xf32>
  // CHECK: %[[R:.*]] = dyn.constant dense<[0.000000e+00, 2.000000e+00, 2.000000e+00, -2.000000e+00]> : tensor<4xf32>
  %1 = dyn.rint %h : tensor<4xf32>
  // CHECK: return %[[T]], %[[R]]
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// log1p and expm1 fold with libm's accurate functions; fmod keeps the dividend's sign, and an
// integer fmod by 0 (or of MIN by -1) is 0 as in numpy.
// CHECK-LABEL: func.func @log1p_expm1_exp2_fmod
func.func @log1p_expm1_exp2_fmod() -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf32>, tensor<3xf32>,
                                       tensor<4xi64>) {
  %c = dyn.constant dense<[1.0e-20, 0.0]> : tensor<2xf64>
  %e = dyn.constant dense<[3.0, -1.0]> : tensor<2xf32>
  %x = dyn.constant dense<[-5.0, 5.0, -0.0]> : tensor<3xf32>
  %y = dyn.constant dense<[3.0, -3.0, 2.0]> : tensor<3xf32>
  %i = dyn.constant dense<[7, -7, 5, -9223372036854775808]> : tensor<4xi64>
  %j = dyn.constant dense<[-3, 3, 0, -1]> : tensor<4xi64>
  // CHECK-DAG: %[[SMALL:.*]] = dyn.constant dense<[9.9999999999999995E-21, 0.000000e+00]> : tensor<2xf64>
  // CHECK-DAG: %[[EXP2:.*]] = dyn.constant dense<[8.000000e+00, 5.000000e-01]> : tensor<2xf32>
  // CHECK-DAG: %[[FMOD:.*]] = dyn.constant dense<[-2.000000e+00, 2.000000e+00, -0.000000e+00]> : tensor<3xf32>
  // CHECK-DAG: %[[IFMOD:.*]] = dyn.constant dense<[1, -1, 0, 0]> : tensor<4xi64>
  %0 = dyn.log1p %c : tensor<2xf64>
  %1 = dyn.expm1 %c : tensor<2xf64>
  %2 = dyn.exp2 %e : tensor<2xf32>
  %3 = dyn.fmod %x, %y : tensor<3xf32>, tensor<3xf32>
  %4 = dyn.fmod %i, %j : tensor<4xi64>, tensor<4xi64>
  // CHECK: return %[[SMALL]], %[[SMALL]], %[[EXP2]], %[[FMOD]], %[[IFMOD]]
  return %0, %1, %2, %3, %4 : tensor<2xf64>, tensor<2xf64>, tensor<2xf32>, tensor<3xf32>, tensor<4xi64>
}

// -----

// int8 shifts and bitwise ops fold to what the lowering computes (test/Integration/CPU/
// bitwise.mlir): the folder shifts sign-extended int64 values and keeps the low 8 bits.
// Floats fold to int8 through int32 (300.0 is 44); one out of int32's range is left to run
// time.
// CHECK-LABEL: func.func @int8_bits
func.func @int8_bits() -> (tensor<6xi8>, tensor<6xi8>, tensor<6xi8>, tensor<2xi8>, tensor<i8>) {
  %a = dyn.constant dense<[1, -128, 64, -3, 5, 7]> : tensor<6xi8>
  %b = dyn.constant dense<[8, 7, -1, 1, 3, 0]> : tensor<6xi8>
  // CHECK-DAG: %[[SHL:.*]] = dyn.constant dense<[0, 0, 0, -6, 40, 7]> : tensor<6xi8>
  %0 = dyn.shl %a, %b : tensor<6xi8>, tensor<6xi8>
  // CHECK-DAG: %[[SHR:.*]] = dyn.constant dense<[0, -1, 0, -2, 0, 7]> : tensor<6xi8>
  %1 = dyn.shr %a, %b : tensor<6xi8>, tensor<6xi8>
  // CHECK-DAG: %[[XOR:.*]] = dyn.constant dense<[9, -121, -65, -4, 6, 7]> : tensor<6xi8>
  %2 = dyn.bitxor %a, %b : tensor<6xi8>, tensor<6xi8>
  %f = dyn.constant dense<[300.0, -300.7]> : tensor<2xf32>
  // CHECK-DAG: %[[CAST:.*]] = dyn.constant dense<[44, -44]> : tensor<2xi8>
  %3 = dyn.cast %f to i8 : tensor<2xf32>
  %big = dyn.constant dense<3.0e9> : tensor<f32>
  // CHECK-DAG: %[[BIG:.*]] = dyn.cast %{{.*}} to i8 : tensor<f32>
  %4 = dyn.cast %big to i8 : tensor<f32>
  // CHECK: return %[[SHL]], %[[SHR]], %[[XOR]], %[[CAST]], %[[BIG]]
  return %0, %1, %2, %3, %4 : tensor<6xi8>, tensor<6xi8>, tensor<6xi8>, tensor<2xi8>, tensor<i8>
}

// -----

// The integer folds compute with signed semantics: unsigned constants are left to the graph
// (200 // 3 is 66 in ui8, not -56 // 3), except casts of floats in the unsigned range.
// CHECK-LABEL: func.func @unsigned_not_folded
func.func @unsigned_not_folded() -> (tensor<ui8>, tensor<i1>, tensor<2xui8>, tensor<ui8>) {
  %a = dyn.constant dense<200> : tensor<ui8>
  %b = dyn.constant dense<3> : tensor<ui8>
  // CHECK-DAG: %[[DIV:.*]] = dyn.floordiv %{{.*}}, %{{.*}} : tensor<ui8>, tensor<ui8>
  %0 = dyn.floordiv %a, %b : tensor<ui8>, tensor<ui8>
  // CHECK-DAG: %[[LT:.*]] = dyn.lt %{{.*}}, %{{.*}} : tensor<ui8>, tensor<ui8>
  %1 = dyn.lt %b, %a : tensor<ui8>, tensor<ui8>
  %f = dyn.constant dense<[255.9, 0.5]> : tensor<2xf32>
  // CHECK-DAG: %[[CAST:.*]] = dyn.constant dense<[255, 0]> : tensor<2xui8>
  %2 = dyn.cast %f to ui8 : tensor<2xf32>
  %n = dyn.constant dense<-1.0> : tensor<f32>
  // CHECK-DAG: %[[NEG:.*]] = dyn.cast %{{.*}} to ui8 : tensor<f32>
  %3 = dyn.cast %n to ui8 : tensor<f32>
  // CHECK: return %[[DIV]], %[[LT]], %[[CAST]], %[[NEG]]
  return %0, %1, %2, %3 : tensor<ui8>, tensor<i1>, tensor<2xui8>, tensor<ui8>
}
