// RUN: tensor-opt %s -dyn-direct-convolutions --verify-each | FileCheck %s
// RUN: tensor-opt %s -dyn-direct-convolutions -dyn-to-linalg -dyn-lower-to-llvm="results-as-out-params=1 blas=1 use-generic-functions=1" | FileCheck %s --check-prefix=CALL

// A 3x3 convolution as the frontend writes it (filters times unfold's columns): one
// dyn.conv2d on the images and the 4-D filters, its result reshaped as the product's was.
// CHECK-LABEL: func.func @resblock_conv(
// CHECK-SAME: %[[X:.*]]: tensor<4x32x32x32xf32>, %[[W:.*]]: tensor<32x32x3x3xf32>)
// CHECK: %[[C:.*]] = dyn.conv2d %[[X]], %[[W]] padding [1, 1] : tensor<4x32x32x32xf32>, tensor<32x32x3x3xf32>
// CHECK: %[[Y:.*]] = dyn.reshape %[[C]] : tensor<4x32x32x32xf32> -> tensor<4x32x1024xf32>
// CHECK-NOT: dyn.unfold
// CHECK-NOT: dyn.matmul
// CHECK: return %[[Y]]
// Bufferized, a call of the runtime with the images' and filters' own buffers (row-major
// arguments) and the sizes: n, c, h, w, f, kh, kw and the padding.
// CALL-LABEL: llvm.func @resblock_conv(
// CALL-DAG: %[[C1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CALL-DAG: %[[C3:.*]] = llvm.mlir.constant(3 : i64) : i64
// CALL-DAG: %[[C4:.*]] = llvm.mlir.constant(4 : i64) : i64
// CALL-DAG: %[[C32:.*]] = llvm.mlir.constant(32 : i64) : i64
// CALL: llvm.call @dynamir_conv2d(%{{.*}}, %{{.*}}, %{{.*}}, %[[C4]], %[[C32]], %[[C32]], %[[C32]], %[[C32]], %[[C3]], %[[C3]], %[[C1]], %[[C1]])
// CALL-NOT: dynamir_sgemm
// CALL: llvm.return
func.func @resblock_conv(%x: tensor<4x32x32x32xf32>, %w: tensor<32x32x3x3xf32>)
    -> tensor<4x32x1024xf32> {
  %cols = dyn.unfold %x kernel [3, 3] dilation [1, 1] padding [1, 1] stride [1, 1]
      : tensor<4x32x32x32xf32>
  %w2 = dyn.reshape %w : tensor<32x32x3x3xf32> -> tensor<32x288xf32>
  %y = dyn.matmul %w2, %cols : tensor<32x288xf32>, tensor<4x288x1024xf32>
  return %y : tensor<4x32x1024xf32>
}

// Stride 2: the columns stay.
// CHECK-LABEL: func.func @strided(
// CHECK-NOT: dyn.conv2d
// CHECK: dyn.unfold
func.func @strided(%x: tensor<1x8x32x32xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x256xf32> {
  %cols = dyn.unfold %x kernel [3, 3] dilation [1, 1] padding [1, 1] stride [2, 2]
      : tensor<1x8x32x32xf32>
  %w2 = dyn.reshape %w : tensor<8x8x3x3xf32> -> tensor<8x72xf32>
  %y = dyn.matmul %w2, %cols : tensor<8x72xf32>, tensor<1x72x256xf32>
  return %y : tensor<1x8x256xf32>
}

// Dilation 2: the columns stay.
// CHECK-LABEL: func.func @dilated(
// CHECK-NOT: dyn.conv2d
// CHECK: dyn.unfold
func.func @dilated(%x: tensor<1x8x20x20xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x256xf32> {
  %cols = dyn.unfold %x kernel [3, 3] dilation [2, 2] padding [0, 0] stride [1, 1]
      : tensor<1x8x20x20xf32>
  %w2 = dyn.reshape %w : tensor<8x8x3x3xf32> -> tensor<8x72xf32>
  %y = dyn.matmul %w2, %cols : tensor<8x72xf32>, tensor<1x72x256xf32>
  return %y : tensor<1x8x256xf32>
}

// Filters not in fours (6), and output rows not in sixteens (24): LeNet's first convolution,
// whose product is faster than the kernel's scalar edges; float64. All stay columns.
// CHECK-LABEL: func.func @lenet_conv(
// CHECK-NOT: dyn.conv2d
// CHECK-LABEL: func.func @narrow_rows(
// CHECK-NOT: dyn.conv2d
// CHECK-LABEL: func.func @float64(
// CHECK-NOT: dyn.conv2d
// CHECK: return
func.func @lenet_conv(%x: tensor<64x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) -> tensor<64x6x576xf32> {
  %cols = dyn.unfold %x kernel [5, 5] dilation [1, 1] padding [0, 0] stride [1, 1]
      : tensor<64x1x28x28xf32>
  %w2 = dyn.reshape %w : tensor<6x1x5x5xf32> -> tensor<6x25xf32>
  %y = dyn.matmul %w2, %cols : tensor<6x25xf32>, tensor<64x25x576xf32>
  return %y : tensor<64x6x576xf32>
}
func.func @narrow_rows(%x: tensor<2x4x26x26xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x576xf32> {
  %cols = dyn.unfold %x kernel [3, 3] dilation [1, 1] padding [0, 0] stride [1, 1]
      : tensor<2x4x26x26xf32>
  %w2 = dyn.reshape %w : tensor<8x4x3x3xf32> -> tensor<8x36xf32>
  %y = dyn.matmul %w2, %cols : tensor<8x36xf32>, tensor<2x36x576xf32>
  return %y : tensor<2x8x576xf32>
}
func.func @float64(%x: tensor<1x4x16x16xf64>, %w: tensor<8x4x1x1xf64>) -> tensor<1x8x256xf64> {
  %cols = dyn.unfold %x kernel [1, 1] dilation [1, 1] padding [0, 0] stride [1, 1]
      : tensor<1x4x16x16xf64>
  %w2 = dyn.reshape %w : tensor<8x4x1x1xf64> -> tensor<8x4xf64>
  %y = dyn.matmul %w2, %cols : tensor<8x4xf64>, tensor<1x4x256xf64>
  return %y : tensor<1x8x256xf64>
}
