# Loops over range unroll, helpers and closures inline, keyword arguments, tuple returns,
# scalar specialization guards, dynamic=True, and numpy promotion.
# RUN: %python %s | FileCheck %s

import numpy as np

import dynamir

x = np.ones((2, 3), dtype=np.float32)


def show(title, result):
    print("==", title)
    print(result)
    assert result.kernel_count == 0


def loop(x, n):
    for i in range(n):
        x = x + i
    return x


# CHECK-LABEL: == loop
# CHECK: dyn.guard.value_eq "L['n']", 3 : i64
# CHECK-COUNT-3: dyn.add
# CHECK-NOT: dyn.add
# CHECK: return
show("loop", dynamir.trace(loop, x, 3))

scale = 0.5


def helper(v, k=2.0):
    return v * k + scale


def make_shift(offset):
    def shift(v):
        return v - offset

    return shift


shift = make_shift(1.0)


def outer(x):
    return shift(helper(x, k=3.0))


# CHECK-LABEL: == helpers
# CHECK: dyn.guard.id_match "G['shift']"
# CHECK: dyn.guard.id_match "G['helper']"
# CHECK: dyn.guard.value_eq "G['scale']", 5.000000e-01 : f64
# CHECK: dyn.guard.value_eq "G['shift'].__closure__[0].cell_contents", 1.000000e+00 : f64
# CHECK: %[[K:.*]] = dyn.constant dense<3.000000e+00> : tensor<f32>
# CHECK: dyn.mul %{{.*}}, %[[K]] : tensor<2x3xf32>, tensor<f32>
# CHECK: dyn.add
# CHECK: dyn.sub
show("helpers", dynamir.trace(outer, x))


def pair(x, *, axis):
    return x.sum(axis=axis), x.max(axis=axis, keepdims=True)


# CHECK-LABEL: == tuple_return
# CHECK: func.func @pair
# CHECK-SAME: attributes {dyn.output = "(%0, %1)"}
# CHECK: %[[S:.*]] = dyn.sum %{{.*}} dims [1] : tensor<2x3xf32>
# CHECK: %[[M:.*]] = dyn.max %{{.*}} dims [1] keepdim : tensor<2x3xf32>
# CHECK: return %[[S]], %[[M]] : tensor<2xf32>, tensor<2x1xf32>
show("tuple_return", dynamir.trace(pair, x, axis=1))


def shapes(x):
    return x.reshape(-1) * x.shape[1]


# CHECK-LABEL: == dynamic
# CHECK: func.func @shapes
# CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>)
# CHECK: dyn.guard.tensor_match "L['x']", %[[X]] type "numpy.ndarray" contiguous symbols [0, 1] : tensor<?x?xf32>
# CHECK: dyn.graph_break data_dependent_value "reading a size only the graph knows (dynamic=True, a masked load)"
show("dynamic", dynamir.trace(shapes, x, dynamic=True))

# CHECK-LABEL: == static_shapes
# CHECK: dyn.reshape %{{.*}} : tensor<2x3xf32> -> tensor<6xf32>
# CHECK: dyn.constant dense<3.000000e+00> : tensor<f32>
show("static_shapes", dynamir.trace(shapes, x))


def numpy_promotion(a, i):
    return a + i, i / 2, a * 1.5


# numpy (NEP 50): f32 + i64 array -> f64, i64 / int -> f64, f32 * Python float -> f32.
# CHECK-LABEL: == numpy_promotion
# CHECK: dyn.cast %{{.*}} to f64 : tensor<2x3xf32>
# CHECK: dyn.cast %{{.*}} to f64 : tensor<3xi64>
# CHECK: return {{.*}} : tensor<2x3xf64>, tensor<3xf64>, tensor<2x3xf32>
show("numpy_promotion", dynamir.trace(numpy_promotion, x, np.arange(3)))



def with_dicts(params, x):
    h = x @ params["w"] + params["b"]
    for name, value in params.items():
        h = h * 1
    return {"h": h, "n": len(params)}


# Dict arguments: type and key guards, values guarded by key, dict results keep structure.
# CHECK-LABEL: == dicts
# CHECK: func.func @with_dicts
# CHECK-SAME: dyn.output = "{'h': %0, 'n': 2}"
# CHECK: dyn.guard.type_match "L['params']", "dict"
# CHECK: dyn.guard.dict_keys "L['params']", ["w", "b"]
# CHECK: dyn.guard.tensor_match "L['params']['w']"
# CHECK: dyn.guard.tensor_match "L['params']['b']"
# CHECK: dyn.matmul
# CHECK-COUNT-2: dyn.mul
show("dicts", dynamir.trace(with_dicts, {"w": np.ones((3, 2), np.float32),
                                          "b": np.zeros(2, np.float32)},
                            np.ones(3, np.float32)))
