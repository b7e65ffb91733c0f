// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each -split-input-file | FileCheck %s
// RUN: tensor-opt %s -convert-dyn-to-linalg="parallel-indexing" --verify-each -split-input-file | FileCheck %s --check-prefix=PAR

// CHECK-LABEL: func.func @reshape_static
// CHECK: %[[S:.*]] = tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xindex>
// CHECK: tensor.reshape %{{.*}}(%[[S]]) : (tensor<2x6xf32>, tensor<2xindex>) -> tensor<3x4xf32>
func.func @reshape_static(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %0 = dyn.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// A static reshape that groups dimensions is a collapse_shape.
// CHECK-LABEL: func.func @reshape_collapse
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x6xf32> into tensor<12xf32>
func.func @reshape_collapse(%x: tensor<2x6xf32>) -> tensor<12xf32> {
  %0 = dyn.reshape %x : tensor<2x6xf32> -> tensor<12xf32>
  return %0 : tensor<12xf32>
}

// -----

// A single inferred dimension is the element count over the known sizes.
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK: arith.divui
// CHECK: tensor.reshape
func.func @reshape_dynamic(%x: tensor<?x6xf32>) -> tensor<?x2xf32> {
  %0 = dyn.reshape %x : tensor<?x6xf32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// expand_dims and squeeze are views (expand_shape, collapse_shape) that keep the input's
// dynamic sizes: bufferized, tensor.reshape copies a strided buffer (a window of a row in a
// loop) where these do not.
// CHECK-LABEL: func.func @expand_squeeze
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [1, %[[D]], 3] : tensor<?x3xf32> into tensor<1x?x3xf32>
// CHECK: tensor.collapse_shape %[[E]] {{\[\[}}0, 1], [2]] : tensor<1x?x3xf32> into tensor<?x3xf32>
// CHECK-NOT: tensor.reshape
func.func @expand_squeeze(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = dyn.expand_dims %x dim 0 : tensor<?x3xf32>
  %1 = dyn.squeeze %0 dims [0] : tensor<1x?x3xf32>
  return %1 : tensor<?x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x4xf32>) outs(%[[E]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = dyn.transpose %x perm [2, 0, 1] : tensor<2x3x4xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// Each input is inserted at its offset into an empty tensor, which bufferization's empty-tensor
// elimination lets the inputs' producers write into directly. An input without elements is
// left out.
// CHECK-LABEL: func.func @concat
// CHECK: %[[E:.*]] = tensor.empty() : tensor<6x3xf32>
// CHECK: %[[A:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK: tensor.insert_slice %arg1 into %[[A]][2, 0] [4, 3] [1, 1]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<6x3xf32> {
  %0 = dyn.concat %a, %b dim 0 : tensor<2x3xf32>, tensor<4x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat_dynamic
// CHECK: %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x3xf32>
// CHECK: %[[N:.*]] = arith.addi %[[D]], %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK: %[[A:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [%[[D]], 3] [1, 1]
// CHECK-NOT: %arg1
// CHECK: tensor.insert_slice %arg2 into %[[A]][%[[D]], 0] [2, 3] [1, 1]
func.func @concat_dynamic(%a: tensor<?x3xf32>, %b: tensor<0x3xf32>, %c: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %0 = dyn.concat %a, %b, %c dim 0 : tensor<?x3xf32>, tensor<0x3xf32>, tensor<2x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Strided slices read start + step * i, negative steps included (x[3::-1, 1::2]).
// CHECK-DAG: #[[SLICE:.*]] = affine_map<(d0, d1) -> (-d0 + 3, d1 * 2 + 1)>
// CHECK-LABEL: func.func @slice
// CHECK: linalg.generic {indexing_maps = [#[[SLICE]], #{{.*}}]
func.func @slice(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0 = dyn.slice %x starts [3, 1] stops [-1, 8] steps [-1, 2] : tensor<4x8xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Positive steps: one tensor.extract_slice (x[1:4:2, :2]).
// CHECK-LABEL: func.func @slice_positive
// CHECK: tensor.extract_slice %{{.*}}[1, 0] [2, 2] [2, 1] : tensor<4x8xf32> to tensor<2x2xf32>
func.func @slice_positive(%x: tensor<4x8xf32>) -> tensor<2x2xf32> {
  %0 = dyn.slice %x starts [1, 0] stops [4, 2] steps [2, 1] : tensor<4x8xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Empty slices read nothing: at the end of a dimension (x[:, 8:]), of an empty dimension, and
// reversed ones, whose normal form starts at -1 (y[-3::-1] of two elements), which a generic
// would read through a negative index map (difftest 292300019:30): filled empty tensors.
// CHECK-LABEL: func.func @slice_empty
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: linalg.generic
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4x0xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4x0xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<0x2xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<0x2xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<0x3xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<0x3xf32>)
func.func @slice_empty(%x: tensor<4x8xf32>, %y: tensor<0x3xf32>, %z: tensor<2x3xf32>)
    -> (tensor<4x0xf32>, tensor<0x2xf32>, tensor<0x3xf32>) {
  %0 = dyn.slice %x starts [0, 8] stops [4, 8] steps [1, 1] : tensor<4x8xf32>
  %1 = dyn.slice %y starts [0, 1] stops [0, 3] steps [1, 1] : tensor<0x3xf32>
  %2 = dyn.slice %z starts [-1, 0] stops [-1, 3] steps [-1, 1] : tensor<2x3xf32>
  return %0, %1, %2 : tensor<4x0xf32>, tensor<0x2xf32>, tensor<0x3xf32>
}

// -----

// A store through basic indexing (x[1:4:2, :2] = v): one tensor.insert_slice.
// CHECK-LABEL: func.func @insert_slice
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[1, 0] [2, 2] [2, 1] : tensor<2x2xf32> into tensor<4x8xf32>
func.func @insert_slice(%x: tensor<4x8xf32>, %v: tensor<2x2xf32>) -> tensor<4x8xf32> {
  %0 = dyn.insert_slice %v into %x starts [1, 0] stops [4, 2] steps [2, 1] : tensor<2x2xf32> into tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The conversion folds first: constant fills are splat constants; an arange too big to fold
// (over 4096 elements) is a generic over linalg.index.
// CHECK-LABEL: func.func @generators
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: arith.constant dense<5> : tensor<2x2xi64>
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.fptosi %{{.*}} : f64 to i32
func.func @generators() -> (tensor<2xf32>, tensor<2x2xi64>, tensor<5000xi32>) {
  %0 = dyn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = dyn.full 5 : i64 : tensor<2x2xi64>
  %2 = dyn.arange 0.0, 2.0 : tensor<5000xi32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2x2xi64>, tensor<5000xi32>
}

// -----

// The host boundary reads the element; a kept dyn.if becomes scf.if on it.
// CHECK-LABEL: func.func @host_and_if
// CHECK: %[[V:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: %[[P:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: scf.if %[[P]] -> (tensor<3xf32>) {
// CHECK:   math.sin
// CHECK:   scf.yield
// CHECK: } else {
// CHECK:   scf.yield
// CHECK: dyn.guard.tensor_match
func.func @host_and_if(%s: tensor<f32>, %p: tensor<i1>, %x: tensor<3xf32>) -> (f32, tensor<3xf32>) {
  %v = dyn.item %s : tensor<f32>
  %r = dyn.if %p : tensor<i1> -> tensor<3xf32> {
    %y = dyn.sin %x : tensor<3xf32>
    dyn.yield %y : tensor<3xf32>
  } else {
    dyn.yield %x : tensor<3xf32>
  }
  dyn.guard.tensor_match "L['x']", %x type "numpy.ndarray" : tensor<3xf32>
  return %v, %r : f32, tensor<3xf32>
}

// -----

// gather: one generic over the result; the indices come through a map, x through
// tensor.extract at the index wrapped (negative from the end) and clamped into the dimension.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<2x3xi64>)
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<2x3xi64>) outs(%{{.*}} : tensor<10x2x3xf32>)
// CHECK: ^bb0(%[[IDX:.*]]: i64, %{{.*}}: f32):
// CHECK:   %[[R:.*]] = linalg.index 0 : index
// CHECK:   arith.cmpi slt, %[[IDX]]
// CHECK:   arith.select
// CHECK:   arith.minsi
// CHECK:   arith.maxsi
// CHECK:   %[[C:.*]] = arith.index_cast
// CHECK:   tensor.extract %[[X]][%[[R]], %[[C]]] : tensor<10x4xf32>
func.func @gather(%x: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<10x2x3xf32> {
  %r = dyn.gather %x[%i] axis 1 : tensor<10x4xf32>, tensor<2x3xi64>
  return %r : tensor<10x2x3xf32>
}

// -----

// scatter: a loop nest over the indices (outermost, in order) and the other dimensions that
// carries the destination; each update element is extracted and inserted at the index
// wrapped and clamped as gather's. With `accumulate` the old element is added first.
// CHECK-LABEL: func.func @scatter
// CHECK-SAME: (%[[V:.*]]: tensor<4x3xf32>, %[[X:.*]]: tensor<4x10xf32>, %[[I:.*]]: tensor<3xi64>)
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[C3]] {{.*}} iter_args(%[[A:.*]] = %[[X]])
// CHECK:   scf.for %[[K:.*]] = %{{.*}} to %[[C4]] {{.*}} iter_args(%[[B:.*]] = %[[A]])
// CHECK:     %[[IDX:.*]] = tensor.extract %[[I]][%[[J]]] : tensor<3xi64>
// CHECK:     arith.minsi
// CHECK:     %[[AT:.*]] = arith.index_cast
// CHECK:     %[[E:.*]] = tensor.extract %[[V]][%[[K]], %[[J]]] : tensor<4x3xf32>
// CHECK-NOT: arith.addf
// CHECK:     tensor.insert %[[E]] into %[[B]][%[[K]], %[[AT]]] : tensor<4x10xf32>
// With parallel-indexing (GPU graphs) the loops swap: a forall over the other dimension, each
// iteration running over the indices in order on its own row of the destination.
// PAR-LABEL: func.func @scatter
// PAR-SAME: (%[[V:.*]]: tensor<4x3xf32>, %[[X:.*]]: tensor<4x10xf32>, %[[I:.*]]: tensor<3xi64>)
// PAR: %[[ALL:.*]] = scf.forall (%[[K:.*]]) in (4) shared_outs(%[[O:.*]] = %[[X]]) -> (tensor<4x10xf32>) {
// PAR:   %[[ROW:.*]] = tensor.extract_slice %[[O]][%[[K]], 0] [1, 10] [1, 1] : tensor<4x10xf32> to tensor<10xf32>
// PAR:   %[[NEW:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} {{.*}} iter_args(%[[B:.*]] = %[[ROW]]) -> (tensor<10xf32>) {
// PAR:     tensor.extract %[[I]][%[[J]]] : tensor<3xi64>
// PAR:     %[[AT:.*]] = arith.index_cast
// PAR:     %[[E:.*]] = tensor.extract %[[V]][%[[K]], %[[J]]] : tensor<4x3xf32>
// PAR:     tensor.insert %[[E]] into %[[B]][%[[AT]]] : tensor<10xf32>
// PAR:   scf.forall.in_parallel {
// PAR:     tensor.parallel_insert_slice %[[NEW]] into %[[O]][%[[K]], 0] [1, 10] [1, 1] : tensor<10xf32> into tensor<4x10xf32>
// PAR: return %[[ALL]]
func.func @scatter(%v: tensor<4x3xf32>, %x: tensor<4x10xf32>, %i: tensor<3xi64>) -> tensor<4x10xf32> {
  %r = dyn.scatter %v into %x[%i] axis 1 : tensor<4x3xf32> into tensor<4x10xf32>, tensor<3xi64>
  return %r : tensor<4x10xf32>
}

// -----

// Indices as many as only the graph knows (np.nonzero's): the outer loop runs to their count.
// CHECK-LABEL: func.func @scatter_dynamic_count
// CHECK-SAME: (%[[V:.*]]: tensor<?x6xf32>, %[[X:.*]]: tensor<4x6xf32>, %[[I:.*]]: tensor<?xi64>)
// CHECK: %[[N:.*]] = tensor.dim %[[I]], %{{.*}} : tensor<?xi64>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK:   tensor.extract %[[V]]
// CHECK:   tensor.insert %{{.*}} : tensor<4x6xf32>
func.func @scatter_dynamic_count(%v: tensor<?x6xf32>, %x: tensor<4x6xf32>, %i: tensor<?xi64>) -> tensor<4x6xf32> {
  %r = dyn.scatter %v into %x[%i] axis 0 : tensor<?x6xf32> into tensor<4x6xf32>, tensor<?xi64>
  return %r : tensor<4x6xf32>
}

// -----

// A destination of one dimension has no other to run in parallel over: the loop stays.
// CHECK-LABEL: func.func @scatter_accumulate
// PAR-LABEL: func.func @scatter_accumulate
// PAR-NOT: scf.forall
// PAR: scf.for
// CHECK: scf.for
// CHECK:   %[[E:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<3xi32>
// CHECK:   %[[OLD:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<10xi32>
// CHECK:   %[[SUM:.*]] = arith.addi %[[OLD]], %[[E]] : i32
// CHECK:   tensor.insert %[[SUM]]
func.func @scatter_accumulate(%v: tensor<3xi32>, %x: tensor<10xi32>, %i: tensor<3xi64>) -> tensor<10xi32> {
  %r = dyn.scatter %v into %x[%i] axis 0 accumulate : tensor<3xi32> into tensor<10xi32>, tensor<3xi64>
  return %r : tensor<10xi32>
}

// -----

// A concatenation without elements is a filled empty tensor: insert_slices at offsets past an
// empty dimension fail to verify once bufferized.
// CHECK-LABEL: func.func @concat_empty
// CHECK-NOT: tensor.concat
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x0x2xi64>
// CHECK: linalg.fill ins(%{{.*}} : i64) outs(%[[E]] : tensor<2x0x2xi64>)
func.func @concat_empty(%x: tensor<1x0x2xi64>) -> tensor<2x0x2xi64> {
  %r = dyn.concat %x, %x dim 0 : tensor<1x0x2xi64>, tensor<1x0x2xi64>
  return %r : tensor<2x0x2xi64>
}
