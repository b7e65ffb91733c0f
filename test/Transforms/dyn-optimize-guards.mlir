// RUN: tensor-opt %s -dyn-optimize-guards -split-input-file --verify-roundtrip | FileCheck %s

// Guards end up at the top, cheapest first (identity, type/length, value, tensor), and the
// function lists them in `dyn.guards` in that order. Compute ops are left alone.
// CHECK-LABEL: func.func @seed
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<2x3xf32>)
// CHECK-SAME: dyn.guards = [
// CHECK-SAME: {description = "<module 'torch'>", id = 42 : i64, kind = "id_match", source = "G['torch']"},
// CHECK-SAME: {kind = "type_match", source = "L['self']", type_name = "__main__.TestNet"},
// CHECK-SAME: {kind = "value_eq", source = "L['n']", value = 2 : i64},
// CHECK-SAME: {arg = 0 : i64, contiguous, kind = "tensor_match", source = "L['x']", type = tensor<3xf32>, type_name = "torch.Tensor"},
// CHECK-SAME: {arg = 1 : i64, kind = "tensor_match", source = "L['self'].linear.weight", type = tensor<2x3xf32>, type_name = "torch.nn.Parameter"}]
// CHECK-NEXT: dyn.guard.id_match "G['torch']", 42
// CHECK-NEXT: dyn.guard.type_match "L['self']", "__main__.TestNet"
// CHECK-NEXT: dyn.guard.value_eq "L['n']", 2 : i64
// CHECK-NEXT: dyn.guard.tensor_match "L['x']", %[[X]] type "torch.Tensor" contiguous
// CHECK-NEXT: dyn.guard.tensor_match "L['self'].linear.weight", %[[W]]
// CHECK-NEXT: %[[C:.*]] = dyn.constant dense<2.000000e+00>
// CHECK-NEXT: dyn.mul %[[X]], %[[C]]
func.func @seed(%x: tensor<3xf32>, %w: tensor<2x3xf32>) -> tensor<2xf32> {
  dyn.guard.tensor_match "L['x']", %x type "torch.Tensor" contiguous : tensor<3xf32>
  %two = dyn.constant dense<2.0> : tensor<f32>
  %0 = dyn.mul %x, %two : tensor<3xf32>, tensor<f32>
  dyn.guard.id_match "G['torch']", 42 {description = "<module 'torch'>"}
  dyn.guard.tensor_match "L['self'].linear.weight", %w type "torch.nn.Parameter" : tensor<2x3xf32>
  dyn.guard.value_eq "L['n']", 2 : i64
  dyn.guard.type_match "L['self']", "__main__.TestNet"
  dyn.guard.id_match "G['torch']", 42 {description = "<module 'torch'>"}
  %1 = dyn.linear %0, %w : tensor<3xf32>, tensor<2x3xf32>
  return %1 : tensor<2xf32>
}

// -----

// Functions without guards get an empty list; the runtime can tell "no guards" from "not
// optimized".
// CHECK-LABEL: func.func @no_guards
// CHECK-SAME: attributes {dyn.guards = []}
func.func @no_guards(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// -----

// Declarations are left alone.
// CHECK-LABEL: func.func private @external
// CHECK-NOT: dyn.guards
func.func private @external(tensor<3xf32>)
