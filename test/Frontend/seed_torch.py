# The seed program from the forum thread: both data-dependent ifs traced with fake tensors
# into dyn.if regions holding sin and cos, every op at its Python line, guards on x and on the
# Linear parameters, and no kernel run while tracing.
# REQUIRES: torch
# RUN: %python %s | FileCheck %s

import torch

import dynamir


class TestNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x):
        x = x * 2
        if x.sum() > 0:
            x = torch.sin(x)
        if x.mean() > 0:
            x = torch.cos(x)
        x = self.linear(x)
        return x


torch.set_grad_enabled(False); result = dynamir.trace(TestNet(), torch.ones(3) * -1.0)  # inference
print(result.module.to_string(debug_info=True))
print("kernels:", result.kernel_count, "breaks:", len(result.graph_breaks))

# CHECK-LABEL: func.func @TestNet_forward
# CHECK-SAME: (%[[X:.*]]: tensor<3xf32> {{.*}}, %[[W:.*]]: tensor<2x3xf32> {{.*}}, %[[B:.*]]: tensor<2xf32> {{.*}}) -> tensor<2xf32>
# CHECK: dyn.guard.type_match "L['self']", "__main__.TestNet"
# CHECK: dyn.guard.tensor_match "L['x']", %[[X]] type "torch.Tensor" contiguous : tensor<3xf32>
# CHECK: dyn.guard.id_match "G['torch']"
# CHECK: dyn.guard.tensor_match "L['self'].linear.weight", %[[W]] type "torch.nn.parameter.Parameter"
# CHECK: dyn.guard.tensor_match "L['self'].linear.bias", %[[B]] type "torch.nn.parameter.Parameter"
# CHECK: %[[X2:.*]] = dyn.mul %[[X]], %{{.*}} : tensor<3xf32>, tensor<f32> loc(#[[L19:loc[0-9]+]])
# CHECK: %[[S:.*]] = dyn.sum %[[X2]] dims [0] : tensor<3xf32> loc(#[[L20:loc[0-9]+]])
# CHECK: %[[P1:.*]] = dyn.gt %[[S]], %{{.*}} : tensor<f32>, tensor<f32>
# CHECK: %[[IF1:.*]] = dyn.if %[[P1]] : tensor<i1> -> tensor<3xf32> {
# CHECK:   %[[SIN:.*]] = dyn.sin %[[X2]] : tensor<3xf32> loc(#[[L21:loc[0-9]+]])
# The new array sin(x) is the side's own (fresh); the other side hands on x * 2, an array the
# trace made before the branch (traced).
# CHECK:   dyn.yield {fresh = array<i64: 0>} %[[SIN]]
# CHECK: } else {
# CHECK:   dyn.yield {traced = array<i64: 0>} %[[X2]]
# CHECK: %[[M:.*]] = dyn.mean %[[IF1]] dims [0] : tensor<3xf32> loc(#[[L22:loc[0-9]+]])
# CHECK: %[[IF2:.*]] = dyn.if %{{.*}} : tensor<i1> -> tensor<3xf32> {
# CHECK:   dyn.cos %[[IF1]] : tensor<3xf32> loc(#[[L23:loc[0-9]+]])
# CHECK: dyn.linear %[[IF2]], %[[W]], %[[B]] : tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32> loc(#[[L24:loc[0-9]+]])
# CHECK: #[[L19]] = loc("{{.*}}seed_torch.py":18:13)
# CHECK: #[[L20]] = loc("{{.*}}seed_torch.py":19:12)
# CHECK: #[[L21]] = loc("{{.*}}seed_torch.py":20:17)
# CHECK: #[[L22]] = loc("{{.*}}seed_torch.py":21:12)
# CHECK: #[[L23]] = loc("{{.*}}seed_torch.py":22:17)
# CHECK: #[[L24]] = loc("{{.*}}seed_torch.py":23:13)
# CHECK: kernels: 0 breaks: 0
