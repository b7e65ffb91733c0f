// RUN: tensor-opt %s -dyn-math-approximation --verify-each | FileCheck %s

// f32 transcendental functions become plain arithmetic that vectorizes; f64 stays for libm.
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

// exp keeps numpy's subnormal results: below -87 the input is shifted by 32 ln 2 into the
// normal range and the approximation's result scaled by 2^-32.
// CHECK-LABEL: func.func @subnormal_exp
// CHECK-DAG: %[[LIMIT:.*]] = arith.constant dense<-8.700000e+01> : vector<4xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<2.32830644E-10> : vector<4xf32>
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[X:.*]], %[[LIMIT]] : vector<4xf32>
// CHECK: %[[IN:.*]] = arith.select %[[TINY]], %{{.*}}, %[[X]]
// CHECK-NOT: math.exp
// CHECK: %[[SCALED:.*]] = arith.mulf %[[E:.*]], %[[SCALE]] : vector<4xf32>
// CHECK: arith.select %[[TINY]], %[[SCALED]], %[[E]]
func.func @subnormal_exp(%x: vector<4xf32>) -> vector<4xf32> {
  %0 = math.exp %x : vector<4xf32>
  return %0 : vector<4xf32>
}

// sin and cos first reduce by half periods (Cody-Waite with fused multiply-adds), then
// approximate sin |r| and fix the sign: (-1)^n by n's parity.
// CHECK-LABEL: func.func @reduced_sin
// CHECK: %[[N:.*]] = math.roundeven %{{.*}} : f32
// CHECK: %[[NEG:.*]] = arith.negf %[[N]] : f32
// CHECK: %[[R1:.*]] = math.fma %[[NEG]], %{{.*}}, %[[X:.*]] : f32
// CHECK: %[[R2:.*]] = math.fma %[[NEG]], %{{.*}}, %[[R1]] : f32
// CHECK: %[[R3:.*]] = math.fma %[[NEG]], %{{.*}}, %[[R2]] : f32
// CHECK: arith.select %{{.*}}, %[[X]], %[[R3]] : f32
// CHECK: math.absf
// CHECK-NOT: math.sin
// CHECK: math.copysign
// CHECK: math.floor
func.func @reduced_sin(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  return %0 : f32
}
