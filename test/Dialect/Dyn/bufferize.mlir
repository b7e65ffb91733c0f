// RUN: tensor-opt %s -one-shot-bufferize="bufferize-function-boundaries" -split-input-file | FileCheck %s

// dyn.cholesky bufferizes into a copy of its operand in a new buffer (potrf works in place), a
// new byte for `ok`, and a call of the runtime's potrf with their addresses: f64, a, n, batch,
// ok.
// CHECK: func.func private @dynamir_potrf(i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @cholesky
// CHECK-SAME: (%[[A:.*]]: memref<2x3x3xf64{{.*}}>)
// CHECK: %[[F64:.*]] = arith.constant 1 : i64
// CHECK: %[[L:.*]] = memref.alloc() {{.*}}: memref<2x3x3xf64>
// CHECK: memref.copy %[[A]], %[[L]]
// CHECK: %[[PL:.*]] = memref.extract_aligned_pointer_as_index %[[L]]
// CHECK: %[[IL:.*]] = arith.index_cast %[[PL]] : index to i64
// CHECK: %[[N:.*]] = arith.constant 3 : i64
// CHECK: %[[BATCH:.*]] = arith.constant 2 : i64
// CHECK: %[[OK:.*]] = memref.alloc() {{.*}}: memref<i1>
// CHECK: %[[POK:.*]] = memref.extract_aligned_pointer_as_index %[[OK]]
// CHECK: %[[IOK:.*]] = arith.index_cast %[[POK]] : index to i64
// CHECK: call @dynamir_potrf(%[[F64]], %[[IL]], %[[N]], %[[BATCH]], %[[IOK]])
// CHECK: return %[[L]], %[[OK]]
func.func @cholesky(%a: tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<i1>) {
  %l, %ok = dyn.cholesky %a : tensor<2x3x3xf64>
  return %l, %ok : tensor<2x3x3xf64>, tensor<i1>
}

// -----

// dyn.solve copies both operands into contiguous buffers (the runtime overwrites b's copy
// with the solution) and passes f32 (0), b, a, n, k, batch, ok.
// CHECK: func.func private @dynamir_gesv(i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @solve
// CHECK-SAME: (%[[A:.*]]: memref<4x4xf32{{.*}}>, %[[B:.*]]: memref<4x2xf32{{.*}}>)
// CHECK: %[[X:.*]] = memref.alloc() {{.*}}: memref<4x2xf32>
// CHECK: memref.copy %[[B]], %[[X]]
// CHECK: %[[LU:.*]] = memref.alloc() {{.*}}: memref<4x4xf32>
// CHECK: memref.copy %[[A]], %[[LU]]
// CHECK: call @dynamir_gesv
// CHECK: return %[[X]]
func.func @solve(%a: tensor<4x4xf32>, %b: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<i1>) {
  %x, %ok = dyn.solve %a, %b : tensor<4x4xf32>, tensor<4x2xf32>
  return %x, %ok : tensor<4x2xf32>, tensor<i1>
}
