// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each | FileCheck %s

// x[mask]: the operands flattened in row-major order, one loop counting the selected
// elements (the result's size), one copying each to the position the count has reached.
// CHECK-LABEL: func.func @compress
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[M:.*]]: tensor<2x3xi1>)
func.func @compress(%x: tensor<2x3xf32>, %m: tensor<2x3xi1>) -> tensor<?xf32> {
  // CHECK-DAG: %[[FX:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  // CHECK-DAG: %[[FM:.*]] = tensor.collapse_shape %[[M]] {{\[}}[0, 1]] : tensor<2x3xi1> into tensor<6xi1>
  // CHECK: %[[COUNT:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %{{.*}}) -> (index) {
  // CHECK: arith.index_castui %{{.*}} : i1 to index
  // CHECK: %[[OUT:.*]] = tensor.empty(%[[COUNT]]) : tensor<?xf32>
  // CHECK: %[[FILL:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[P:.*]] = %{{.*}}, %[[R:.*]] = %[[OUT]]) -> (index, tensor<?xf32>) {
  // CHECK: scf.if %{{.*}} -> (index, tensor<?xf32>) {
  // CHECK: %[[V:.*]] = tensor.extract %[[FX]][%[[I]]] : tensor<6xf32>
  // CHECK: tensor.insert %[[V]] into %[[R]][%[[P]]] : tensor<?xf32>
  // CHECK: return %[[FILL]]#1 : tensor<?xf32>
  %0 = dyn.compress %x, %m : tensor<2x3xf32>, tensor<2x3xi1>
  return %0 : tensor<?xf32>
}
