// RUN: tensor-opt %s -canonicalize -split-input-file --verify-roundtrip | FileCheck %s

// CHECK-LABEL: func.func @additive_identities
// CHECK-SAME: (%[[X:.*]]: tensor<3xi64>, %[[F:.*]]: tensor<3xf32>)
func.func @additive_identities(%x: tensor<3xi64>, %f: tensor<3xf32>)
    -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %zero = dyn.constant dense<0> : tensor<i64>
  %0 = dyn.add %x, %zero : tensor<3xi64>, tensor<i64>
  %1 = dyn.add %zero, %x : tensor<i64>, tensor<3xi64>
  %2 = dyn.sub %x, %zero : tensor<3xi64>, tensor<i64>
  %pz = dyn.constant dense<0.0> : tensor<3xf32>
  %nz = dyn.constant dense<-0.0> : tensor<f32>
  // x + (-0.0) and x - 0.0 are exact; x + 0.0 maps -0.0 to +0.0 and stays.
  %3 = dyn.add %f, %nz : tensor<3xf32>, tensor<f32>
  %4 = dyn.sub %f, %pz : tensor<3xf32>, tensor<3xf32>
  // CHECK: %[[KEEP:.*]] = dyn.add %[[F]], %{{.*}} : tensor<3xf32>, tensor<3xf32>
  %5 = dyn.add %f, %pz : tensor<3xf32>, tensor<3xf32>
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[F]], %[[F]], %[[KEEP]]
  return %0, %1, %2, %3, %4, %5
      : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @multiplicative_identities
// CHECK-SAME: (%[[X:.*]]: tensor<3xi32>, %[[F:.*]]: tensor<3xf32>)
func.func @multiplicative_identities(%x: tensor<3xi32>, %f: tensor<3xf32>)
    -> (tensor<3xi32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) {
  %one = dyn.constant dense<1> : tensor<i32>
  %fone = dyn.constant dense<1.0> : tensor<f32>
  %0 = dyn.mul %one, %x : tensor<i32>, tensor<3xi32>
  %1 = dyn.mul %f, %fone : tensor<3xf32>, tensor<f32>
  %2 = dyn.div %f, %fone : tensor<3xf32>, tensor<f32>
  // CHECK-DAG: %[[ZEROS:.*]] = dyn.constant dense<0> : tensor<3xi32>
  %zero = dyn.constant dense<0> : tensor<i32>
  %3 = dyn.mul %x, %zero : tensor<3xi32>, tensor<i32>
  // x * 0.0 is NaN for NaN and infinities: not folded.
  // CHECK-DAG: %[[FMUL:.*]] = dyn.mul %[[F]], %{{.*}} : tensor<3xf32>, tensor<f32>
  %fzero = dyn.constant dense<0.0> : tensor<f32>
  %4 = dyn.mul %f, %fzero : tensor<3xf32>, tensor<f32>
  // CHECK: return %[[X]], %[[F]], %[[F]], %[[ZEROS]], %[[FMUL]]
  return %0, %1, %2, %3, %4 : tensor<3xi32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xf32>
}

// -----

// An identity constant that broadcasts x to a bigger shape is not an identity.
// CHECK-LABEL: func.func @identity_that_broadcasts
func.func @identity_that_broadcasts(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %one = dyn.constant dense<1.0> : tensor<2x3xf32>
  // CHECK: dyn.mul
  %0 = dyn.mul %x, %one : tensor<3xf32>, tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @involutions
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xi1>)
func.func @involutions(%x: tensor<3xf32>, %b: tensor<3xi1>) -> (tensor<3xf32>, tensor<3xi1>) {
  %0 = dyn.neg %x : tensor<3xf32>
  %1 = dyn.neg %0 : tensor<3xf32>
  %2 = dyn.not %b : tensor<3xi1>
  %3 = dyn.not %2 : tensor<3xi1>
  // CHECK: return %[[X]], %[[B]]
  return %1, %3 : tensor<3xf32>, tensor<3xi1>
}

// -----

// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x4x2xf32>, tensor<2x3x4xf32>) {
  %0 = dyn.transpose %x perm [1, 0, 2] : tensor<2x3x4xf32>
  %1 = dyn.transpose %0 perm [1, 0, 2] : tensor<3x2x4xf32>
  // CHECK: %[[T:.*]] = dyn.transpose %[[X]] perm [1, 2, 0] : tensor<2x3x4xf32>
  %2 = dyn.transpose %0 perm [0, 2, 1] : tensor<3x2x4xf32>
  %3 = dyn.transpose %x perm [0, 1, 2] : tensor<2x3x4xf32>
  // CHECK: return %[[X]], %[[T]], %[[X]]
  return %1, %2, %3 : tensor<2x3x4xf32>, tensor<3x4x2xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x6xf32>)
func.func @reshapes(%x: tensor<2x6xf32>) -> (tensor<3x4xf32>, tensor<2x6xf32>) {
  %0 = dyn.reshape %x : tensor<2x6xf32> -> tensor<12xf32>
  // CHECK: %[[R:.*]] = dyn.reshape %[[X]] : tensor<2x6xf32> -> tensor<3x4xf32>
  %1 = dyn.reshape %0 : tensor<12xf32> -> tensor<3x4xf32>
  %2 = dyn.reshape %1 : tensor<3x4xf32> -> tensor<2x6xf32>
  // CHECK: return %[[R]], %[[X]]
  return %1, %2 : tensor<3x4xf32>, tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func.func @trivial_shape_ops
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>)
func.func @trivial_shape_ops(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = dyn.broadcast_to %x : tensor<4x3xf32> -> tensor<4x3xf32>
  %1 = dyn.cast %x to f32 : tensor<4x3xf32>
  %2 = dyn.slice %x starts [0, 0] stops [4, 3] steps [1, 1] : tensor<4x3xf32>
  %3 = dyn.concat %x dim 0 : tensor<4x3xf32>
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]]
  return %0, %1, %2, %3 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Replacing every element is the new value; a part of them is not folded.
// CHECK-LABEL: func.func @insert_whole_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[V:.*]]: tensor<4x3xf32>, %[[P:.*]]: tensor<2x3xf32>)
func.func @insert_whole_slice(%x: tensor<4x3xf32>, %v: tensor<4x3xf32>, %p: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = dyn.insert_slice %v into %x starts [0, 0] stops [4, 3] steps [1, 1] : tensor<4x3xf32> into tensor<4x3xf32>
  // CHECK: %[[PART:.*]] = dyn.insert_slice %[[P]] into %[[X]] starts [1, 0] stops [3, 3] steps [1, 1]
  %1 = dyn.insert_slice %p into %x starts [1, 0] stops [3, 3] steps [1, 1] : tensor<2x3xf32> into tensor<4x3xf32>
  // CHECK: return %[[V]], %[[PART]]
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @where_same_branches
// CHECK-SAME: (%[[C:.*]]: tensor<3xi1>, %[[X:.*]]: tensor<3xf32>)
func.func @where_same_branches(%c: tensor<3xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = dyn.where %c, %x, %x : tensor<3xi1>, tensor<3xf32>, tensor<3xf32>
  // CHECK: return %[[X]]
  return %0 : tensor<3xf32>
}

// -----

// A data-dependent if on a constant predicate is the branch it takes.
// CHECK-LABEL: func.func @constant_if
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
func.func @constant_if(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %t = dyn.constant dense<true> : tensor<i1>
  %f = dyn.constant dense<false> : tensor<i1>
  // CHECK-NOT: dyn.if
  // CHECK: %[[S:.*]] = dyn.sin %[[X]]
  %0 = dyn.if %t : tensor<i1> -> tensor<3xf32> {
    %s = dyn.sin %x : tensor<3xf32>
    dyn.yield %s : tensor<3xf32>
  } else {
    %c = dyn.cos %x : tensor<3xf32>
    dyn.yield %c : tensor<3xf32>
  }
  // CHECK: %[[C:.*]] = dyn.cos %[[X]]
  %1 = dyn.if %f : tensor<i1> -> tensor<3xf32> {
    %s = dyn.sin %x : tensor<3xf32>
    dyn.yield %s : tensor<3xf32>
  } else {
    %c = dyn.cos %x : tensor<3xf32>
    dyn.yield %c : tensor<3xf32>
  }
  // CHECK: return %[[S]], %[[C]]
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Guards hoist to the top of the function, duplicates merge, a type match implied by a
// tensor match of the same source goes, and a tensor match on a computed value (known to
// hold) goes. Data-dependent ifs keep their guards' meaning: guards inside them hoist too.
// CHECK-LABEL: func.func @guards
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[P:.*]]: tensor<i1>)
// CHECK-NEXT: dyn.guard.tensor_match "L['x']", %[[X]] type "numpy.ndarray" : tensor<3xf32>
// CHECK-NEXT: dyn.guard.value_eq "L['n']", 3 : i64
// CHECK-NEXT: dyn.guard.len_eq "L['xs']", 2
// CHECK-NEXT: dyn.guard.type_match "L['y']", "builtins.float"
// CHECK-NEXT: dyn.sin
// CHECK-NOT: dyn.guard
// CHECK: return
func.func @guards(%x: tensor<3xf32>, %p: tensor<i1>) -> tensor<3xf32> {
  dyn.guard.tensor_match "L['x']", %x type "numpy.ndarray" : tensor<3xf32>
  %0 = dyn.sin %x : tensor<3xf32>
  dyn.guard.value_eq "L['n']", 3 : i64
  dyn.guard.type_match "L['x']", "numpy.ndarray"
  dyn.guard.tensor_match "L['x']", %x type "numpy.ndarray" : tensor<3xf32>
  dyn.guard.tensor_match "L['x'].T", %0 type "numpy.ndarray" : tensor<3xf32>
  %1 = dyn.if %p : tensor<i1> -> tensor<3xf32> {
    dyn.guard.len_eq "L['xs']", 2
    dyn.guard.value_eq "L['n']", 3 : i64
    dyn.yield %0 : tensor<3xf32>
  } else {
    dyn.guard.type_match "L['y']", "builtins.float"
    dyn.yield %x : tensor<3xf32>
  }
  return %1 : tensor<3xf32>
}

// -----

// Different sources or different properties are different guards.
// CHECK-LABEL: func.func @distinct_guards
// CHECK-COUNT-3: dyn.guard.value_eq
func.func @distinct_guards() {
  dyn.guard.value_eq "L['n']", 3 : i64
  dyn.guard.value_eq "L['n']", 4 : i64
  dyn.guard.value_eq "L['m']", 3 : i64
  return
}

// -----

// A check whose condition folds to true goes; one that may fail stays.
// CHECK-LABEL: func.func @checks
// CHECK-NOT: dyn.check %{{.*}}, "holds"
// CHECK: dyn.check %{{.*}}, "may fail"
func.func @checks(%p: tensor<i1>) {
  %t = dyn.constant dense<true> : tensor<i1>
  dyn.check %t, "holds" : tensor<i1>
  dyn.check %p, "may fail" : tensor<i1>
  return
}
