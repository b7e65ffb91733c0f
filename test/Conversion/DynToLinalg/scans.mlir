// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// A running sum: the first slice copied, then an scf.for from 1 adds the result's slice k - 1
// to the input's slice k (in numpy's order) and inserts it at k.
// CHECK-LABEL: func.func @cumsum
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[X:.*]][0, 0] [4, 1] [1, 1] : tensor<4x8xf32> to tensor<4x1xf32>
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[FIRST]] into %{{.*}}[0, 0] [4, 1] [1, 1]
// CHECK: scf.for %[[K:.*]] = %[[C1:.*]] to %{{.*}} step %[[C1]] iter_args(%[[R:.*]] = %[[R0]]) -> (tensor<4x8xf32>)
// CHECK:   %[[PREV_AT:.*]] = arith.subi %[[K]], %[[C1]] : index
// CHECK:   %[[PREV:.*]] = tensor.extract_slice %[[R]][0, %[[PREV_AT]]] [4, 1] [1, 1]
// CHECK:   %[[CUR:.*]] = tensor.extract_slice %[[X]][0, %[[K]]] [4, 1] [1, 1]
// CHECK:   %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[PREV]], %[[CUR]] : tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK:     arith.addf
// CHECK:   %[[NEXT:.*]] = tensor.insert_slice %[[SUM]] into %[[R]][0, %[[K]]] [4, 1] [1, 1]
// CHECK:   scf.yield %[[NEXT]] : tensor<4x8xf32>
func.func @cumsum(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dyn.cumsum %x dim 1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @cumprod_ints
// CHECK: scf.for
// CHECK:   arith.muli
func.func @cumprod_ints(%x: tensor<5xi64>) -> tensor<5xi64> {
  %0 = dyn.cumprod %x dim 0 : tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

// A running maximum propagates NaN (maximumf, as numpy's maximum.accumulate); integers compare
// signed.
// CHECK-LABEL: func.func @cummax_cummin
// CHECK: scf.for
// CHECK:   arith.maximumf
// CHECK: scf.for
// CHECK:   arith.minsi
func.func @cummax_cummin(%x: tensor<3x4xf64>, %y: tensor<6xi32>) -> (tensor<3x4xf64>, tensor<6xi32>) {
  %0 = dyn.cummax %x dim 0 : tensor<3x4xf64>
  %1 = dyn.cummin %y dim 0 : tensor<6xi32>
  return %0, %1 : tensor<3x4xf64>, tensor<6xi32>
}

// -----

// An empty tensor has nothing to scan.
// CHECK-LABEL: func.func @empty
// CHECK-NOT: scf.for
// CHECK: return %arg0
func.func @empty(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %0 = dyn.cumsum %x dim 1 : tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}
