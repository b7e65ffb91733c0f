// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// numpy broadcasting lives in the indexing maps: a missing leading dimension is dropped from
// the map, a size-1 dimension reads index 0. Nothing is materialized.
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @outer_sum
// CHECK-SAME: (%[[A:.*]]: tensor<4x1xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<4x1xf32>, tensor<3xf32>) outs(%[[E]] : tensor<4x3xf32>)
// CHECK: arith.addf
func.func @outer_sum(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = dyn.add %a, %b : tensor<4x1xf32>, tensor<3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A 0-d scalar operand reads the same element everywhere.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @scalar
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]], #{{.*}}]
func.func @scalar(%x: tensor<8xf32>, %s: tensor<f32>) -> tensor<8xf32> {
  %0 = dyn.mul %x, %s : tensor<8xf32>, tensor<f32>
  return %0 : tensor<8xf32>
}

// -----

// Dynamic sizes of the result come from the operand that has them.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<?x1xf32>, %[[B:.*]]: tensor<?xf32>)
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[B]], %c0
// CHECK: tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
func.func @dynamic(%a: tensor<?x1xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = dyn.sub %a, %b : tensor<?x1xf32>, tensor<?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// broadcast_to and where broadcast the same way.
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @broadcast_to
// CHECK: linalg.generic {indexing_maps = [#[[LAST]], #{{.*}}]
// CHECK: linalg.yield %in
func.func @broadcast_to(%x: tensor<4x3xf32>) -> tensor<2x4x3xf32> {
  %0 = dyn.broadcast_to %x : tensor<4x3xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @where
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}]
// CHECK: arith.select
func.func @where(%c: tensor<4x3xi1>, %a: tensor<3xf32>, %b: tensor<f32>) -> tensor<4x3xf32> {
  %0 = dyn.where %c, %a, %b : tensor<4x3xi1>, tensor<3xf32>, tensor<f32>
  return %0 : tensor<4x3xf32>
}
