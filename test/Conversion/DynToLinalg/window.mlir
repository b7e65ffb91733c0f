// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each | FileCheck %s

// A box's offsets and sizes are read from the graph's 0-d tensors and clamped into the
// tensor: sizes into [0, dim], offsets into [0, dim - size].
// CHECK-LABEL: func.func @window
// CHECK-SAME: (%[[X:.*]]: tensor<8x8xf64>, %[[I:.*]]: tensor<i64>)
func.func @window(%x: tensor<8x8xf64>, %i: tensor<i64>) -> tensor<1x?xf64> {
  // CHECK: %[[N:.*]] = tensor.extract %[[I]][] : tensor<i64>
  // CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
  // CHECK: %[[SIZE:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
  // CHECK: %[[ROOM:.*]] = arith.subi %{{.*}}, %[[SIZE]] : index
  // CHECK: %[[COL:.*]] = arith.minsi %{{.*}}, %[[ROOM]] : index
  // CHECK: tensor.extract_slice %[[X]][%{{.*}}, %[[COL]]] [1, %[[SIZE]]] [1, 1] : tensor<8x8xf64> to tensor<1x?xf64>
  %0 = dyn.window %x[%i, %i] sizes [1, %i] : tensor<8x8xf64>
  return %0 : tensor<1x?xf64>
}

// CHECK-LABEL: func.func @insert_window
func.func @insert_window(%x: tensor<8xf64>, %v: tensor<1xf64>, %i: tensor<i64>) -> tensor<8xf64> {
  // CHECK: %[[AT:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
  // CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[AT]]] [1] [1] : tensor<1xf64> into tensor<8xf64>
  %0 = dyn.insert_window %v into %x[%i] : tensor<1xf64> into tensor<8xf64>
  return %0 : tensor<8xf64>
}
