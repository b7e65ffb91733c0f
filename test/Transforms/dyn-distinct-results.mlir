// A tensor returned at several positions gets a copy for each repeat, so that bufferization
// gives every result its own buffer; the signature stays (the runtime maps results by
// position). Both lowering pipelines used to crash in buffer-results-to-out-params on
// `return %b, %b` (SIGSEGV), or return one buffer twice for a caller that frees each.
// RUN: tensor-opt %s -dyn-distinct-results -split-input-file --verify-each | FileCheck %s
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-llvm -split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: tensor-opt %s -dyn-to-linalg -dyn-lower-to-nvvm -split-input-file | FileCheck %s --check-prefix=NVVM

// CHECK-LABEL: func.func @twice
// CHECK: %[[B:.*]] = dyn.add
// CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[B]]) : tensor<4xf32>
// CHECK: return %[[B]], %[[COPY]] : tensor<4xf32>, tensor<4xf32>
// LLVM-LABEL: llvm.func @twice
// NVVM-LABEL: llvm.func @twice
func.func @twice(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = dyn.constant dense<1.0> : tensor<f32>
  %b = dyn.add %a, %one : tensor<4xf32>, tensor<f32>
  return %b, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// An argument returned directly (twice) and a constant returned twice; scalars need no copy.
// CHECK-LABEL: func.func @arguments_and_constants
// CHECK-SAME: (%[[A:.*]]: tensor<?xf32>, %[[S:.*]]: f32)
// CHECK: %[[C:.*]] = dyn.constant
// CHECK: %[[CA:.*]] = bufferization.alloc_tensor() copy(%[[A]]) : tensor<?xf32>
// CHECK: %[[CC:.*]] = bufferization.alloc_tensor() copy(%[[C]]) : tensor<2xf32>
// CHECK: return %[[A]], %[[C]], %[[CA]], %[[CC]], %[[S]], %[[S]] :
// LLVM-LABEL: llvm.func @arguments_and_constants
// NVVM-LABEL: llvm.func @arguments_and_constants
func.func @arguments_and_constants(%a: tensor<?xf32>, %s: f32)
    -> (tensor<?xf32>, tensor<2xf32>, tensor<?xf32>, tensor<2xf32>, f32, f32) {
  %c = dyn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %a, %c, %a, %c, %s, %s
      : tensor<?xf32>, tensor<2xf32>, tensor<?xf32>, tensor<2xf32>, f32, f32
}

// -----

// What maximum(b, b) -> b leaves: one computed value, returned at both positions.
// LLVM-LABEL: llvm.func @after_fold
// NVVM-LABEL: llvm.func @after_fold
func.func @after_fold(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %one = dyn.constant dense<1.0> : tensor<f32>
  %b = dyn.add %a, %one : tensor<2x3xf32>, tensor<f32>
  return %b, %b, %b : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
