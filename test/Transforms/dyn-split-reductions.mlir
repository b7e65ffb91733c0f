// RUN: tensor-opt %s -dyn-to-linalg -dyn-split-reductions=block-size=4 --verify-each -split-input-file | FileCheck %s

// 10 elements in blocks of 4: two block partials, their sum, then the 2-element tail added on.
// CHECK-LABEL: func.func @sum
// CHECK-SAME: (%[[X:.*]]: tensor<10xf32>)
// CHECK-DAG: %[[MAIN:.*]] = tensor.extract_slice %[[X]][0] [8] [1]
// CHECK-DAG: %[[TAIL:.*]] = tensor.extract_slice %[[X]][8] [2] [1]
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %[[MAIN]] {{\[\[}}0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
// CHECK: %[[PARTIALS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[BLOCKS]] : tensor<2x4xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf {{.*}} fastmath<reassoc>
// CHECK: %[[TOTAL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PARTIALS]] : tensor<2xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[TAIL]] : tensor<2xf32>) outs(%[[TOTAL]] : tensor<f32>)
// CHECK:   arith.mulf
func.func @sum(%x: tensor<10xf32>) -> tensor<f32> {
  %0 = dyn.mul %x, %x : tensor<10xf32>, tensor<10xf32>
  %1 = dyn.sum %0 dims [0] : tensor<10xf32>
  return %1 : tensor<f32>
}

// -----

// Integer sums, maxima along columns (they vectorize across columns as they are) and
// reductions shorter than two blocks are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.extract_slice
func.func @untouched(%i: tensor<16xi64>, %x: tensor<16x4xf32>, %s: tensor<7xf32>) -> (tensor<i64>, tensor<4xf32>, tensor<f32>) {
  %0 = dyn.sum %i dims [0] : tensor<16xi64>
  %1 = dyn.max %x dims [0] : tensor<16x4xf32>
  %2 = dyn.sum %s dims [0] : tensor<7xf32>
  return %0, %1, %2 : tensor<i64>, tensor<4xf32>, tensor<f32>
}

// -----

// Row maxima are split like sums: exact in any order (NaN included), so no fastmath needed;
// the block maxima start from -inf.
// CHECK-LABEL: func.func @row_max
// CHECK: tensor.expand_shape {{.*}} : tensor<3x16xf32> into tensor<3x4x4xf32>
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:   arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<4x3xf32>)
// CHECK:   arith.maximumf
func.func @row_max(%x: tensor<3x16xf32>) -> tensor<3xf32> {
  %0 = dyn.max %x dims [1] : tensor<3x16xf32>
  return %0 : tensor<3xf32>
}

// -----

// A keepdim sum writes its output through a constant index (`(d0, d1) -> (d0, 0)`), which
// linalg::splitReduction turns into an invalid map; it stays whole (row sums of softmax).
// CHECK-LABEL: func.func @keepdim
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<3x16xf32>) outs(%{{.*}} : tensor<3x1xf32>)
// CHECK-NOT: tensor.expand_shape
func.func @keepdim(%x: tensor<3x16xf32>) -> tensor<3x1xf32> {
  %0 = dyn.sum %x dims [1] keepdim : tensor<3x16xf32>
  return %0 : tensor<3x1xf32>
}

// -----

// x.sum() of a 2-D x, its producer fused: collapsed to one dimension first, then split like a
// 1-D sum (one accumulator over all elements lost precision).
// CHECK-LABEL: func.func @full_2d
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [8, 4]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK:   arith.mulf
// CHECK:   arith.addf {{.*}} fastmath<reassoc>
func.func @full_2d(%x: tensor<4x8xf32>) -> tensor<f32> {
  %0 = dyn.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  %1 = dyn.sum %0 dims [0, 1] : tensor<4x8xf32>
  return %1 : tensor<f32>
}
