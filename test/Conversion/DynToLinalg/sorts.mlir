// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// A sort along 8 elements (torch.topk over a mixture of experts' gates): each element's rank
// counts the lane's elements that sort before it (here greater, NaN greatest, or equal and
// earlier in the lane: the sort is stable), then each place takes the element of its rank.
// CHECK-LABEL: func.func @descending
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: dyn.sort
// CHECK: %[[RANKS:.*]] = linalg.generic {indexing_maps = [#[[HERE:.*]], #[[THERE:.*]], #[[HERE]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[X]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xi64>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: i64):
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: %[[EARLIER:.*]] = arith.cmpi ult, %[[J]], %[[I]] : index
// CHECK: %[[EQ:.*]] = arith.cmpf oeq, %[[B]], %[[A]] : f32
// CHECK: %[[TIE:.*]] = arith.andi %{{.*}}, %[[EARLIER]] : i1
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[B]], %[[A]] : f32
// CHECK: %[[BEFORE:.*]] = arith.ori %{{.*}}, %[[TIE]] : i1
// CHECK: %[[ONE:.*]] = arith.extui %[[BEFORE]] : i1 to i64
// CHECK: arith.addi %[[ACC]], %[[ONE]] : i64
// CHECK: %[[PLACED:.*]]:2 = linalg.generic {indexing_maps = [#[[THERE]], #[[THERE]], #[[HERE]], #[[HERE]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[RANKS]] : tensor<4x8xf32>, tensor<4x8xi64>)
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK: arith.select %[[HIT]]
// CHECK: arith.select %[[HIT]]
// CHECK: return %[[PLACED]]#0, %[[PLACED]]#1
func.func @descending(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>) {
  %v, %i = dyn.sort %x axis 1 descending : tensor<4x8xf32>
  return %v, %i : tensor<4x8xf32>, tensor<4x8xi64>
}

// -----

// Booleans sort false before true: unsigned comparisons.
// CHECK-LABEL: func.func @booleans
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i1
func.func @booleans(%x: tensor<6xi1>) -> (tensor<6xi1>, tensor<6xi64>) {
  %v, %i = dyn.sort %x axis 0 : tensor<6xi1>
  return %v, %i : tensor<6xi1>, tensor<6xi64>
}

// -----

// Lanes of more than 16 elements, and dynamic shapes, stay calls of the runtime's sort.
// CHECK-LABEL: func.func @long_and_dynamic
// CHECK: dyn.sort %{{.*}} axis 1 : tensor<4x17xf32>
// CHECK: dyn.sort %{{.*}} axis 0 : tensor<?xf32>
func.func @long_and_dynamic(%x: tensor<4x17xf32>, %y: tensor<?xf32>) -> (tensor<4x17xf32>, tensor<?xf32>) {
  %v, %i = dyn.sort %x axis 1 : tensor<4x17xf32>
  %w, %j = dyn.sort %y axis 0 : tensor<?xf32>
  return %v, %w : tensor<4x17xf32>, tensor<?xf32>
}
