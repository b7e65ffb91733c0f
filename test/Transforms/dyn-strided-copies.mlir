// RUN: tensor-opt %s -dyn-strided-copies --verify-each | FileCheck %s

// A copy out of a strided view (a slice of a padded image) becomes a linalg.copy; the copy
// between two contiguous buffers stays a memref.copy (a memcpy).
// CHECK-LABEL: func.func @copies
// CHECK: linalg.copy ins(%{{.*}} : memref<4x32xf32, strided<[34, 1], offset: 1>>) outs(%arg1 : memref<4x32xf32>)
// CHECK: memref.copy %arg1, %arg2 : memref<4x32xf32> to memref<4x32xf32>
// CHECK-NOT: memref.copy
func.func @copies(%a: memref<4x34xf32>, %b: memref<4x32xf32>, %c: memref<4x32xf32>) {
  %s = memref.subview %a[0, 1] [4, 32] [1, 1] : memref<4x34xf32> to memref<4x32xf32, strided<[34, 1], offset: 1>>
  memref.copy %s, %b : memref<4x32xf32, strided<[34, 1], offset: 1>> to memref<4x32xf32>
  memref.copy %b, %c : memref<4x32xf32> to memref<4x32xf32>
  return
}
