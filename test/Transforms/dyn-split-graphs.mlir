// RUN: tensor-opt %S/Inputs/seed_testnet.mlir -dyn-split-graphs --verify-each | FileCheck %s --check-prefix=SPLIT
// RUN: tensor-opt %S/Inputs/seed_testnet.mlir -dyn-split-graphs=capture-control-flow=true --verify-each | FileCheck %s --check-prefix=KEEP
// RUN: tensor-opt %S/Inputs/seed_testnet.mlir -dyn-split-graphs=capture-control-flow=true -dyn-to-linalg --verify-each | FileCheck %s --check-prefix=SCF
// RUN: tensor-opt %S/Inputs/seed_testnet.mlir -dyn-split-graphs=max-device-branch-ops=1 --verify-each | FileCheck %s --check-prefix=KEEP
// RUN: tensor-opt %s -dyn-split-graphs -split-input-file --verify-each | FileCheck %s

// The seed splits into the predicate graph, one graph for each side that computes something
// (sin, cos; the other sides only forward values), the second predicate and the linear tail.
// SPLIT-LABEL: func.func @TestNet_forward
// SPLIT-SAME: (%[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2xf32>) -> tensor<2xf32>
// SPLIT-SAME: dyn.host
// SPLIT: dyn.guard.tensor_match "L['x']", %[[X]]
// SPLIT: %[[G0:.*]]:2 = call @TestNet_forward_graph0(%[[X]]) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<i1>)
// SPLIT: %[[C1:.*]] = dyn.to_bool %[[G0]]#1 : tensor<i1>
// SPLIT: %[[IF1:.*]] = scf.if %[[C1]] -> (tensor<3xf32>) {
// SPLIT:   %[[SIN:.*]] = func.call @TestNet_forward_graph1(%[[G0]]#0)
// SPLIT:   scf.yield %[[SIN]]
// SPLIT: } else {
// SPLIT:   scf.yield %[[G0]]#0
// SPLIT: %[[P2:.*]] = call @TestNet_forward_graph2(%[[IF1]]) : (tensor<3xf32>) -> tensor<i1>
// SPLIT: %[[C2:.*]] = dyn.to_bool %[[P2]]
// SPLIT: %[[IF2:.*]] = scf.if %[[C2]] -> (tensor<3xf32>) {
// SPLIT:   func.call @TestNet_forward_graph3(%[[IF1]])
// SPLIT: %[[Y:.*]] = call @TestNet_forward_graph4(%[[IF2]], %[[W]], %[[B]])
// SPLIT: return %[[Y]] : tensor<2xf32>
// SPLIT-LABEL: func.func private @TestNet_forward_graph0
// SPLIT-SAME: attributes {dyn.graph}
// SPLIT: dyn.constant dense<2.0
// SPLIT: dyn.mul
// SPLIT: dyn.sum
// SPLIT: dyn.gt
// SPLIT-LABEL: func.func private @TestNet_forward_graph1
// SPLIT-NEXT: dyn.sin
// SPLIT-LABEL: func.func private @TestNet_forward_graph2
// SPLIT: dyn.mean
// SPLIT-LABEL: func.func private @TestNet_forward_graph3
// SPLIT-NEXT: dyn.cos
// SPLIT-LABEL: func.func private @TestNet_forward_graph4
// SPLIT-NEXT: dyn.linear
// SPLIT-NOT: func.func

// With the policy set, one graph keeps both ifs on the device.
// KEEP-LABEL: func.func @TestNet_forward
// KEEP-NOT: dyn.to_bool
// KEEP: call @TestNet_forward_graph0
// KEEP-NOT: scf.if
// KEEP: return
// KEEP-LABEL: func.func private @TestNet_forward_graph0
// KEEP-COUNT-2: dyn.if
// KEEP: dyn.linear
// KEEP-NOT: func.func

// SCF-LABEL: func.func private @TestNet_forward_graph0
// SCF-COUNT-2: scf.if
// SCF-NOT: dyn.

// -----

// A graph break stays in the host program and receives the graph's outputs.
// CHECK-LABEL: func.func @breaks
// CHECK: %[[G:.*]] = call @breaks_graph0(%{{.*}}) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: dyn.graph_break side_effect "call to print" at "m.py" : 3 resume [20] (%[[G]] : tensor<3xf32>)
// CHECK-LABEL: func.func private @breaks_graph0
// CHECK: dyn.exp
func.func @breaks(%x: tensor<3xf32>) {
  %0 = dyn.exp %x : tensor<3xf32>
  dyn.graph_break side_effect "call to print" at "m.py" : 3 resume [20] (%0 : tensor<3xf32>)
}

// -----

// Host scalars cut graphs too: dyn.item is a host sync whose value flows into the next graph.
// CHECK-LABEL: func.func @host_scalar
// CHECK: %[[S:.*]] = call @host_scalar_graph0
// CHECK: %[[V:.*]] = dyn.item %[[S]] : tensor<f32>
// CHECK: %[[R:.*]]:2 = call @host_scalar_graph1(%{{.*}}) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>)
// CHECK: return %[[R]]#0, %[[V]], %[[R]]#1
// CHECK-LABEL: func.func private @host_scalar_graph0
// CHECK-LABEL: func.func private @host_scalar_graph1
func.func @host_scalar(%x: tensor<3xf32>) -> (tensor<3xf32>, f32, tensor<f32>) {
  %s = dyn.sum %x dims [0] : tensor<3xf32>
  %v = dyn.item %s : tensor<f32>
  %y = dyn.exp %x : tensor<3xf32>
  %m = dyn.max %y dims [0] : tensor<3xf32>
  return %y, %v, %m : tensor<3xf32>, f32, tensor<f32>
}

// -----

// A function without data-dependent control flow is one graph; nested ifs split recursively.
// CHECK-LABEL: func.func @nested
// CHECK: scf.if
// CHECK:   call @nested_graph1
// CHECK:   dyn.to_bool
// CHECK:   scf.if
// CHECK:     call @nested_graph2
func.func @nested(%x: tensor<3xf32>, %p: tensor<i1>, %q: tensor<i1>) -> tensor<3xf32> {
  %a = dyn.exp %x : tensor<3xf32>
  %r = dyn.if %p : tensor<i1> -> tensor<3xf32> {
    %b = dyn.sin %a : tensor<3xf32>
    %inner = dyn.if %q : tensor<i1> -> tensor<3xf32> {
      %c = dyn.cos %b : tensor<3xf32>
      dyn.yield %c : tensor<3xf32>
    } else {
      dyn.yield %b : tensor<3xf32>
    }
    dyn.yield %inner : tensor<3xf32>
  } else {
    dyn.yield %a : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

// A branch of 0-d values alone (Python numbers: `total += v` under `if v > 0:`) stays in its
// graph: no host sync. One that yields an array is a host branch.
// CHECK-LABEL: func.func @scalar_branch
// CHECK-NOT: dyn.to_bool
// CHECK: %[[G:.*]]:2 = call @scalar_branch_graph0
// CHECK-NEXT: %[[P:.*]] = dyn.to_bool %[[G]]#0
// CHECK-NEXT: scf.if %[[P]]
// CHECK: return %[[G]]#1
// CHECK-LABEL: func.func private @scalar_branch_graph0
// CHECK: dyn.if %{{.*}} : tensor<i1> -> tensor<f64>
// CHECK: dyn.add %{{.*}} : tensor<f64>, tensor<f64>
func.func @scalar_branch(%x: tensor<3xf32>, %v: tensor<f64>, %total: tensor<f64>) -> (tensor<f64>, tensor<3xf32>) {
  %zero = dyn.constant dense<0.0> : tensor<f64>
  %p = dyn.gt %v, %zero : tensor<f64>, tensor<f64>
  %t = dyn.if %p : tensor<i1> -> tensor<f64> {
    %s = dyn.add %total, %v : tensor<f64>, tensor<f64>
    dyn.yield %s : tensor<f64>
  } else {
    dyn.yield %total : tensor<f64>
  }
  %r = dyn.if %p : tensor<i1> -> tensor<3xf32> {
    %e = dyn.exp %x : tensor<3xf32>
    dyn.yield %e : tensor<3xf32>
  } else {
    dyn.yield %x : tensor<3xf32>
  }
  return %t, %r : tensor<f64>, tensor<3xf32>
}

// -----

// A check reads its condition on the host, after the graph that computes it.
// CHECK-LABEL: func.func @checked_gather
// CHECK: %[[G:.*]]:2 = call @checked_gather_graph0
// CHECK: dyn.check %[[G]]#{{.*}}, "out of bounds" : tensor<i1>
// CHECK: return
func.func @checked_gather(%x: tensor<4xf32>, %i: tensor<2xi64>) -> tensor<2xf32> {
  %r = dyn.gather %x[%i] axis 0 : tensor<4xf32>, tensor<2xi64>
  %lo = dyn.min %i dims [0] : tensor<2xi64>
  %zero = dyn.constant dense<0> : tensor<i64>
  %ok = dyn.ge %lo, %zero : tensor<i64>, tensor<i64>
  dyn.check %ok, "out of bounds" : tensor<i1>
  return %r : tensor<2xf32>
}

// -----

// A side's value the tracer marked as an array the trace made is never handed out as the
// caller's array or as another live value: a fold left `np.where(p, x, x)` (traced) and
// `a * 1` (made by the side, fresh) as values from outside the side, and the side's graph
// copies them. The other side hands out the caller's x itself (unmarked) and a new array.
// CHECK-LABEL: func.func @folded_yields
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %{{.*}}: tensor<i1>, %[[A:.*]]: tensor<3xf32>)
// CHECK: scf.if
// CHECK:   %[[T:.*]]:2 = func.call @folded_yields_graph{{[0-9]+}}(%[[X]], %[[A]])
// CHECK:   scf.yield %[[T]]#0, %[[T]]#1
// CHECK: else
// CHECK:   %[[E:.*]] = func.call @folded_yields_graph{{[0-9]+}}(%[[A]])
// CHECK:   scf.yield %[[X]], %[[E]]
// CHECK: func.func private @folded_yields_graph{{[0-9]+}}
// CHECK-COUNT-2: dyn.cast %{{.*}} to f32 {copy}
func.func @folded_yields(%x: tensor<3xf32>, %p: tensor<i1>, %a: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %r:2 = dyn.if %p : tensor<i1> -> tensor<3xf32>, tensor<3xf32> {
    dyn.yield {fresh = array<i64: 1>, traced = array<i64: 0>} %x, %a : tensor<3xf32>, tensor<3xf32>
  } else {
    %s = dyn.sin %a : tensor<3xf32>
    dyn.yield {fresh = array<i64: 1>} %x, %s : tensor<3xf32>, tensor<3xf32>
  }
  return %r#0, %r#1 : tensor<3xf32>, tensor<3xf32>
}
