// RUN: tensor-opt %s -dyn-math-approximation --verify-each | FileCheck %s

// f32 transcendental functions become plain arithmetic that vectorizes; f64 stays for libm.
// The bits of 4/pi for the exact sin/cos reduction (below) are a private global: 4/pi * 2^7,
// then 8 bits more per entry.
// CHECK: memref.global "private" constant @__dynamir_four_over_pi_bits : memref<24xi32> = dense<[162, 41721, 10680707, -1560706194,
// CHECK-LABEL: func.func @approx
// CHECK-NOT: math.sin
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: math.sin %{{.*}} : f64
func.func @approx(%x: f32, %y: vector<8xf32>, %z: f64) -> (f32, vector<8xf32>, f64) {
  %0 = math.sin %x : f32
  %1 = math.exp %y : vector<8xf32>
  %2 = math.sin %z : f64
  return %0, %1, %2 : f32, vector<8xf32>, f64
}

// Every approximated function is NaN at NaN by a select around it: the expansion is not left
// to compute it (upstream's exp passed NaN through fptosi, which LLVM folds as poison).
// CHECK-LABEL: func.func @nan_is_selected
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[R:.*]] = arith.select %[[NAN]], %[[X]], %{{.*}} : f32
// CHECK: return %[[R]]
func.func @nan_is_selected(%x: f32) -> f32 {
  %0 = math.log %x : f32
  return %0 : f32
}

// atan2 stays a libm call (atan2f): upstream's approximation was 41 ulp from numpy's arctan2.
// CHECK-LABEL: func.func @atan2_stays
// CHECK: math.atan2 %{{.*}}, %{{.*}} : f32
// CHECK: math.atan2 %{{.*}}, %{{.*}} : vector<8xf32>
func.func @atan2_stays(%x: f32, %y: vector<8xf32>) -> (f32, vector<8xf32>) {
  %0 = math.atan2 %x, %x : f32
  %1 = math.atan2 %y, %y : vector<8xf32>
  return %0, %1 : f32, vector<8xf32>
}

// tanh from |x| = 0.625 on is 1 - 2 / (exp(2|x|) + 1) with x's sign, which rounds to 1 where
// tanh does (upstream's polynomial, kept below, was 1 from 7.9988 on).
// CHECK-LABEL: func.func @tanh_saturates
// CHECK-DAG: %[[CUT:.*]] = arith.constant 6.250000e-01 : f32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[AX:.*]] = math.absf %[[X:.*]] : f32
// CHECK: %[[Q:.*]] = arith.divf %[[TWO]], %{{.*}} : f32
// CHECK: %[[FAR:.*]] = arith.cmpf ogt, %[[AX]], %[[CUT]] : f32
// CHECK: %[[TAIL:.*]] = math.copysign %{{.*}}, %[[X]] : f32
// CHECK: arith.select %[[FAR]], %[[TAIL]], %{{.*}} : f32
// CHECK-NOT: math.tanh
func.func @tanh_saturates(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// exp: x clamped to [-104, 89] (the clamps may ignore NaN, which is selected around the
// whole), k = round(x / ln 2) in the low bits of x log2(e) + 1.5 * 2^23, the remainder's
// polynomial, and the result scaled by 2^(k - k/2) and 2^(k/2) in two multiplications, which
// keeps numpy's subnormal results and overflows to infinity where exp does.
// CHECK-LABEL: func.func @subnormal_exp
// CHECK-SAME: (%[[X:.*]]: vector<4xf32>)
// CHECK-NOT: math.exp
// CHECK: %[[LO:.*]] = arith.maxnumf %[[X]], %{{.*}} fastmath<nnan> : vector<4xf32>
// CHECK: %[[C:.*]] = arith.minnumf %[[LO]], %{{.*}} fastmath<nnan> : vector<4xf32>
// CHECK: %[[T:.*]] = math.fma %[[C]], %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[T]] : vector<4xf32> to vector<4xi32>
// CHECK: %[[K:.*]] = arith.subi %[[BITS]], %{{.*}} : vector<4xi32>
// CHECK: %[[HALF:.*]] = arith.shrsi %[[K]], %{{.*}} : vector<4xi32>
// CHECK: %[[S1:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: %[[REST:.*]] = arith.subi %[[K]], %[[HALF]] : vector<4xi32>
// CHECK: %[[S2:.*]] = arith.mulf %[[S1]], %{{.*}} : vector<4xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<4xf32>
// CHECK: arith.select %[[NAN]], %[[X]], %[[S2]]
// CHECK-NOT: math.exp
func.func @subnormal_exp(%x: vector<4xf32>) -> vector<4xf32> {
  %0 = math.exp %x : vector<4xf32>
  return %0 : vector<4xf32>
}

// sin and cos first reduce by quarter periods (Cody-Waite with fused multiply-adds; adding
// 1.5 * 2^23 rounds n and leaves its low bits in the sum's), then evaluate both sin r's and
// cos r's polynomials, pick one by the quadrant's parity and flip the sign by its bit 1. A
// scalar with no known bound calls the exact reduction's function from 2^16 up (finite only),
// under a branch that the runtime lets LLVM vectorize with masked variants of the function.
// sin(-0) is -0: the reductions give +0, so sin selects x at zero.
// CHECK-LABEL: func.func @reduced_sin
// CHECK: %[[LARGE:.*]] = arith.cmpf oge, %{{.*}}, %{{.*}} : f32
// CHECK: %[[FINITE:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[EXACT:.*]] = arith.andi %[[LARGE]], %[[FINITE]] : i1
// CHECK: %[[SIN:.*]] = scf.if %[[EXACT]] -> (f32) {
// CHECK:   func.call @__dynamir_lanewise_sin(%[[X:.*]]) : (f32) -> f32
// CHECK: } else {
// CHECK:   %[[SHIFTED:.*]] = math.fma %[[X]], %{{.*}}, %[[ROUND:.*]] : f32
// CHECK:   %[[NEG:.*]] = arith.subf %[[ROUND]], %[[SHIFTED]] : f32
// CHECK:   %[[R1:.*]] = math.fma %[[NEG]], %{{.*}}, %[[X]] : f32
// CHECK:   %[[R2:.*]] = math.fma %[[NEG]], %{{.*}}, %[[R1]] : f32
// CHECK:   %[[R:.*]] = math.fma %[[NEG]], %{{.*}}, %[[R2]] : f32
// CHECK:   %[[Q:.*]] = arith.bitcast %[[SHIFTED]] : f32 to i32
// CHECK:   %[[Z:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK-COUNT-2: math.fma %{{.*}}, %[[Z]]
// CHECK:   %[[R3:.*]] = arith.mulf %[[R]], %[[Z]] : f32
// CHECK:   %[[SINR:.*]] = math.fma %[[R3]], %{{.*}}, %[[R]] : f32
// CHECK-COUNT-3: math.fma %{{.*}}, %[[Z]]
// CHECK:   %[[COSR:.*]] = math.fma %{{.*}}, %[[Z]], %{{.*}} : f32
// CHECK:   %[[PARITY:.*]] = arith.andi %[[Q]], %{{.*}} : i32
// CHECK:   %[[ODD:.*]] = arith.cmpi ne, %[[PARITY]], %{{.*}} : i32
// CHECK:   %[[V:.*]] = arith.select %[[ODD]], %[[COSR]], %[[SINR]] : f32
// CHECK:   %[[HALF:.*]] = arith.shli %[[Q]], %{{.*}} : i32
// CHECK:   %[[SIGN:.*]] = arith.andi %[[HALF]], %{{.*}} : i32
// CHECK:   %[[VBITS:.*]] = arith.bitcast %[[V]] : f32 to i32
// CHECK:   arith.xori %[[VBITS]], %[[SIGN]] : i32
// CHECK: }
// CHECK: %[[ZERO:.*]] = arith.cmpf oeq, %[[X]], %{{.*}} : f32
// CHECK: arith.select %[[ZERO]], %[[X]], %[[SIN]] : f32
// CHECK-NOT: math.sin
func.func @reduced_sin(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  return %0 : f32
}

// A bounded argument (here a sin's result plus one) keeps the short reduction alone.
// CHECK-LABEL: func.func @exact_reduction
// CHECK: scf.if
// CHECK: func.call @__dynamir_lanewise_sin
// CHECK: arith.subf
// CHECK: arith.subf
// CHECK-NOT: scf.if
// CHECK-NOT: func.call
// CHECK: return
func.func @exact_reduction(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %0 = math.sin %x : f32
  %1 = arith.addf %0, %one : f32
  %2 = math.cos %1 : f32
  return %2 : f32
}

// Vectors look the table up with vector.gather.
// CHECK-LABEL: func.func @exact_reduction_vector
// CHECK-COUNT-3: vector.gather
// CHECK: arith.sitofp %{{.*}} : vector<4xi64> to vector<4xf64>
func.func @exact_reduction_vector(%x: vector<4xf32>) -> vector<4xf32> {
  %0 = math.cos %x : vector<4xf32>
  return %0 : vector<4xf32>
}

// The exact reduction (Payne-Hanek: integer arithmetic on the bits of 4/pi), once per module.
// CHECK-LABEL: func.func private @__dynamir_lanewise_sin(%{{.*}}: f32) -> f32
// CHECK: %[[TABLE:.*]] = memref.get_global @__dynamir_four_over_pi_bits
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK-COUNT-3: memref.load %[[TABLE]]
// CHECK: arith.sitofp %{{.*}} : i64 to f64
// CHECK-NOT: func.func private @__dynamir_lanewise_sin

