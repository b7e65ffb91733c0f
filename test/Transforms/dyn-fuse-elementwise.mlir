// RUN: tensor-opt %s -dyn-fuse-elementwise --verify-each -split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// An activation feeding a matrix product stays its own loop: fused, it would run once per
// output column (the product reads it without n).
// CHECK-LABEL: func.func @activation_before_product
// CHECK: %[[ACT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: math.erf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ACT]], %{{.*}} :
// CHECK-NOT: math.erf
func.func @activation_before_product(%h: tensor<64x256xf32>, %w: tensor<256x32xf32>,
                                     %init: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.erf %x : f32
    linalg.yield %y : f32
  } -> tensor<64x256xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%g, %w : tensor<64x256xf32>, tensor<256x32xf32>) outs(%init : tensor<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %p : tensor<64x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A reduction reads each element of its producer once: the producer fuses into it.
// CHECK-LABEL: func.func @square_before_sum
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @square_before_sum(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %a : f32
    linalg.yield %y : f32
  } -> tensor<8x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// A transpose only moves data: it fuses into the product as a transposed indexing map.
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @transposed_operand
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BT]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 :
// CHECK-NOT: linalg.generic
func.func @transposed_operand(%q: tensor<64x32xf32>, %k: tensor<64x32xf32>,
                              %init: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<32x64xf32>
  %kt = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<64x32xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<32x64xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %kt : tensor<64x32xf32>, tensor<32x64xf32>) outs(%init : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %p : tensor<64x64xf32>
}

// -----

#v = affine_map<(d0) -> (d0)>

// Siblings over the same loops that read a common input merge into one generic with both
// results, and the product both read becomes single-use and fuses in: one pass over the
// data instead of three (the butterfly's even + w * odd and even - w * odd).
// CHECK-LABEL: func.func @siblings
// CHECK: %[[M:.*]]:2 = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[M]]#0, %[[M]]#1
func.func @siblings(%even: tensor<64xf32>, %w: tensor<64xf32>, %odd: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %t = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%w, %odd : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%even, %t : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %diff = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%even, %t : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64xf32>
  return %sum, %diff : tensor<64xf32>, tensor<64xf32>
}

// -----

#v = affine_map<(d0) -> (d0)>

// A sibling whose result is used before the other sibling stays apart: the merged generic
// would take the later one's place, after that use.
// CHECK-LABEL: func.func @sibling_used_between
// CHECK: math.exp
// CHECK: tensor.extract_slice
// CHECK: linalg.generic
// CHECK: arith.mulf
func.func @sibling_used_between(%x: tensor<64xf32>) -> (tensor<32xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<64xf32>
  %u = tensor.extract_slice %a[0] [32] [1] : tensor<64xf32> to tensor<32xf32>
  %c = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %y = arith.mulf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<64xf32>
  return %u, %c : tensor<32xf32>, tensor<64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A reshape that would split the innermost loop does not fold into the generic: max-pooling's
// [.., 24] -> [.., 12, 2] would leave the ReLU a vector loop of 2 elements.
// CHECK-LABEL: func.func @split_innermost
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: tensor.expand_shape %[[R]] {{\[\[}}0], [1, 2]] output_shape [6, 12, 2] : tensor<6x24xf32> into tensor<6x12x2xf32>
func.func @split_innermost(%x: tensor<6x24xf32>) -> tensor<6x12x2xf32> {
  %e = tensor.empty() : tensor<6x24xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<6x24xf32>) outs(%e : tensor<6x24xf32>) {
  ^bb0(%in: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %y = arith.maximumf %in, %zero : f32
    linalg.yield %y : f32
  } -> tensor<6x24xf32>
  %s = tensor.expand_shape %r [[0], [1, 2]] output_shape [6, 12, 2] : tensor<6x24xf32> into tensor<6x12x2xf32>
  return %s : tensor<6x12x2xf32>
}
