// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @sum_rows
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x8xf32>) outs(%[[F]] : tensor<4xf32>)
// CHECK: arith.addf
func.func @sum_rows(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = dyn.sum %x dims [1] : tensor<4x8xf32>
  return %0 : tensor<4xf32>
}

// -----

// keepdim keeps the reduced dimension as size 1 (constant 0 in the output map).
// CHECK-DAG: #[[KEEP:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @max_keepdim
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[KEEP]]], iterator_types = ["reduction", "parallel"]}
// CHECK: arith.maximumf
func.func @max_keepdim(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  %0 = dyn.max %x dims [0] keepdim : tensor<4x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

// mean is a sum and a division by the reduced element count (read at run time when dynamic).
// CHECK-LABEL: func.func @mean_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>)
// CHECK: arith.addf
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %[[D]] : index
// CHECK: %[[I:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: arith.divf %{{.*}}, %[[F]]
func.func @mean_dynamic(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  %0 = dyn.mean %x dims [1] : tensor<4x?xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @int_reductions
// CHECK: arith.muli
// CHECK: arith.constant 2147483647 : i32
// CHECK: arith.minsi
func.func @int_reductions(%x: tensor<5xi32>) -> (tensor<i32>, tensor<i32>) {
  %0 = dyn.prod %x dims [0] : tensor<5xi32>
  %1 = dyn.min %x dims [0] : tensor<5xi32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

// -----

// argmax carries the value and the row-major index within the reduced dims; the first extreme
// wins and NaN counts as the extreme.
// CHECK-LABEL: func.func @argmax_flat
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<i64>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[BEST:.*]]: f32, %[[BI:.*]]: i64):
// CHECK: %[[I0:.*]] = linalg.index 0
// CHECK: %[[I1:.*]] = linalg.index 1
// CHECK: arith.cmpf ogt, %[[V]], %[[BEST]]
// CHECK: arith.cmpf uno, %[[V]], %[[V]]
// CHECK: arith.select
// CHECK: arith.select
func.func @argmax_flat(%x: tensor<2x3xf32>) -> tensor<i64> {
  %0 = dyn.argmax %x dims [0, 1] : tensor<2x3xf32>
  return %0 : tensor<i64>
}

// -----

// softmax: the row maxima, e = exp(x - max) once, the row sums of e, and e / sum. (Each of
// the two later loop nests computing its own exp took 8.4 ms for 4096x1024 on one core.)
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X:.*]] : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x1xf32>)
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]] : tensor<4x16xf32>, tensor<4x1xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[E]] : tensor<4x16xf32>)
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[E]], %[[SUM]] : tensor<4x16xf32>, tensor<4x1xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
func.func @softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = dyn.softmax %x dim 1 : tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK: math.log
// CHECK: arith.subf
func.func @log_softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = dyn.log_softmax %x dim 1 : tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A reduction over an empty dimension is its identity, with no generic: as one, a body that
// folds to ignore its accumulator (`0 * acc` of the zeros of an empty slice) let
// canonicalization drop the fill of the init, and the loop of no iterations left the result
// unwritten (difftest 292100044:91).
// CHECK-LABEL: func.func @prod_of_nothing
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ONE]] : i64)
// CHECK-NOT: linalg.generic
// CHECK: return %[[FILL]]
func.func @prod_of_nothing(%x: tensor<3x0xi64>) -> tensor<3xi64> {
  %0 = dyn.prod %x dims [1] : tensor<3x0xi64>
  return %0 : tensor<3xi64>
}
