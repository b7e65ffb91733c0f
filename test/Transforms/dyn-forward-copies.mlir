// RUN: tensor-opt %s -dyn-forward-copies --verify-each -split-input-file | FileCheck %s

#v = affine_map<(d0) -> (d0)>

// The two halves of a concatenation: each generic writes its half of the result, made before
// it, and the copies and temporaries go.
// CHECK-LABEL: func.func @halves
// CHECK: %[[R:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[LO:.*]] = memref.subview %[[R]][0] [4] [1]
// CHECK: linalg.generic {{.*}} outs(%[[LO]] :
// CHECK: %[[HI:.*]] = memref.subview %[[R]][4] [4] [1]
// CHECK: linalg.generic {{.*}} outs(%[[HI]] :
// CHECK-NOT: memref.copy
// CHECK: return %[[R]]
func.func @halves(%a: memref<4xf32>, %b: memref<4xf32>) -> memref<8xf32> {
  %t0 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%t0 : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.sin %x : f32
    linalg.yield %y : f32
  }
  %t1 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%b : memref<4xf32>) outs(%t1 : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.cos %x : f32
    linalg.yield %y : f32
  }
  %r = memref.alloc() : memref<8xf32>
  %lo = memref.subview %r[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %t0, %lo : memref<4xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %r[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.copy %t1, %hi : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
  return %r : memref<8xf32>
}

// -----

#v = affine_map<(d0) -> (d0)>

// One generic with both halves as outputs (siblings merged): disjoint parts of the result,
// both forwarded.
// CHECK-LABEL: func.func @two_outputs
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : memref<4xf32, strided<[1]>>, memref<4xf32, strided<[1], offset: 4>>)
// CHECK-NOT: memref.copy
func.func @two_outputs(%a: memref<4xf32>) -> memref<8xf32> {
  %t0 = memref.alloc() : memref<4xf32>
  %t1 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%t0, %t1 : memref<4xf32>, memref<4xf32>) {
  ^bb0(%x: f32, %o: f32, %p: f32):
    %y = arith.addf %x, %x : f32
    %z = arith.mulf %x, %x : f32
    linalg.yield %y, %z : f32, f32
  }
  %r = memref.alloc() : memref<8xf32>
  %lo = memref.subview %r[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %t0, %lo : memref<4xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %r[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.copy %t1, %hi : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
  return %r : memref<8xf32>
}

// -----

#v = affine_map<(d0) -> (d0)>

// Kept: the generic reads the buffer it would write (a stencil's in-place update, r[1:5] =
// f(r[0:4])); the target is an argument (it may alias what the generic reads); something
// between the generic and the copy reads the target's buffer; the payload reads its output.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: memref.copy
func.func @kept(%a: memref<4xf32>, %arg: memref<8xf32>) -> (memref<8xf32>, f32) {
  %c0 = arith.constant 0 : index
  %r = memref.alloc() : memref<8xf32>
  %in = memref.subview %r[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %t0 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%in : memref<4xf32, strided<[1]>>) outs(%t0 : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %mid = memref.subview %r[1] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %t0, %mid : memref<4xf32> to memref<4xf32, strided<[1], offset: 1>>
  %t1 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%t1 : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %argv = memref.subview %arg[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %t1, %argv : memref<4xf32> to memref<4xf32, strided<[1]>>
  %s = memref.alloc() : memref<8xf32>
  %t2 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%t2 : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %seen = memref.load %s[%c0] : memref<8xf32>
  %sv = memref.subview %s[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %t2, %sv : memref<4xf32> to memref<4xf32, strided<[1]>>
  %u = memref.alloc() : memref<4xf32>
  %t3 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%t3 : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %o : f32
    linalg.yield %y : f32
  }
  memref.copy %t3, %u : memref<4xf32> to memref<4xf32>
  return %r, %seen : memref<8xf32>, f32
}
