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
