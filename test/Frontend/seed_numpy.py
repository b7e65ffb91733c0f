# The seed program's numpy twin: numpy promotion (a Python int scalar keeps float32),
# x @ w.T + b as transpose, matmul and add, and guards on the global `np`.
# RUN: %python %s | FileCheck %s

import numpy as np

import dynamir


def forward(x, w, b):
    x = x * 2
    if x.sum() > 0:
        x = np.sin(x)
    if x.mean() > 0:
        x = np.cos(x)
    return x @ w.T + b


x = np.ones(3, dtype=np.float32) * -1
w = np.ones((2, 3), dtype=np.float32)
b = np.zeros(2, dtype=np.float32)
result = dynamir.trace(forward, x, w, b)
print(result)
print("kernels:", result.kernel_count, "guards:", [g.source for g in result.guards])

# CHECK-LABEL: func.func @forward
# CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2xf32>) -> tensor<2xf32>
# CHECK: dyn.guard.tensor_match "L['x']", %[[X]] type "numpy.ndarray" contiguous
# CHECK: dyn.guard.id_match "G['np']"
# CHECK: %[[X2:.*]] = dyn.mul %[[X]], %{{.*}} : tensor<3xf32>, tensor<f32>
# CHECK: dyn.if {{.*}} -> tensor<3xf32> {
# CHECK:   dyn.sin %[[X2]]
# CHECK: dyn.if {{.*}} -> tensor<3xf32> {
# CHECK:   dyn.cos
# CHECK: %[[WT:.*]] = dyn.transpose %[[W]] perm [1, 0] : tensor<2x3xf32>
# CHECK: %[[MM:.*]] = dyn.matmul %{{.*}}, %[[WT]] : tensor<3xf32>, tensor<3x2xf32>
# CHECK: %[[R:.*]] = dyn.add %[[MM]], %[[B]] : tensor<2xf32>, tensor<2xf32>
# CHECK: return %[[R]] : tensor<2xf32>
# CHECK: kernels: 0 guards: ["L['x']", "L['w']", "L['b']", "G['np']"]
