// RUN: tensor-opt %s | tensor-opt | FileCheck %s
// RUN: tensor-opt %s --mlir-print-op-generic | tensor-opt | FileCheck %s
// RUN: tensor-opt %s --verify-roundtrip

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>, %[[I:.*]]: tensor<3xi32>, %[[B:.*]]: tensor<3xi1>)
func.func @unary(%x: tensor<4x?xf32>, %i: tensor<3xi32>, %b: tensor<3xi1>) {
  // CHECK: dyn.neg %[[X]] : tensor<4x?xf32>
  %0 = dyn.neg %x : tensor<4x?xf32>
  // CHECK: dyn.abs %[[I]] : tensor<3xi32>
  %1 = dyn.abs %i : tensor<3xi32>
  // CHECK: dyn.exp %[[X]]
  %2 = dyn.exp %x : tensor<4x?xf32>
  // CHECK: dyn.log %[[X]]
  %3 = dyn.log %x : tensor<4x?xf32>
  // CHECK: dyn.sqrt %[[X]]
  %4 = dyn.sqrt %x : tensor<4x?xf32>
  // CHECK: dyn.rsqrt %[[X]]
  %5 = dyn.rsqrt %x : tensor<4x?xf32>
  // CHECK: dyn.sin %[[X]]
  %6 = dyn.sin %x : tensor<4x?xf32>
  // CHECK: dyn.cos %[[X]]
  %7 = dyn.cos %x : tensor<4x?xf32>
  // CHECK: dyn.tan %[[X]]
  %8 = dyn.tan %x : tensor<4x?xf32>
  // CHECK: dyn.tanh %[[X]]
  %9 = dyn.tanh %x : tensor<4x?xf32>
  // CHECK: dyn.sigmoid %[[X]]
  %10 = dyn.sigmoid %x : tensor<4x?xf32>
  // CHECK: dyn.relu %[[X]]
  %11 = dyn.relu %x : tensor<4x?xf32>
  // CHECK: dyn.erf %[[X]]
  %12 = dyn.erf %x : tensor<4x?xf32>
  // CHECK: dyn.floor %[[X]]
  %13 = dyn.floor %x : tensor<4x?xf32>
  // CHECK: dyn.ceil %[[X]]
  %14 = dyn.ceil %x : tensor<4x?xf32>
  // CHECK: dyn.not %[[B]] : tensor<3xi1>
  %15 = dyn.not %b : tensor<3xi1>
  // CHECK: dyn.trunc %[[X]] : tensor<4x?xf32>
  %16 = dyn.trunc %x : tensor<4x?xf32>
  // CHECK: dyn.exp2 %[[X]]
  %17 = dyn.exp2 %x : tensor<4x?xf32>
  // CHECK: dyn.log2 %[[X]]
  %18 = dyn.log2 %x : tensor<4x?xf32>
  // CHECK: dyn.log10 %[[X]]
  %19 = dyn.log10 %x : tensor<4x?xf32>
  // CHECK: dyn.log1p %[[X]]
  %20 = dyn.log1p %x : tensor<4x?xf32>
  // CHECK: dyn.expm1 %[[X]]
  %21 = dyn.expm1 %x : tensor<4x?xf32>
  return
}

// CHECK-LABEL: func.func @fmod_fma
func.func @fmod_fma(%a: tensor<4x1xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi64>, %j: tensor<i64>)
    -> (tensor<2x3xi64>, tensor<4x3xf32>) {
  // CHECK: dyn.fmod {{.*}} : tensor<2x3xi64>, tensor<i64>
  %0 = dyn.fmod %i, %j : tensor<2x3xi64>, tensor<i64>
  // CHECK: %[[F:.*]] = dyn.fma {{.*}} : tensor<4x1xf32>, tensor<3xf32>, tensor<4x1xf32>
  %1 = dyn.fma %a, %b, %a : tensor<4x1xf32>, tensor<3xf32>, tensor<4x1xf32>
  // CHECK: return {{.*}}, %[[F]] : tensor<2x3xi64>, tensor<4x3xf32>
  return %0, %1 : tensor<2x3xi64>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x1xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi64>, %j: tensor<i64>,
                  %p: tensor<3xi1>, %q: tensor<2x3xi1>) {
  // CHECK: %[[ADD:.*]] = dyn.add %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<3xf32>
  %0 = dyn.add %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.neg %[[ADD]] : tensor<4x3xf32>
  %n = dyn.neg %0 : tensor<4x3xf32>
  // CHECK: dyn.sub
  %1 = dyn.sub %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.mul
  %2 = dyn.mul %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.div
  %3 = dyn.div %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.floordiv {{.*}} : tensor<2x3xi64>, tensor<i64>
  %4 = dyn.floordiv %i, %j : tensor<2x3xi64>, tensor<i64>
  // CHECK: dyn.mod
  %5 = dyn.mod %i, %j : tensor<2x3xi64>, tensor<i64>
  // CHECK: dyn.pow
  %6 = dyn.pow %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.maximum
  %7 = dyn.maximum %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.minimum
  %8 = dyn.minimum %i, %j : tensor<2x3xi64>, tensor<i64>
  // CHECK: %[[EQ:.*]] = dyn.eq {{.*}} : tensor<4x1xf32>, tensor<3xf32>
  %9 = dyn.eq %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.not %[[EQ]] : tensor<4x3xi1>
  %10 = dyn.not %9 : tensor<4x3xi1>
  // CHECK: dyn.ne
  %11 = dyn.ne %i, %j : tensor<2x3xi64>, tensor<i64>
  // CHECK: dyn.lt
  %12 = dyn.lt %i, %j : tensor<2x3xi64>, tensor<i64>
  // CHECK: dyn.le
  %13 = dyn.le %i, %j : tensor<2x3xi64>, tensor<i64>
  // CHECK: dyn.gt
  %14 = dyn.gt %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.ge
  %15 = dyn.ge %a, %b : tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.logical_and {{.*}} : tensor<3xi1>, tensor<2x3xi1>
  %16 = dyn.logical_and %p, %q : tensor<3xi1>, tensor<2x3xi1>
  // CHECK: dyn.logical_or
  %17 = dyn.logical_or %p, %q : tensor<3xi1>, tensor<2x3xi1>
  // CHECK: %[[W:.*]] = dyn.where {{.*}} : tensor<4x3xi1>, tensor<4x1xf32>, tensor<3xf32>
  %18 = dyn.where %10, %a, %b : tensor<4x3xi1>, tensor<4x1xf32>, tensor<3xf32>
  // CHECK: dyn.exp %[[W]] : tensor<4x3xf32>
  %19 = dyn.exp %18 : tensor<4x3xf32>
  // CHECK: dyn.cast %{{.*}} to f64 : tensor<2x3xi64>
  %20 = dyn.cast %i to f64 : tensor<2x3xi64>
  return
}

// CHECK-LABEL: func.func @constants
func.func @constants() {
  // CHECK: dyn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = dyn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: dyn.constant dense<0> : tensor<4x4xi64>
  %1 = dyn.constant dense<0> : tensor<4x4xi64>
  // CHECK: dyn.full 1.500000e+00 : f32 : tensor<2x3xf32>
  %2 = dyn.full 1.5 : f32 : tensor<2x3xf32>
  // CHECK: dyn.full true : tensor<2xi1>
  %3 = dyn.full true : tensor<2xi1>
  // CHECK: dyn.arange 0.000000e+00, 2.000000e+00 : tensor<5xi64>
  %4 = dyn.arange 0.0, 2.0 : tensor<5xi64>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x8xf32>, %i: tensor<4x?xi32>) {
  // CHECK: %[[S:.*]] = dyn.sum %{{.*}} dims [1] keepdim : tensor<4x8xf32>
  %0 = dyn.sum %x dims [1] keepdim : tensor<4x8xf32>
  // CHECK: dyn.exp %[[S]] : tensor<4x1xf32>
  %e = dyn.exp %0 : tensor<4x1xf32>
  // CHECK: %[[M:.*]] = dyn.mean %{{.*}} dims [0, 1] : tensor<4x8xf32>
  %1 = dyn.mean %x dims [0, 1] : tensor<4x8xf32>
  // CHECK: dyn.exp %[[M]] : tensor<f32>
  %m = dyn.exp %1 : tensor<f32>
  // CHECK: dyn.prod %{{.*}} dims [0]
  %2 = dyn.prod %i dims [0] : tensor<4x?xi32>
  // CHECK: dyn.max
  %3 = dyn.max %x dims [0] : tensor<4x8xf32>
  // CHECK: dyn.min
  %4 = dyn.min %i dims [1] keepdim : tensor<4x?xi32>
  // CHECK: %[[AM:.*]] = dyn.argmax %{{.*}} dims [1] : tensor<4x8xf32>
  %5 = dyn.argmax %x dims [1] : tensor<4x8xf32>
  // CHECK: dyn.neg %[[AM]] : tensor<4xi64>
  %6 = dyn.neg %5 : tensor<4xi64>
  // CHECK: dyn.argmin
  %7 = dyn.argmin %i dims [0, 1] : tensor<4x?xi32>
  // CHECK: dyn.softmax %{{.*}} dim 1 : tensor<4x8xf32>
  %8 = dyn.softmax %x dim 1 : tensor<4x8xf32>
  // CHECK: dyn.log_softmax %{{.*}} dim 0 : tensor<4x8xf32>
  %9 = dyn.log_softmax %x dim 0 : tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @linalg
func.func @linalg(%a: tensor<8x1x4x5xf32>, %b: tensor<3x5x6xf32>, %x: tensor<3xf32>,
                  %w: tensor<2x3xf32>, %bias: tensor<2xf32>, %v: tensor<5xf32>) {
  // CHECK: %[[MM:.*]] = dyn.matmul %{{.*}}, %{{.*}} : tensor<8x1x4x5xf32>, tensor<3x5x6xf32>
  %0 = dyn.matmul %a, %b : tensor<8x1x4x5xf32>, tensor<3x5x6xf32>
  // CHECK: dyn.neg %[[MM]] : tensor<8x3x4x6xf32>
  %1 = dyn.neg %0 : tensor<8x3x4x6xf32>
  // CHECK: %[[DOT:.*]] = dyn.matmul {{.*}} : tensor<5xf32>, tensor<5xf32>
  %2 = dyn.matmul %v, %v : tensor<5xf32>, tensor<5xf32>
  // CHECK: dyn.neg %[[DOT]] : tensor<f32>
  %3 = dyn.neg %2 : tensor<f32>
  // CHECK: %[[LIN:.*]] = dyn.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32>
  %4 = dyn.linear %x, %w, %bias : tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32>
  // CHECK: dyn.neg %[[LIN]] : tensor<2xf32>
  %5 = dyn.neg %4 : tensor<2xf32>
  // CHECK: dyn.linear %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<2x3xf32>
  %6 = dyn.linear %x, %w : tensor<3xf32>, tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x6xf32>, %y: tensor<4x3xf32>, %z: tensor<1x3x1xf32>,
                  %d: tensor<?x8xf32>) {
  // CHECK: dyn.reshape %{{.*}} : tensor<2x6xf32> -> tensor<3x4xf32>
  %0 = dyn.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  // CHECK: %[[T:.*]] = dyn.transpose %{{.*}} perm [1, 0] : tensor<2x6xf32>
  %1 = dyn.transpose %x perm [1, 0] : tensor<2x6xf32>
  // CHECK: dyn.neg %[[T]] : tensor<6x2xf32>
  %2 = dyn.neg %1 : tensor<6x2xf32>
  // CHECK: dyn.broadcast_to %{{.*}} : tensor<4x3xf32> -> tensor<2x4x3xf32>
  %3 = dyn.broadcast_to %y : tensor<4x3xf32> -> tensor<2x4x3xf32>
  // CHECK: %[[E:.*]] = dyn.expand_dims %{{.*}} dim 1 : tensor<4x3xf32>
  %4 = dyn.expand_dims %y dim 1 : tensor<4x3xf32>
  // CHECK: dyn.neg %[[E]] : tensor<4x1x3xf32>
  %5 = dyn.neg %4 : tensor<4x1x3xf32>
  // CHECK: %[[SQ:.*]] = dyn.squeeze %{{.*}} dims [0, 2] : tensor<1x3x1xf32>
  %6 = dyn.squeeze %z dims [0, 2] : tensor<1x3x1xf32>
  // CHECK: dyn.neg %[[SQ]] : tensor<3xf32>
  %7 = dyn.neg %6 : tensor<3xf32>
  // CHECK: %[[C:.*]] = dyn.concat %{{.*}}, %{{.*}} dim 0 : tensor<4x3xf32>, tensor<4x3xf32>
  %8 = dyn.concat %y, %y dim 0 : tensor<4x3xf32>, tensor<4x3xf32>
  // CHECK: dyn.neg %[[C]] : tensor<8x3xf32>
  %9 = dyn.neg %8 : tensor<8x3xf32>
  // CHECK: %[[SL:.*]] = dyn.slice %{{.*}} starts [0, 1] stops [4, 3] steps [2, 1] : tensor<4x3xf32>
  %10 = dyn.slice %y starts [0, 1] stops [4, 3] steps [2, 1] : tensor<4x3xf32>
  // CHECK: dyn.neg %[[SL]] : tensor<2x2xf32>
  %11 = dyn.neg %10 : tensor<2x2xf32>
  // CHECK: %[[REV:.*]] = dyn.slice %{{.*}} starts [3, 0] stops [-1, 3] steps [-1, 1] : tensor<?x8xf32>
  %12 = dyn.slice %d starts [3, 0] stops [-1, 3] steps [-1, 1] : tensor<?x8xf32>
  // CHECK: dyn.neg %[[REV]] : tensor<4x3xf32>
  %13 = dyn.neg %12 : tensor<4x3xf32>
  // CHECK: %[[INS:.*]] = dyn.insert_slice %[[SL]] into %{{.*}} starts [0, 1] stops [4, 3] steps [2, 1] : tensor<2x2xf32> into tensor<4x3xf32>
  %14 = dyn.insert_slice %10 into %y starts [0, 1] stops [4, 3] steps [2, 1] : tensor<2x2xf32> into tensor<4x3xf32>
  // CHECK: dyn.neg %[[INS]] : tensor<4x3xf32>
  %15 = dyn.neg %14 : tensor<4x3xf32>
  return
}

// A box at offsets and of sizes the graph computes, and a store through one.
// CHECK-LABEL: func.func @windows
func.func @windows(%x: tensor<8x8xf64>, %i: tensor<i64>, %z: tensor<i64>) {
  // CHECK: %[[W:.*]] = dyn.window %{{.*}}[%{{.*}}, %{{.*}}] sizes [1, %{{.*}}] : tensor<8x8xf64>
  %0 = dyn.window %x[%i, %z] sizes [1, %i] : tensor<8x8xf64>
  // CHECK: dyn.neg %[[W]] : tensor<1x?xf64>
  %1 = dyn.neg %0 : tensor<1x?xf64>
  // CHECK: %[[R:.*]] = dyn.window %{{.*}}[%{{.*}}, %{{.*}}] sizes [1, 8] : tensor<8x8xf64>
  %2 = dyn.window %x[%i, %z] sizes [1, 8] : tensor<8x8xf64>
  // CHECK: dyn.insert_window %[[R]] into %{{.*}}[%{{.*}}, %{{.*}}] : tensor<1x8xf64> into tensor<8x8xf64>
  %3 = dyn.insert_window %2 into %x[%z, %z] : tensor<1x8xf64> into tensor<8x8xf64>
  return
}

// CHECK-LABEL: func.func @compress
func.func @compress(%x: tensor<4x5xf32>, %m: tensor<4x5xi1>) {
  // CHECK: %[[R:.*]] = dyn.compress %{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<4x5xi1>
  %0 = dyn.compress %x, %m : tensor<4x5xf32>, tensor<4x5xi1>
  // CHECK: dyn.neg %[[R]] : tensor<?xf32>
  %1 = dyn.neg %0 : tensor<?xf32>
  return
}

// The result shape is inferred: (9 + 2 - 2 * 2 - 1) / 2 + 1 = 4 rows of windows, 7 columns.
// CHECK-LABEL: func.func @unfold
func.func @unfold(%x: tensor<?x3x9x7xf32>) {
  // CHECK: %[[U:.*]] = dyn.unfold %{{.*}} kernel [3, 1] dilation [2, 1] padding [1, 0] stride [2, 1] : tensor<?x3x9x7xf32>
  %0 = dyn.unfold %x kernel [3, 1] dilation [2, 1] padding [1, 0] stride [2, 1] : tensor<?x3x9x7xf32>
  // CHECK: dyn.neg %[[U]] : tensor<?x9x28xf32>
  %1 = dyn.neg %0 : tensor<?x9x28xf32>
  return
}

// CHECK-LABEL: func.func @scans
func.func @scans(%x: tensor<4x8xf32>, %i: tensor<3xi64>) {
  // CHECK: dyn.cumsum %{{.*}} dim 1 : tensor<4x8xf32>
  %0 = dyn.cumsum %x dim 1 : tensor<4x8xf32>
  // CHECK: dyn.cumprod %{{.*}} dim 0 : tensor<3xi64>
  %1 = dyn.cumprod %i dim 0 : tensor<3xi64>
  // CHECK: dyn.cummax %{{.*}} dim 1 : tensor<4x8xf32>
  %2 = dyn.cummax %x dim 1 : tensor<4x8xf32>
  // CHECK: dyn.cummin %{{.*}} dim 0 : tensor<3xi64>
  %3 = dyn.cummin %i dim 0 : tensor<3xi64>
  return
}

// CHECK-LABEL: func.func @host_boundary
func.func @host_boundary(%s: tensor<f32>, %p: tensor<i1>) -> (f32, i1, !dyn.pyobj) {
  // CHECK: %[[V:.*]] = dyn.item %{{.*}} : tensor<f32>
  %0 = dyn.item %s : tensor<f32>
  // CHECK: %[[B:.*]] = dyn.to_bool %{{.*}} : tensor<i1>
  %1 = dyn.to_bool %p : tensor<i1>
  // CHECK: %[[O:.*]] = dyn.source "L['xs']" : !dyn.pyobj
  %2 = dyn.source "L['xs']" : !dyn.pyobj
  // CHECK: return %[[V]], %[[B]], %[[O]] : f32, i1, !dyn.pyobj
  return %0, %1, %2 : f32, i1, !dyn.pyobj
}

// CHECK-LABEL: func.func @guards
func.func @guards(%x: tensor<3xf32>, %d: tensor<?x3x?xf32>) {
  // CHECK: dyn.guard.tensor_match "L['d']", %{{.*}} type "numpy.ndarray" contiguous symbols [0, -1, 0] : tensor<?x3x?xf32>
  dyn.guard.tensor_match "L['d']", %d type "numpy.ndarray" contiguous symbols [0, -1, 0] : tensor<?x3x?xf32>
  // CHECK: dyn.guard.tensor_match "L['x']", %{{.*}} type "torch.Tensor" contiguous : tensor<3xf32>
  dyn.guard.tensor_match "L['x']", %x type "torch.Tensor" contiguous : tensor<3xf32>
  // CHECK: dyn.guard.tensor_match "L['w']", %{{.*}} type "torch.nn.parameter.Parameter" requires_grad no_grad : tensor<3xf32>
  dyn.guard.tensor_match "L['w']", %x type "torch.nn.parameter.Parameter" requires_grad no_grad : tensor<3xf32>
  // CHECK: dyn.guard.tensor_match "L['s']", %{{.*}} type "numpy.ndarray" strides [2] written : tensor<3xf32>
  dyn.guard.tensor_match "L['s']", %x type "numpy.ndarray" strides [2] written : tensor<3xf32>
  // CHECK: dyn.guard.type_match "L['n']", "builtins.int"
  dyn.guard.type_match "L['n']", "builtins.int"
  // CHECK: dyn.guard.id_match "G['np']", 140234425 {description = "<module 'numpy'>"}
  dyn.guard.id_match "G['np']", 140234425 {description = "<module 'numpy'>"}
  // CHECK: dyn.guard.value_eq "L['n']", 3 : i64
  dyn.guard.value_eq "L['n']", 3 : i64
  // CHECK: dyn.guard.value_eq "L['mode']", "fast"
  dyn.guard.value_eq "L['mode']", "fast"
  // CHECK: dyn.guard.value_eq "L['opt']", unit
  dyn.guard.value_eq "L['opt']", unit
  // CHECK: dyn.guard.len_eq "L['shapes']", 2
  dyn.guard.len_eq "L['shapes']", 2
  // CHECK: dyn.guard.dict_keys "L['params']", ["w", 3]
  dyn.guard.dict_keys "L['params']", ["w", 3]
  // CHECK: dyn.guard.distinct "L['history']", ["L['config'].items", "G['CACHE']"]
  dyn.guard.distinct "L['history']", ["L['config'].items", "G['CACHE']"]
  // CHECK: dyn.guard.grad_mode false
  dyn.guard.grad_mode false
  // CHECK: dyn.check %{{.*}}, "an index is out of bounds" : tensor<i1>
  %ok = dyn.constant dense<false> : tensor<i1>
  dyn.check %ok, "an index is out of bounds" : tensor<i1>
  return
}

// CHECK-LABEL: func.func @loop
func.func @loop(%u0: tensor<3xf32>, %lb: tensor<i64>, %ub: tensor<i64>, %st: tensor<i64>) -> tensor<3xf32> {
  // CHECK: %[[R:.*]] = dyn.for %{{.*}}, %{{.*}}, %{{.*}} iter_args(%{{.*}} : tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ^bb0(%{{.*}}: tensor<i64>, %[[U:.*]]: tensor<3xf32>):
  // CHECK:   %[[S:.*]] = dyn.sin %[[U]]
  // CHECK:   dyn.yield %[[S]] : tensor<3xf32>
  // CHECK: } : tensor<i64>
  %r = dyn.for %lb, %ub, %st iter_args(%u0 : tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %u: tensor<3xf32>):
    %s = dyn.sin %u : tensor<3xf32>
    dyn.yield %s : tensor<3xf32>
  } : tensor<i64>
  return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @while_loop
func.func @while_loop(%x0: tensor<3xf32>, %p: tensor<i1>, %tol: tensor<f32>) -> tensor<3xf32> {
  // CHECK: %[[R:.*]] = dyn.while %{{.*}} : tensor<i1> iter_args(%{{.*}} : tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ^bb0(%[[X:.*]]: tensor<3xf32>):
  // CHECK:   %[[S:.*]] = dyn.sin %[[X]]
  // CHECK:   dyn.yield %{{.*}}, %[[S]] : tensor<i1>, tensor<3xf32>
  %r = dyn.while %p : tensor<i1> iter_args(%x0 : tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: tensor<3xf32>):
    %s = dyn.sin %x : tensor<3xf32>
    %m = dyn.max %s dims [0] : tensor<3xf32>
    %q = dyn.gt %m, %tol : tensor<f32>, tensor<f32>
    dyn.yield %q, %s : tensor<i1>, tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @control
func.func @control(%x: tensor<3xf32>, %p: tensor<i1>) -> tensor<3xf32> {
  // CHECK: %[[R:.*]] = dyn.if %{{.*}} : tensor<i1> -> tensor<3xf32> {
  // CHECK:   %[[S:.*]] = dyn.sin
  // CHECK:   dyn.yield %[[S]] : tensor<3xf32>
  // CHECK: } else {
  // CHECK:   dyn.yield %{{.*}} : tensor<3xf32>
  // CHECK: }
  %r = dyn.if %p : tensor<i1> -> tensor<3xf32> {
    %s = dyn.sin %x : tensor<3xf32>
    dyn.yield %s : tensor<3xf32>
  } else {
    dyn.yield %x : tensor<3xf32>
  }
  // CHECK: return %[[R]]
  return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @side_effect_only_if
func.func @side_effect_only_if(%p: tensor<i1>) {
  // CHECK: dyn.if %{{.*}} : tensor<i1> {
  // CHECK-NEXT: } else {
  // CHECK-NEXT: }
  dyn.if %p : tensor<i1> {
  } else {
  }
  return
}

// CHECK-LABEL: func.func @graph_break
func.func @graph_break(%x: tensor<3xf32>) {
  %s = dyn.sum %x dims [0] : tensor<3xf32>
  %z = dyn.constant dense<0.0> : tensor<f32>
  %p = dyn.gt %s, %z : tensor<f32>, tensor<f32>
  // CHECK: dyn.graph_break data_dependent_branch "if on a tensor: a branch calls print" at "model.py" : 12 resume [40, 58] (%{{.*}}, %{{.*}} : tensor<i1>, tensor<3xf32>)
  dyn.graph_break data_dependent_branch "if on a tensor: a branch calls print" at "model.py" : 12 resume [40, 58] (%p, %x : tensor<i1>, tensor<3xf32>)
}

// CHECK-LABEL: func.func @unsupported_call
func.func @unsupported_call() {
  // CHECK: dyn.graph_break unsupported_call "call to builtin print" at "model.py" : 3 resume [22]
  dyn.graph_break unsupported_call "call to builtin print" at "model.py" : 3 resume [22]
}

// CHECK-LABEL: func.func @gather
// CHECK: dyn.gather %{{.*}}[%{{.*}}] axis 1 : tensor<10x4xf32>, tensor<2x3xi64>
func.func @gather(%x: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<10x2x3xf32> {
  %r = dyn.gather %x[%i] axis 1 : tensor<10x4xf32>, tensor<2x3xi64>
  return %r : tensor<10x2x3xf32>
}

// CHECK-LABEL: func.func @scatter
// CHECK: dyn.scatter %{{.*}} into %{{.*}}[%{{.*}}] axis 0 : tensor<2x4xf32> into tensor<10x4xf32>, tensor<2xi64>
// CHECK: dyn.scatter %{{.*}} into %{{.*}}[%{{.*}}] axis 0 accumulate : tensor<2x4xf32>
func.func @scatter(%v: tensor<2x4xf32>, %x: tensor<10x4xf32>, %i: tensor<2xi64>) -> tensor<10x4xf32> {
  %r = dyn.scatter %v into %x[%i] axis 0 : tensor<2x4xf32> into tensor<10x4xf32>, tensor<2xi64>
  %s = dyn.scatter %v into %r[%i] axis 0 accumulate : tensor<2x4xf32> into tensor<10x4xf32>, tensor<2xi64>
  return %s : tensor<10x4xf32>
}

// CHECK-LABEL: func.func @sorts
// CHECK: %{{.*}}, %{{.*}} = dyn.sort %{{.*}} axis 1 : tensor<4x8xf32>
// CHECK: %{{.*}}, %{{.*}} = dyn.sort %{{.*}} axis 0 descending : tensor<?xi32>
func.func @sorts(%x: tensor<4x8xf32>, %y: tensor<?xi32>) -> (tensor<4x8xf32>, tensor<4x8xi64>, tensor<?xi32>, tensor<?xi64>) {
  %v, %i = dyn.sort %x axis 1 : tensor<4x8xf32>
  %w, %j = dyn.sort %y axis 0 descending : tensor<?xi32>
  return %v, %i, %w, %j : tensor<4x8xf32>, tensor<4x8xi64>, tensor<?xi32>, tensor<?xi64>
}

// CHECK-LABEL: func.func @factorizations
// CHECK: %{{.*}}, %{{.*}} = dyn.cholesky %{{.*}} : tensor<2x3x3xf64>
// CHECK: %{{.*}}, %{{.*}} = dyn.solve %{{.*}}, %{{.*}} : tensor<2x3x3xf64>, tensor<2x3x4xf64>
func.func @factorizations(%a: tensor<2x3x3xf64>, %b: tensor<2x3x4xf64>) -> (tensor<2x3x3xf64>, tensor<i1>, tensor<2x3x4xf64>, tensor<i1>) {
  %l, %ok = dyn.cholesky %a : tensor<2x3x3xf64>
  %x, %ok2 = dyn.solve %a, %b : tensor<2x3x3xf64>, tensor<2x3x4xf64>
  return %l, %ok, %x, %ok2 : tensor<2x3x3xf64>, tensor<i1>, tensor<2x3x4xf64>, tensor<i1>
}

// CHECK-LABEL: func.func @complex_numbers
// CHECK: dyn.constant dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f64>>
// CHECK: dyn.mul %{{.*}}, %{{.*}} : tensor<3xcomplex<f64>>, tensor<complex<f64>>
// CHECK: dyn.div
// CHECK: dyn.exp %{{.*}} : tensor<3xcomplex<f64>>
// CHECK: dyn.conj %{{.*}} : tensor<3xcomplex<f64>>
// CHECK: dyn.real %{{.*}} : tensor<3xcomplex<f64>>
// CHECK: dyn.imag %{{.*}} : tensor<3xcomplex<f64>>
// CHECK: dyn.cabs %{{.*}} : tensor<3xcomplex<f64>>
// CHECK: dyn.eq %{{.*}}, %{{.*}} : tensor<3xcomplex<f64>>, tensor<3xcomplex<f64>>
// CHECK: dyn.cast %{{.*}} to complex<f32> : tensor<3xf64>
// CHECK: dyn.sum %{{.*}} dims [0] : tensor<3xcomplex<f64>>
func.func @complex_numbers(%z: tensor<3xcomplex<f64>>, %x: tensor<3xf64>) -> (tensor<3xcomplex<f64>>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xi1>, tensor<3xcomplex<f32>>, tensor<complex<f64>>) {
  %c = dyn.constant dense<(1.0, 2.0)> : tensor<complex<f64>>
  %0 = dyn.mul %z, %c : tensor<3xcomplex<f64>>, tensor<complex<f64>>
  %1 = dyn.div %0, %z : tensor<3xcomplex<f64>>, tensor<3xcomplex<f64>>
  %2 = dyn.exp %1 : tensor<3xcomplex<f64>>
  %3 = dyn.conj %2 : tensor<3xcomplex<f64>>
  %re = dyn.real %3 : tensor<3xcomplex<f64>>
  %im = dyn.imag %3 : tensor<3xcomplex<f64>>
  %abs = dyn.cabs %3 : tensor<3xcomplex<f64>>
  %eq = dyn.eq %3, %z : tensor<3xcomplex<f64>>, tensor<3xcomplex<f64>>
  %f = dyn.cast %x to complex<f32> : tensor<3xf64>
  %s = dyn.sum %z dims [0] : tensor<3xcomplex<f64>>
  return %3, %re, %im, %abs, %eq, %f, %s : tensor<3xcomplex<f64>>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xi1>, tensor<3xcomplex<f32>>, tensor<complex<f64>>
}
