// RUN: tensor-opt %s -convert-dyn-to-linalg --verify-each | FileCheck %s
// RUN: tensor-opt %s -convert-dyn-to-linalg="parallel-indexing" --verify-each | FileCheck %s --check-prefix=PAR

// x[mask]: the operands flattened in row-major order, one loop counting the selected
// elements (the result's size), one copying each to the position the count has reached.
// CHECK-LABEL: func.func @compress
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[M:.*]]: tensor<2x3xi1>)
func.func @compress(%x: tensor<2x3xf32>, %m: tensor<2x3xi1>) -> tensor<?xf32> {
  // CHECK-DAG: %[[FX:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  // CHECK-DAG: %[[FM:.*]] = tensor.collapse_shape %[[M]] {{\[}}[0, 1]] : tensor<2x3xi1> into tensor<6xi1>
  // CHECK: %[[COUNT:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %{{.*}}) -> (index) {
  // CHECK: arith.index_castui %{{.*}} : i1 to index
  // CHECK: %[[OUT:.*]] = tensor.empty(%[[COUNT]]) : tensor<?xf32>
  // CHECK: %[[FILL:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[P:.*]] = %{{.*}}, %[[R:.*]] = %[[OUT]]) -> (index, tensor<?xf32>) {
  // CHECK: scf.if %{{.*}} -> (index, tensor<?xf32>) {
  // CHECK: %[[V:.*]] = tensor.extract %[[FX]][%[[I]]] : tensor<6xf32>
  // CHECK: tensor.insert %[[V]] into %[[R]][%[[P]]] : tensor<?xf32>
  // CHECK: return %[[FILL]]#1 : tensor<?xf32>
  %0 = dyn.compress %x, %m : tensor<2x3xf32>, tensor<2x3xi1>
  return %0 : tensor<?xf32>
}

// A mask of the leading dimension: x as rows [2, 12], each selected row copied element by
// element into the row the count has reached, the rows' own dimensions expanded again.
// CHECK-LABEL: func.func @compress_rows
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[M:.*]]: tensor<2xi1>)
func.func @compress_rows(%x: tensor<2x3x4xf32>, %m: tensor<2xi1>) -> tensor<?x3x4xf32> {
  // CHECK: %[[FX:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
  // CHECK: %[[COUNT:.*]] = scf.for
  // CHECK: %[[OUT:.*]] = tensor.empty(%[[COUNT]]) : tensor<?x12xf32>
  // CHECK: %[[FILL:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[P:.*]] = %{{.*}}, %[[R:.*]] = %[[OUT]]) -> (index, tensor<?x12xf32>) {
  // CHECK: scf.if %{{.*}} -> (index, tensor<?x12xf32>) {
  // CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:.*]] = %[[R]]) -> (tensor<?x12xf32>) {
  // CHECK: %[[V:.*]] = tensor.extract %[[FX]][%[[I]], %[[J]]] : tensor<2x12xf32>
  // CHECK: tensor.insert %[[V]] into %[[S]][%[[P]], %[[J]]] : tensor<?x12xf32>
  // CHECK: %[[E:.*]] = tensor.expand_shape %[[FILL]]#1 {{\[}}[0], [1, 2]] output_shape [%[[COUNT]], 3, 4] : tensor<?x12xf32> into tensor<?x3x4xf32>
  // CHECK: return %[[E]] : tensor<?x3x4xf32>
  %0 = dyn.compress %x, %m : tensor<2x3x4xf32>, tensor<2xi1>
  return %0 : tensor<?x3x4xf32>
}

// With parallel-indexing (GPU graphs): the mask's running count by three log-step generics
// (steps 1, 2 and 4 for 6 elements), its total by a reduction, each result element's source by
// a binary search in the running count (halving steps 4, 2, 1), then a gather. No loops.
// PAR-LABEL: func.func @compress
// PAR-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[M:.*]]: tensor<2x3xi1>)
// PAR-NOT: scf.for
// PAR-DAG: %[[FX:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// PAR-DAG: %[[FM:.*]] = tensor.collapse_shape %[[M]] {{\[}}[0, 1]] : tensor<2x3xi1> into tensor<6xi1>
// PAR: %[[C0:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6xi32>)
// PAR: tensor.extract %[[FM]]
// PAR: %[[C1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6xi32>)
// PAR: tensor.extract %[[C0]]
// PAR: %[[C2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6xi32>)
// PAR: tensor.extract %[[C1]]
// PAR: %[[C4:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6xi32>)
// PAR: tensor.extract %[[C2]]
// PAR: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[FM]] : tensor<6xi1>) outs(%{{.*}} : tensor<i32>)
// PAR: %[[TOTAL:.*]] = tensor.extract %[[SUM]][] : tensor<i32>
// PAR: %[[N:.*]] = arith.index_castui %[[TOTAL]] : i32 to index
// PAR: %[[SRC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?xi32>)
// PAR-COUNT-3: tensor.extract %[[C4]]
// PAR: linalg.generic {{.*}} ins(%[[SRC]] : tensor<?xi32>) outs(%{{.*}} : tensor<?xf32>)
// PAR: tensor.extract %[[FX]]
// PAR-NOT: scf.for
// PAR-LABEL: func.func @compress_rows
