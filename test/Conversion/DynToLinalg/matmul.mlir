// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @mm
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<5x6xf32>) outs(%[[F]] : tensor<4x6xf32>)
func.func @mm(%a: tensor<4x5xf32>, %b: tensor<5x6xf32>) -> tensor<4x6xf32> {
  %0 = dyn.matmul %a, %b : tensor<4x5xf32>, tensor<5x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @vectors
// CHECK: linalg.vecmat
// CHECK: linalg.matvec
// CHECK: linalg.dot
// CHECK: linalg.batch_matmul
func.func @vectors(%v: tensor<5xf32>, %m: tensor<5x6xf32>, %n: tensor<4x5xf32>,
                   %a: tensor<2x4x5xf32>, %b: tensor<2x5x6xf32>) {
  %0 = dyn.matmul %v, %m : tensor<5xf32>, tensor<5x6xf32>
  %1 = dyn.matmul %n, %v : tensor<4x5xf32>, tensor<5xf32>
  %2 = dyn.matmul %v, %v : tensor<5xf32>, tensor<5xf32>
  %3 = dyn.matmul %a, %b : tensor<2x4x5xf32>, tensor<2x5x6xf32>
  return
}

// -----

// Broadcast batches: a contraction with the size-1 batch read at index 0.
// CHECK-DAG: #[[L:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[R:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @batch_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[L]], #[[R]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @batch_broadcast(%a: tensor<8x1x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<8x3x4x6xf32> {
  %0 = dyn.matmul %a, %b : tensor<8x1x4x5xf32>, tensor<3x5x6xf32>
  return %0 : tensor<8x3x4x6xf32>
}

// -----

// linear: one contraction whose init is the broadcast bias (the add is free).
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[IN:.*]]: tensor<5x4xf32>, %[[WT:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[BIAS]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[B]] : tensor<8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[IN]], %[[WT]] : tensor<5x4xf32>, tensor<8x4xf32>) outs(%[[INIT]] : tensor<5x8xf32>)
func.func @linear(%x: tensor<5x4xf32>, %w: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<5x8xf32> {
  %0 = dyn.linear %x, %w, %b : tensor<5x4xf32>, tensor<8x4xf32>, tensor<8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

// Without a bias the init is zeros.
// CHECK-LABEL: func.func @linear_no_bias
// CHECK: linalg.fill
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @linear_no_bias(%x: tensor<4xf32>, %w: tensor<8x4xf32>) -> tensor<8xf32> {
  %0 = dyn.linear %x, %w : tensor<4xf32>, tensor<8x4xf32>
  return %0 : tensor<8xf32>
}

// -----

// linear of a batch of sequences: the rows collapse into one rank-2 product (what dyn-blas
// hands to BLAS) and the result expands back; a dynamic batch stays dynamic.
// CHECK-LABEL: func.func @linear_3d
// CHECK-SAME: (%[[IN:.*]]: tensor<?x64x256xf32>, %[[WT:.*]]: tensor<512x256xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[IN]] {{\[\[}}0, 1], [2]] : tensor<?x64x256xf32> into tensor<?x256xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]], %[[WT]] : tensor<?x256xf32>, tensor<512x256xf32>) outs(%{{.*}} : tensor<?x512xf32>)
// CHECK: %[[B:.*]] = tensor.dim %[[IN]], %c0
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2]] output_shape [%[[B]], 64, 512] : tensor<?x512xf32> into tensor<?x64x512xf32>
func.func @linear_3d(%x: tensor<?x64x256xf32>, %w: tensor<512x256xf32>, %b: tensor<512xf32>) -> tensor<?x64x512xf32> {
  %0 = dyn.linear %x, %w, %b : tensor<?x64x256xf32>, tensor<512x256xf32>, tensor<512xf32>
  return %0 : tensor<?x64x512xf32>
}

// -----

// x @ W with a batched x and one matrix W: one linalg.matmul over all rows.
// CHECK-LABEL: func.func @batched_times_matrix
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<2x3x4x5xf32> into tensor<24x5xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[ROWS]], %{{.*}} : tensor<24x5xf32>, tensor<5x6xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [2, 3, 4, 6] : tensor<24x6xf32> into tensor<2x3x4x6xf32>
func.func @batched_times_matrix(%a: tensor<2x3x4x5xf32>, %b: tensor<5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = dyn.matmul %a, %b : tensor<2x3x4x5xf32>, tensor<5x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// -----

// Leading sizes of which two are dynamic go back by a reshape, not an expand_shape (whose
// memref form upstream's expand-strided-metadata crashes on).
// CHECK-LABEL: func.func @batched_dynamic
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: %[[S:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %{{.*}} : tensor<3xindex>
// CHECK: tensor.reshape %[[P]](%[[S]]) : (tensor<?x?xf32>, tensor<3xindex>) -> tensor<?x?x?xf32>
func.func @batched_dynamic(%a: tensor<?x?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = dyn.matmul %a, %b : tensor<?x?x?xf32>, tensor<?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// unfold: the padded images, then one generic whose input map walks each window (with the
// stride on the output position and the dilation on the kernel offset), collapsed to columns.
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2 * 3, d3 + d5)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-LABEL: func.func @unfold
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 2] high[0, 0, 1, 2]
// CHECK: tensor.yield %{{.*}} : f32
// CHECK: } : tensor<?x3x8x9xf32> to tensor<?x3x10x13xf32>
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x3x2x2x4x12xf32>
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[WIN]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<?x3x10x13xf32>) outs(%[[E]] : tensor<?x3x2x2x4x12xf32>)
// CHECK: tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<?x3x2x2x4x12xf32> into tensor<?x12x48xf32>
func.func @unfold(%x: tensor<?x3x8x9xf32>) -> tensor<?x12x48xf32> {
  %0 = dyn.unfold %x kernel [2, 2] dilation [3, 1] padding [1, 2] stride [2, 1] : tensor<?x3x8x9xf32>
  return %0 : tensor<?x12x48xf32>
}

// -----

// Without padding the generic reads the images themselves.
// CHECK-LABEL: func.func @unfold_unpadded
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x1x5x5xf32>)
func.func @unfold_unpadded(%x: tensor<2x1x5x5xf32>) -> tensor<2x9x9xf32> {
  %0 = dyn.unfold %x kernel [3, 3] dilation [1, 1] padding [0, 0] stride [1, 1] : tensor<2x1x5x5xf32>
  return %0 : tensor<2x9x9xf32>
}

// -----

// A transposed operand is read through a transposed map instead of being copied, so that
// dyn-blas gives BLAS a transpose flag (`centered.T @ centered`, `q @ k.transpose(-2, -1)`).
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[KT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func.func @transposed
// CHECK: linalg.generic {indexing_maps = [#[[AT]], #[[B]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg0 : tensor<7x4xf32>, tensor<7x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[Q]], #[[KT]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg1, %arg2 : tensor<2x3x5x8xf32>, tensor<2x3x6x8xf32>)
func.func @transposed(%a: tensor<7x4xf32>, %q: tensor<2x3x5x8xf32>, %k: tensor<2x3x6x8xf32>) -> (tensor<4x4xf32>, tensor<2x3x5x6xf32>) {
  %0 = dyn.transpose %a perm [1, 0] : tensor<7x4xf32>
  %1 = dyn.matmul %0, %a : tensor<4x7xf32>, tensor<7x4xf32>
  %2 = dyn.transpose %k perm [0, 1, 3, 2] : tensor<2x3x6x8xf32>
  %3 = dyn.matmul %q, %2 : tensor<2x3x5x8xf32>, tensor<2x3x8x6xf32>
  return %1, %3 : tensor<4x4xf32>, tensor<2x3x5x6xf32>
}

// -----

// Heads moved next to the batch (`q.view(B, T, H, D).transpose(1, 2)`) are read in the input's
// own layout through a permuted map, q as [b, m, h, k] and k as [b, n, h, k]: no copy. A
// transpose that would leave a batch dimension innermost (v) is copied once instead.
// CHECK-DAG: #[[QH:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK-DAG: #[[KH:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
// CHECK-LABEL: func.func @heads
// CHECK: linalg.generic {indexing_maps = [#[[QH]], #[[KH]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<2x5x3x8xf32>, tensor<2x6x3x8xf32>)
// CHECK: %[[VT:.*]] = linalg.transpose ins(%arg2 : tensor<2x8x6x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[VT]] : tensor<2x3x5x6xf32>, tensor<2x3x6x8xf32>)
func.func @heads(%q: tensor<2x5x3x8xf32>, %k: tensor<2x6x3x8xf32>, %v: tensor<2x8x6x3xf32>) -> tensor<2x3x5x8xf32> {
  %qh = dyn.transpose %q perm [0, 2, 1, 3] : tensor<2x5x3x8xf32>
  %kh = dyn.transpose %k perm [0, 2, 3, 1] : tensor<2x6x3x8xf32>
  %s = dyn.matmul %qh, %kh : tensor<2x3x5x8xf32>, tensor<2x3x8x6xf32>
  %vh = dyn.transpose %v perm [0, 3, 2, 1] : tensor<2x8x6x3xf32>
  %o = dyn.matmul %s, %vh : tensor<2x3x5x6xf32>, tensor<2x3x6x8xf32>
  return %o : tensor<2x3x5x8xf32>
}

// -----

// A vector against a batch of matrices: the vector as a column (or a row), the product's
// dimension of 1 collapsed away.
// CHECK-LABEL: func.func @batch_times_vector
// CHECK: %[[COL:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1]] output_shape [7, 1] : tensor<7xf32> into tensor<7x1xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %[[COL]] : tensor<3x7x7xf32>, tensor<7x1xf32>)
// CHECK: tensor.collapse_shape %[[P]] {{\[\[}}0], [1, 2]] : tensor<3x7x1xf32> into tensor<3x7xf32>
// CHECK: %[[ROW:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1]] output_shape [1, 7] : tensor<7xf32> into tensor<1x7xf32>
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[ROW]], %arg0 : tensor<1x7xf32>, tensor<3x7x7xf32>)
// CHECK: tensor.collapse_shape %[[Q]] {{\[\[}}0], [1, 2]] : tensor<3x1x7xf32> into tensor<3x7xf32>
func.func @batch_times_vector(%a: tensor<3x7x7xf32>, %v: tensor<7xf32>) -> (tensor<3x7xf32>, tensor<3x7xf32>) {
  %0 = dyn.matmul %a, %v : tensor<3x7x7xf32>, tensor<7xf32>
  %1 = dyn.matmul %v, %a : tensor<7xf32>, tensor<3x7x7xf32>
  return %0, %1 : tensor<3x7xf32>, tensor<3x7xf32>
}
