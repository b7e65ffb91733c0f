# nn.Sequential called as a module, torch promotion (integer tensors meet floats as the
# default float32), softmax with a negative dim.
# REQUIRES: torch
# RUN: %python %s | FileCheck %s

import torch

import dynamir

seq = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
torch.set_grad_enabled(False); result = dynamir.trace(seq, torch.ones(5, 4))  # inference
print(result)
print("kernels:", result.kernel_count)

# CHECK-LABEL: func.func @Sequential
# CHECK-SAME: (%[[X:.*]]: tensor<5x4xf32>, %[[W0:.*]]: tensor<8x4xf32>, %[[B0:.*]]: tensor<8xf32>, %[[W2:.*]]: tensor<2x8xf32>, %[[B2:.*]]: tensor<2xf32>) -> tensor<5x2xf32>
# CHECK: dyn.guard.tensor_match "L['self'][0].weight", %[[W0]]
# CHECK: dyn.guard.type_match "L['self'][1]", "torch.nn.modules.activation.ReLU"
# CHECK: %[[H:.*]] = dyn.linear %[[X]], %[[W0]], %[[B0]]
# CHECK: %[[R:.*]] = dyn.relu %[[H]] : tensor<5x8xf32>
# CHECK: dyn.linear %[[R]], %[[W2]], %[[B2]]
# CHECK: kernels: 0


def torch_promotion(t, i):
    return t + i, i / 2, torch.softmax(t, dim=-1)


print(dynamir.trace(torch_promotion, torch.ones(2, 3), torch.arange(3)))
# CHECK-LABEL: func.func @torch_promotion
# CHECK: dyn.cast %{{.*}} to f32 : tensor<3xi64>
# CHECK: dyn.softmax %{{.*}} dim 1 : tensor<2x3xf32>
# CHECK: return {{.*}} : tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>
