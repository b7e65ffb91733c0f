// RUN: tensor-opt %s -dyn-fuse-row-reductions=threads=2 -canonicalize -cse --verify-each | FileCheck %s
// RUN: tensor-opt %s -dyn-fuse-row-reductions -canonicalize -cse | FileCheck %s --check-prefix=ONE

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

// A row softmax as dyn-to-linalg writes it: the row maxima, e = exp(x - max), the row sums of
// e, e / sum. One loop over blocks of 16 rows (64 KiB of 1024 floats), parallel on 2 threads,
// with everything inside: the fills, both reductions (into rows without the keepdim unit
// dimension, expanded back) and both elementwise ops, on 16x1024 slices of x.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4096x1024xf32>)
// CHECK-NOT: linalg.
// CHECK: scf.forall (%[[I:.*]]) = (0) to (4096) step (16) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<4096x1024xf32>)
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [16, 1024] [1, 1]
// CHECK: linalg.fill {{.*}} -> tensor<16xf32>
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<16x1024xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[MAXK:.*]] = tensor.expand_shape %[[MAX]] {{\[\[}}0, 1]] output_shape [16, 1]
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[ROWS]], %[[MAXK]] : tensor<16x1024xf32>, tensor<16x1xf32>)
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[E]] : tensor<16x1024xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[SUMK:.*]] = tensor.expand_shape %[[SUM]]
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[SUMK]] : tensor<16x1024xf32>, tensor<16x1xf32>)
// CHECK: arith.divf
// CHECK: tensor.parallel_insert_slice %[[Y]] into %[[OUT]][%[[I]], 0] [16, 1024] [1, 1]
// CHECK-NOT: linalg.
// CHECK: return
// On one thread the blocks are a sequential loop.
// ONE-LABEL: func.func @softmax
// ONE-NOT: scf.forall
// ONE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// ONE-COUNT-2: iterator_types = ["parallel", "reduction"]
func.func @softmax(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<4096x1xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%rows : tensor<4096x1xf32>) -> tensor<4096x1xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4096x1024xf32>) outs(%m0 : tensor<4096x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4096x1xf32>
  %full = tensor.empty() : tensor<4096x1024xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4096x1024xf32>, tensor<4096x1xf32>) outs(%full : tensor<4096x1024xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4096x1024xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<4096x1xf32>) -> tensor<4096x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4096x1024xf32>) outs(%s0 : tensor<4096x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc fastmath<reassoc> : f32
    linalg.yield %0 : f32
  } -> tensor<4096x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4096x1024xf32>, tensor<4096x1xf32>) outs(%full : tensor<4096x1024xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<4096x1024xf32>
  return %y : tensor<4096x1024xf32>
}

// Attention scores [batch, heads, queries, keys]: blocks of one (batch, head) pair's 64 rows.
// CHECK-LABEL: func.func @attention
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 4)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1x64x64xf32>) outs(%{{.*}} : tensor<1x1x64xf32>)
// CHECK: tensor.parallel_insert_slice {{.*}} [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x1x64x64xf32> into tensor<2x4x64x64xf32>
func.func @attention(%x: tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %rows = tensor.empty() : tensor<2x4x64x1xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%rows : tensor<2x4x64x1xf32>) -> tensor<2x4x64x1xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x64x64xf32>) outs(%m0 : tensor<2x4x64x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x64x1xf32>
  %full = tensor.empty() : tensor<2x4x64x64xf32>
  %y = linalg.generic {indexing_maps = [#id4, #row4, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<2x4x64x64xf32>, tensor<2x4x64x1xf32>) outs(%full : tensor<2x4x64x64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x64x64xf32>
  return %y : tensor<2x4x64x64xf32>
}

// Column sums are not rows: nothing changes.
// CHECK-LABEL: func.func @columns
// CHECK-NOT: scf.forall
// CHECK-NOT: scf.for
func.func @columns(%x: tensor<512x256xf32>) -> tensor<512x256xf32> {
  %zero = arith.constant 0.0 : f32
  %cols = tensor.empty() : tensor<1x256xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%cols : tensor<1x256xf32>) -> tensor<1x256xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<512x256xf32>) outs(%s0 : tensor<1x256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc fastmath<reassoc> : f32
    linalg.yield %0 : f32
  } -> tensor<1x256xf32>
  %full = tensor.empty() : tensor<512x256xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<512x256xf32>, tensor<1x256xf32>) outs(%full : tensor<512x256xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<512x256xf32>
  return %y : tensor<512x256xf32>
}

// A reduction that is also returned is not fused (it would run twice); nor then is its
// consumer tiled, with no other reduction to fuse.
// CHECK-LABEL: func.func @max_returned
// CHECK-NOT: scf.for
// CHECK: return
func.func @max_returned(%x: tensor<4096x1024xf32>) -> (tensor<4096x1024xf32>, tensor<4096x1xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %rows = tensor.empty() : tensor<4096x1xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%rows : tensor<4096x1xf32>) -> tensor<4096x1xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4096x1024xf32>) outs(%m0 : tensor<4096x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4096x1xf32>
  %full = tensor.empty() : tensor<4096x1024xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4096x1024xf32>, tensor<4096x1xf32>) outs(%full : tensor<4096x1024xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    linalg.yield %0 : f32
  } -> tensor<4096x1024xf32>
  return %y, %max : tensor<4096x1024xf32>, tensor<4096x1xf32>
}

// Attention, as dyn-to-linalg and linalg-generalize-named-ops write it: the scores Q K^T (a
// product onto a generic fill of zeros), their row softmax, and P V. P V's rows are tiled by
// blocks of 64 (a 512-key row of scores is 2 KiB: 32 rows would fill 64 KiB, but a product's
// block has at least 64 rows), and the scores' product, the softmax and both fills fuse into
// the same loop: both products run on 64-row slices, and the scores exist one block at a time.
#qk_q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#qk_k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#out5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#pv_p = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#pv_v = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#scalar4 = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-LABEL: func.func @scores_softmax_values
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x512x64xf32>, %[[K:.*]]: tensor<1x2x512x64xf32>, %[[V:.*]]: tensor<1x2x512x64xf32>)
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[H:.*]], %[[I:.*]]) = (0, 0) to (2, 512) step (1, 64)
// CHECK: %[[QB:.*]] = tensor.extract_slice %[[Q]][0, %[[H]], %[[I]], 0] [1, 1, 64, 64]
// CHECK: %[[S:.*]] = linalg.generic {{.*}}"reduction"]} ins(%[[QB]], %{{.*}} : tensor<1x1x64x64xf32>, tensor<1x1x512x64xf32>) outs(%{{.*}} : tensor<1x1x64x512xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<1x1x64x512xf32>)
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[S]], %{{.*}} : tensor<1x1x64x512xf32>, tensor<1x1x64x1xf32>)
// CHECK: math.exp
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[E]], %{{.*}} : tensor<1x1x64x512xf32>, tensor<1x1x64x1xf32>)
// CHECK: arith.divf
// CHECK: %[[O:.*]] = linalg.generic {{.*}}"reduction"]} ins(%[[P]], %{{.*}} : tensor<1x1x64x512xf32>, tensor<1x1x512x64xf32>) outs(%{{.*}} : tensor<1x1x64x64xf32>)
// CHECK: tensor.parallel_insert_slice %[[O]]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @scores_softmax_values(%q: tensor<1x2x512x64xf32>, %k: tensor<1x2x512x64xf32>, %v: tensor<1x2x512x64xf32>) -> tensor<1x2x512x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scoresEmpty = tensor.empty() : tensor<1x2x512x512xf32>
  %outEmpty = tensor.empty() : tensor<1x2x512x64xf32>
  %rowsEmpty = tensor.empty() : tensor<1x2x512x1xf32>
  %s0 = linalg.generic {indexing_maps = [#scalar4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%zero : f32) outs(%scoresEmpty : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x512x512xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #out5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>) outs(%s0 : tensor<1x2x512x512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x512x512xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%rowsEmpty : tensor<1x2x512x1xf32>) -> tensor<1x2x512x1xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<1x2x512x512xf32>) outs(%m0 : tensor<1x2x512x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x512x1xf32>
  %e = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<1x2x512x512xf32>, tensor<1x2x512x1xf32>) outs(%scoresEmpty : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x512x512xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%rowsEmpty : tensor<1x2x512x1xf32>) -> tensor<1x2x512x1xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : tensor<1x2x512x512xf32>) outs(%z0 : tensor<1x2x512x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x512x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %sum : tensor<1x2x512x512xf32>, tensor<1x2x512x1xf32>) outs(%scoresEmpty : tensor<1x2x512x512xf32>) {
  ^bb0(%in: f32, %t: f32, %out: f32):
    %0 = arith.divf %in, %t : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x512x512xf32>
  %o0 = linalg.generic {indexing_maps = [#scalar4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%zero : f32) outs(%outEmpty : tensor<1x2x512x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x512x64xf32>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #out5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x2x512x512xf32>, tensor<1x2x512x64xf32>) outs(%o0 : tensor<1x2x512x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x512x64xf32>
  return %o : tensor<1x2x512x64xf32>
}
