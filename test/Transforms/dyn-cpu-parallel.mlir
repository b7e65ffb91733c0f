// RUN: tensor-opt %s -dyn-cpu-parallel=threads=2 --verify-each | FileCheck %s
// RUN: tensor-opt %s -dyn-cpu-parallel | FileCheck %s --check-prefix=ONE

// ONE-NOT: scf.parallel

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// An elementwise op: two chunks of 256 rows.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[C512:.*]] = arith.constant 512 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[C512]]) step (%{{.*}})
// CHECK: memref.subview %arg0[%[[I]], 0] [256, 1024] [1, 1]
// CHECK: memref.subview %arg1[%[[I]], 0] [256, 1024] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: memref<256x1024xf32, strided<[1024, 1], offset: ?>>
func.func @elementwise(%x: memref<512x1024xf32>, %y: memref<512x1024xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<512x1024xf32>) outs(%y : memref<512x1024xf32>) {
  ^bb0(%a: f32, %b: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  }
  return
}

// Row sums with an odd row count: chunks of 257 and 256 rows, each reducing its own rows.
// CHECK-LABEL: func.func @row_sums
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}})
// CHECK: %[[N:.*]] = affine.min #{{.*}}(%[[I]])
// CHECK: memref.subview %arg0[%[[I]], 0] [%[[N]], 1024] [1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
func.func @row_sums(%x: memref<513x1024xf32>, %y: memref<513xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<513x1024xf32>) outs(%y : memref<513xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// Column sums (rows reduced in the outer loop, as dyn-cpu-loop-order orders them): the chunks
// split the columns, never the reduction.
// CHECK-LABEL: func.func @column_sums
// CHECK: scf.parallel
// CHECK: memref.subview %arg0[0, %{{.*}}] [1024, 256] [1, 1]
// CHECK: memref.subview %arg1[%{{.*}}] [256] [1]
func.func @column_sums(%x: memref<1024x512xf32>, %y: memref<512xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<1024x512xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// Too little work for a parallel region, dynamic sizes, and a reduction of everything (one
// output, no parallel loop) stay as they are.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
func.func @left_alone(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %c: memref<?x4096xf32>,
                      %d: memref<?x4096xf32>, %e: memref<262144xf32>, %f: memref<f32>) {
  linalg.copy ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>)
  linalg.copy ins(%c : memref<?x4096xf32>) outs(%d : memref<?x4096xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%e : memref<262144xf32>) outs(%f : memref<f32>) {
  ^bb0(%a0: f32, %b0: f32):
    %m = arith.addf %a0, %b0 : f32
    linalg.yield %m : f32
  }
  return
}

// 64K iterations: too few for a plain loop, enough for one whose body calls a math function
// (each counts 8 iterations of work): the exp is split, the add stays.
// CHECK-LABEL: func.func @costly_iterations
// CHECK: scf.parallel
// CHECK: math.exp
// CHECK: }
// CHECK-NOT: scf.parallel
// CHECK: arith.addf
// CHECK: return
func.func @costly_iterations(%x: memref<65536xf32>, %y: memref<65536xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<65536xf32>) outs(%y : memref<65536xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<65536xf32>) outs(%y : memref<65536xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}
