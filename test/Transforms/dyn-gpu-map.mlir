// RUN: tensor-opt %s -pass-pipeline='builtin.module(func.func(dyn-gpu-map),canonicalize,cse)' --verify-each -split-input-file | FileCheck %s

// Elementwise with a row bias: 16 bytes per thread, both operands read with aligned vector
// loads (the bias along its row), the output written with one aligned vector store.
// CHECK-LABEL: func.func @scale_bias
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C8]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[C256]],
// CHECK: scf.if
// CHECK: %[[X:.*]] = vector.load %arg0[%[[ROW:.*]], %[[COL:.*]]] {alignment = 16 : i64} : memref<64x128xf32>, vector<4xf32>
// CHECK: %[[B:.*]] = vector.load %arg1[%[[COL]]] {alignment = 16 : i64} : memref<128xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.addf
// CHECK: %[[V:.*]] = vector.from_elements
// CHECK: vector.store %[[V]], %arg2[%[[ROW]], %[[COL]]] {alignment = 16 : i64}
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @scale_bias(%x: memref<64x128xf32>, %b: memref<128xf32>, %out: memref<64x128xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<64x128xf32>, memref<128xf32>) outs(%out : memref<64x128xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    %s = arith.addf %m, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Row maximum: one block per row, each thread strides the row 16 bytes at a time, then an
// all-reduce; the fill of the start value is folded in and host buffers move to the device.
// CHECK-LABEL: func.func @row_max
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C1024:.*]] = arith.constant 1024 : index
// CHECK: %[[TMP:.*]] = gpu.alloc () : memref<64xf32>
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch blocks(%[[ROW:[^,]*]], {{.*}}) in (%{{.*}} = %[[C64]], {{.*}}) threads(%[[TID:[^,]*]],
// CHECK: %[[PART:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C1024]] iter_args(%[[ACC:.*]] = %[[NINF]]) -> (f32)
// CHECK: vector.load %arg0[%[[ROW]], %[[J]]] {alignment = 16 : i64} : memref<64x128xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.maximumf
// CHECK: %[[TOTAL:.*]] = gpu.all_reduce maximumf %[[PART]] uniform
// CHECK: memref.store %[[TOTAL]], %[[TMP]][%[[ROW]]]
// CHECK: gpu.memcpy %arg1, %[[TMP]]
// CHECK: gpu.dealloc %[[TMP]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: memref<64x128xf32>, %out: memref<64xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %tmp = memref.alloc() : memref<64xf32>
  linalg.fill ins(%ninf : f32) outs(%tmp : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x128xf32>) outs(%tmp : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  memref.copy %tmp, %out : memref<64xf32> to memref<64xf32>
  memref.dealloc %tmp : memref<64xf32>
  return
}

// -----

// A row maximum of 16-bit integers (uint16 here) is no warp all-reduce, whose shuffles move
// 32-bit values: the generic is left to the parallel-loop mapping (a thread per row).
// CHECK-LABEL: func.func @row_max_narrow
// CHECK-NOT: gpu.all_reduce
// CHECK: arith.maxui
#id16 = affine_map<(d0, d1) -> (d0, d1)>
#row16 = affine_map<(d0, d1) -> (d0)>
func.func @row_max_narrow(%x: memref<64x128xi16>, %out: memref<64xi16>) {
  %zero = arith.constant 0 : i16
  linalg.fill ins(%zero : i16) outs(%out : memref<64xi16>)
  linalg.generic {indexing_maps = [#id16, #row16], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x128xi16>) outs(%out : memref<64xi16>) {
  ^bb0(%a: i16, %o: i16):
    %m = arith.maxui %a, %o : i16
    linalg.yield %m : i16
  }
  return
}

// -----

// Softmax's sum: the row maximum is read once per row; the sum keeps its output's start value.
// CHECK-LABEL: func.func @sum_exp
// CHECK: gpu.launch
// CHECK: %[[MAX:.*]] = memref.load %arg1[%{{.*}}, %{{.*}}] : memref<16x1xf32>
// CHECK: scf.for
// CHECK: arith.subf %{{.*}}, %[[MAX]]
// CHECK: gpu.all_reduce add
// CHECK: %[[INIT:.*]] = memref.load %arg2
// CHECK: arith.addf %{{.*}}, %[[INIT]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @sum_exp(%x: memref<16x256xf32>, %max: memref<16x1xf32>, %sum: memref<16x1xf32>) {
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, 0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<16x256xf32>, memref<16x1xf32>) outs(%sum : memref<16x1xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row of 5 floats is not a multiple of 16 bytes: one element per thread, scalar accesses.
// CHECK-LABEL: func.func @odd
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : index
// CHECK: gpu.launch
// CHECK: arith.cmpi ult, %{{.*}}, %[[C15]]
// CHECK-NOT: vector.
// CHECK: memref.load %arg0
// CHECK: arith.negf
// CHECK: memref.store
// CHECK-NOT: linalg.generic
func.func @odd(%x: memref<3x5xf32>, %out: memref<3x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x5xf32>) outs(%out : memref<3x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// An `if` kept in the graph: the predicate is computed by a one-thread kernel into device
// memory, and the host reads it through a host copy after the stream is drained.
// CHECK-LABEL: func.func @predicate
// CHECK: %[[PRED:.*]] = gpu.alloc () : memref<i1>
// CHECK: gpu.launch
// CHECK: arith.cmpf ogt
// CHECK: memref.store %{{.*}}, %[[PRED]][] : memref<i1>
// CHECK: gpu.terminator
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<i1>
// CHECK-NEXT: gpu.memcpy %[[HOST]], %[[PRED]]
// CHECK: %[[P:.*]] = memref.load %[[HOST]][] : memref<i1>
// CHECK-NEXT: scf.if %[[P]]
func.func @predicate(%sum: memref<f32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %pred = memref.alloc() : memref<i1>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sum : memref<f32>) outs(%pred : memref<i1>) {
  ^bb0(%s: f32, %o: i1):
    %gt = arith.cmpf ogt, %s, %zero : f32
    linalg.yield %gt : i1
  }
  %p = memref.load %pred[] : memref<i1>
  scf.if %p {
    memref.copy %sum, %out : memref<f32> to memref<f32>
  }
  memref.dealloc %pred : memref<i1>
  return
}

// -----

// Softmax after bufferization (fill, max, fill, sum of exp(x - max), normalize): one kernel.
// Each thread loads its 16 bytes of the row once and keeps them; the two row statistics are
// all-reduces whose results every thread uses, and thread 0 also stores them.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-NOT: linalg.
// CHECK: gpu.launch
// CHECK-COUNT-1: vector.load %arg0
// CHECK-NOT: vector.load
// CHECK: %[[MAX:.*]] = gpu.all_reduce maximumf
// CHECK: arith.subf %{{.*}}, %[[MAX]]
// CHECK: %[[TOTAL:.*]] = gpu.all_reduce add
// CHECK: %[[SUM:.*]] = arith.addf %[[TOTAL]], %{{.*}}
// CHECK: arith.divf %{{.*}}, %[[SUM]]
// CHECK: vector.store %{{.*}}, %arg1
// CHECK-NOT: gpu.launch
#id = affine_map<(d0, d1) -> (d0, d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
func.func @softmax_rows(%x: memref<16x1024xf32>, %out: memref<16x1024xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<16x1xf32>
  %sum = memref.alloc() : memref<16x1xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<16x1xf32>)
  linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x1024xf32>) outs(%max : memref<16x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<16x1xf32>)
  linalg.generic {indexing_maps = [#id, #keep, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<16x1024xf32>, memref<16x1xf32>) outs(%sum : memref<16x1xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #keep, #keep, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max, %sum : memref<16x1024xf32>, memref<16x1xf32>, memref<16x1xf32>)
      outs(%out : memref<16x1024xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %s : f32
    linalg.yield %r : f32
  }
  memref.dealloc %max : memref<16x1xf32>
  memref.dealloc %sum : memref<16x1xf32>
  return
}

// -----

// A loop nest of scalar loads and stores (a bufferized dyn.scatter, whose updates must happen
// in order) runs in one GPU thread: host code must not write device memory.
// CHECK-LABEL: func.func @scatter_loops
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:.*]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       memref.load %{{.*}} : memref<3xi64>
// CHECK:       memref.store %{{.*}}, %{{.*}} : memref<4x10xf32>
// CHECK:   gpu.terminator
func.func @scatter_loops(%v: memref<4x3xf32>, %x: memref<4x10xf32>, %i: memref<3xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.for %j = %c0 to %c3 step %c1 {
    scf.for %k = %c0 to %c4 step %c1 {
      %raw = memref.load %i[%j] : memref<3xi64>
      %at = arith.index_cast %raw : i64 to index
      %e = memref.load %v[%k, %j] : memref<4x3xf32>
      memref.store %e, %x[%k, %at] : memref<4x10xf32>
    }
  }
  return
}

// -----

// A gather of indices as many as only the graph knows is left to the parallel-loop path: the
// load in its body reads device memory in that op's kernel, with no host copy.
// CHECK-LABEL: func.func @gather_of_a_dynamic_count
// CHECK-NOT: gpu.memcpy
// CHECK: linalg.generic
// CHECK: memref.load %arg0
func.func @gather_of_a_dynamic_count(%x: memref<4x6xf32>, %i: memref<?xi64>, %out: memref<?x6xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%i : memref<?xi64>) outs(%out : memref<?x6xf32>) {
  ^bb0(%idx: i64, %o: f32):
    %r = arith.index_cast %idx : i64 to index
    %c = linalg.index 1 : index
    %v = memref.load %x[%r, %c] : memref<4x6xf32>
    linalg.yield %v : f32
  }
  return
}
