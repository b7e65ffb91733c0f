// The README's demo: the traced seed program through canonicalization and guard optimization.
// RUN: tensor-opt %S/../../examples/seed.mlir -canonicalize -dyn-optimize-guards | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<3xf32>, %[[W:[a-z0-9]+]]: tensor<2x3xf32>, %[[B:[a-z0-9]+]]: tensor<2xf32>
// The duplicated type guard merged; four guards lead the function, cheapest first.
// CHECK-NEXT: dyn.guard.type_match "L['self']", "__main__.TestNet"
// CHECK-NEXT: dyn.guard.tensor_match "L['x']", %[[X]]
// CHECK-NEXT: dyn.guard.tensor_match "L['self'].linear.weight", %[[W]]
// CHECK-NEXT: dyn.guard.tensor_match "L['self'].linear.bias", %[[B]]
// CHECK-NOT: dyn.guard
// The two equal zero constants are one now.
// CHECK: %[[ZERO:.*]] = dyn.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NOT: dyn.constant dense<0.000000e+00>
// CHECK: %[[P1:.*]] = dyn.gt %{{.*}}, %[[ZERO]]
// CHECK: dyn.if %[[P1]] : tensor<i1> -> tensor<3xf32> {
// CHECK: dyn.sin
// CHECK: dyn.gt %{{.*}}, %[[ZERO]]
// CHECK: dyn.if
// CHECK: dyn.cos
// CHECK: dyn.linear %{{.*}}, %[[W]], %[[B]]
