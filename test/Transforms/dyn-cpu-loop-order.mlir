// RUN: tensor-opt %s -linalg-generalize-named-ops -dyn-cpu-loop-order --verify-each -split-input-file | FileCheck %s

// matmul: n (unit stride in B and C) becomes innermost, the reduction k moves before it.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-NOT: fastmath
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// x @ W^T (linear): k is unit stride in both inputs and stays innermost as a dot product,
// whose add may then reassociate.
// CHECK-LABEL: func.func @linear
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %o: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x16xf32>, tensor<32x16xf32>) outs(%o : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Elementwise generics keep their order.
// CHECK-LABEL: func.func @elementwise
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK-NOT: fastmath
#id = affine_map<(i, j) -> (i, j)>
func.func @elementwise(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%x : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Block partials of a row sum (what dyn-split-reductions makes of x.sum(axis=1)): the input is
// read in memory order, rows outside blocks, instead of one block of every row per pass.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @row_blocks
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
#in = affine_map<(b, r, k) -> (r, b, k)>
#out = affine_map<(b, r, k) -> (b, r)>
func.func @row_blocks(%x: tensor<8x4x16xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x4x16xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f32):
    %t = arith.addf %a, %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
