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

// -----

// dyn.sort copies its operand into a new buffer (the runtime sorts it in place), makes a new
// int64 buffer for the positions, and passes kind (5: i32), values, indices and the lanes:
// `outer` blocks of `n` elements `inner` apart (here 2 x 3 x 4 along axis 1: 2, 3, 4), and
// descending.
// CHECK: func.func private @dynamir_sort(i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @sort
// CHECK-SAME: (%[[X:.*]]: memref<2x3x4xi32{{.*}}>)
// CHECK: %[[KIND:.*]] = arith.constant 5 : i64
// CHECK: %[[V:.*]] = memref.alloc() {{.*}}: memref<2x3x4xi32>
// CHECK: memref.copy %[[X]], %[[V]]
// CHECK: %[[PV:.*]] = memref.extract_aligned_pointer_as_index %[[V]]
// CHECK: %[[IV:.*]] = arith.index_cast %[[PV]] : index to i64
// CHECK: %[[I:.*]] = memref.alloc() {{.*}}: memref<2x3x4xi64>
// CHECK: %[[PI:.*]] = memref.extract_aligned_pointer_as_index %[[I]]
// CHECK: %[[II:.*]] = arith.index_cast %[[PI]] : index to i64
// CHECK: %[[OUTER:.*]] = arith.constant 2 : i64
// CHECK: %[[N:.*]] = arith.constant 3 : i64
// CHECK: %[[INNER:.*]] = arith.constant 4 : i64
// CHECK: %[[DESC:.*]] = arith.constant 1 : i64
// CHECK: call @dynamir_sort(%[[KIND]], %[[IV]], %[[II]], %[[OUTER]], %[[N]], %[[INNER]], %[[DESC]])
// CHECK: return %[[V]], %[[I]]
func.func @sort(%x: tensor<2x3x4xi32>) -> (tensor<2x3x4xi32>, tensor<2x3x4xi64>) {
  %v, %i = dyn.sort %x axis 1 descending : tensor<2x3x4xi32>
  return %v, %i : tensor<2x3x4xi32>, tensor<2x3x4xi64>
}

// -----

// A dynamic dimension is read from the copy: n of a tensor<?xf64> is its size.
// CHECK-LABEL: func.func @sort_dynamic
// CHECK: %[[V:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<?xf64>
// CHECK: %[[D:.*]] = memref.dim %[[V]], %{{.*}} : memref<?xf64>
// CHECK: memref.alloc(%[[D]]) {{.*}}: memref<?xi64>
// CHECK: %[[SIZE:.*]] = memref.dim %[[V]]
// CHECK: %[[N:.*]] = arith.index_cast %[[SIZE]] : index to i64
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[PRODUCT:.*]] = arith.muli %[[N]], %[[ONE]] : i64
// CHECK: call @dynamir_sort(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[PRODUCT]], %{{.*}}, %{{.*}})
func.func @sort_dynamic(%x: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xi64>) {
  %v, %i = dyn.sort %x axis 0 : tensor<?xf64>
  return %v, %i : tensor<?xf64>, tensor<?xi64>
}
