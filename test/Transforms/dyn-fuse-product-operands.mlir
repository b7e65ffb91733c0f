// RUN: tensor-opt %s -dyn-fuse-product-operands -canonicalize --verify-each | FileCheck %s
// RUN: tensor-opt %s -dyn-fuse-product-operands=threads=8 | FileCheck %s --check-prefix=EIGHT

// With more threads than images, the product stays one op (dyn-blas shares each image's call).
// EIGHT-NOT: scf.forall

#window = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
#scalar = affine_map<(d0, d1, d2) -> ()>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#weight = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#cols = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A 3x3 convolution as dyn-to-linalg writes it (padding, window copy, zero fill, product): one
// image per iteration, its padding, window copy, fill and product inside the loop, nothing of
// the four images' columns left outside.
// CHECK-LABEL: func.func @convolution
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x32x32xf32>, %[[W:.*]]: tensor<32x288xf32>)
// CHECK-NOT: tensor<4x32x3x3x32x32xf32>
// CHECK: scf.forall (%[[I:.*]]) in (4) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<4x32x1024xf32>)
// CHECK: %[[IMAGE:.*]] = tensor.extract_slice %[[X]][%[[I]], 0, 0, 0] [1, 32, 32, 32]
// CHECK: %[[PADDED:.*]] = tensor.pad %[[IMAGE]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[WINDOWS:.*]] = linalg.generic
// CHECK-SAME: ins(%[[PADDED]] : tensor<1x32x34x34xf32>) outs(%{{.*}} : tensor<1x32x3x3x32x32xf32>)
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %[[WINDOWS]] {{.*}} into tensor<1x288x1024xf32>
// CHECK: %[[SLOT:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0, 0] [1, 32, 1024]
// CHECK: %[[ZERO:.*]] = linalg.generic {{.*}} outs(%[[SLOT]] : tensor<1x32x1024xf32>)
// CHECK: %[[PRODUCT:.*]] = linalg.generic
// CHECK-SAME: ins(%[[W]], %[[COLS]] : tensor<32x288xf32>, tensor<1x288x1024xf32>) outs(%[[ZERO]] : tensor<1x32x1024xf32>)
// CHECK: tensor.parallel_insert_slice %[[PRODUCT]] into %[[OUT]][%[[I]], 0, 0] [1, 32, 1024]
func.func @convolution(%x: tensor<4x32x32x32xf32>, %w: tensor<32x288xf32>) -> tensor<4x32x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<4x32x32x32xf32> to tensor<4x32x34x34xf32>
  %e = tensor.empty() : tensor<4x32x3x3x32x32xf32>
  %windows = linalg.generic {indexing_maps = [#window, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%padded : tensor<4x32x34x34xf32>) outs(%e : tensor<4x32x3x3x32x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x32x3x3x32x32xf32>
  %cols = tensor.collapse_shape %windows [[0], [1, 2, 3], [4, 5]] : tensor<4x32x3x3x32x32xf32> into tensor<4x288x1024xf32>
  %ze = tensor.empty() : tensor<4x32x1024xf32>
  %zf = linalg.generic {indexing_maps = [#scalar, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%zero : f32) outs(%ze : tensor<4x32x1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x32x1024xf32>
  %r = linalg.generic {indexing_maps = [#weight, #cols, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %cols : tensor<32x288xf32>, tensor<4x288x1024xf32>) outs(%zf : tensor<4x32x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x32x1024xf32>
  return %r : tensor<4x32x1024xf32>
}

// An operand that is computed, not copied: nothing is tiled.
// CHECK-LABEL: func.func @computed_operand
// CHECK-NOT: scf.forall
func.func @computed_operand(%x: tensor<4x288x1024xf32>, %w: tensor<32x288xf32>) -> tensor<4x32x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x288x1024xf32>
  %cols = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x288x1024xf32>) outs(%e : tensor<4x288x1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4x288x1024xf32>
  %ze = tensor.empty() : tensor<4x32x1024xf32>
  %zf = linalg.generic {indexing_maps = [#scalar, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%zero : f32) outs(%ze : tensor<4x32x1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x32x1024xf32>
  %r = linalg.generic {indexing_maps = [#weight, #cols, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %cols : tensor<32x288xf32>, tensor<4x288x1024xf32>) outs(%zf : tensor<4x32x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x32x1024xf32>
  return %r : tensor<4x32x1024xf32>
}

// A single image: nothing to gain from a loop of one.
// CHECK-LABEL: func.func @one_image
// CHECK-NOT: scf.forall
func.func @one_image(%padded: tensor<1x32x34x34xf32>, %w: tensor<32x288xf32>) -> tensor<1x32x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x3x3x32x32xf32>
  %windows = linalg.generic {indexing_maps = [#window, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%padded : tensor<1x32x34x34xf32>) outs(%e : tensor<1x32x3x3x32x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x32x3x3x32x32xf32>
  %cols = tensor.collapse_shape %windows [[0], [1, 2, 3], [4, 5]] : tensor<1x32x3x3x32x32xf32> into tensor<1x288x1024xf32>
  %ze = tensor.empty() : tensor<1x32x1024xf32>
  %zf = linalg.generic {indexing_maps = [#scalar, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%zero : f32) outs(%ze : tensor<1x32x1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x32x1024xf32>
  %r = linalg.generic {indexing_maps = [#weight, #cols, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %cols : tensor<32x288xf32>, tensor<1x288x1024xf32>) outs(%zf : tensor<1x32x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x32x1024xf32>
  return %r : tensor<1x32x1024xf32>
}

// The windows are returned too: the copy, which would then run twice, cannot move into a loop,
// and the product stays one op.
// CHECK-LABEL: func.func @windows_used_twice
// CHECK-NOT: scf.forall
func.func @windows_used_twice(%padded: tensor<4x32x34x34xf32>, %w: tensor<32x288xf32>) -> (tensor<4x32x1024xf32>, tensor<4x32x3x3x32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x3x3x32x32xf32>
  %windows = linalg.generic {indexing_maps = [#window, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%padded : tensor<4x32x34x34xf32>) outs(%e : tensor<4x32x3x3x32x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x32x3x3x32x32xf32>
  %cols = tensor.collapse_shape %windows [[0], [1, 2, 3], [4, 5]] : tensor<4x32x3x3x32x32xf32> into tensor<4x288x1024xf32>
  %ze = tensor.empty() : tensor<4x32x1024xf32>
  %zf = linalg.generic {indexing_maps = [#scalar, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%zero : f32) outs(%ze : tensor<4x32x1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x32x1024xf32>
  %r = linalg.generic {indexing_maps = [#weight, #cols, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %cols : tensor<32x288xf32>, tensor<4x288x1024xf32>) outs(%zf : tensor<4x32x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x32x1024xf32>
  return %r, %windows : tensor<4x32x1024xf32>, tensor<4x32x3x3x32x32xf32>
}
