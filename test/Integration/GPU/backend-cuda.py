# Compiled GPU graphs against numpy: elementwise chains, row reductions, softmax, a graph
# break and a host branch, through dynamir.compile(backend="cuda").
# REQUIRES: cuda-device
# RUN: %python %s | FileCheck %s

import numpy as np

import dynamir

rng = np.random.default_rng(0)


def check(name, fn, *args, **options):
    got = dynamir.compile(fn, backend="cuda", **options)(*args)
    want = fn(*args)
    ok = np.allclose(got, want, rtol=1e-4, atol=1e-5)
    print(f"{name}: {'ok' if ok else 'MISMATCH'} max abs err {np.max(np.abs(got - want)):.2e}")


def chain(x):
    return np.cos(np.sin(x * 2) + 1) * 3


def bias_relu(x, b):
    return np.maximum(x * 2 + b, 0)


def row_sum(x):
    return x.sum(1)


def row_max(x):
    return x.max(1)


def softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def with_break(x):
    y = x * 3
    print("between graphs")
    return y.sum(1)


def branch(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


# CHECK: chain: ok
check("chain", chain, rng.standard_normal(1 << 20).astype(np.float32))
# CHECK: bias_relu: ok
check("bias_relu", bias_relu, rng.standard_normal((256, 512)).astype(np.float32),
      rng.standard_normal(512).astype(np.float32))
# CHECK: row_sum: ok
check("row_sum", row_sum, rng.standard_normal((512, 4096)).astype(np.float32))
# CHECK: row_max: ok
check("row_max", row_max, rng.standard_normal((300, 1000)).astype(np.float32))
# CHECK: softmax: ok
check("softmax", softmax, rng.standard_normal((1024, 1024)).astype(np.float32))
# CHECK: between graphs
# CHECK: between graphs
# CHECK: with_break: ok
check("with_break", with_break, rng.standard_normal((64, 128)).astype(np.float32))
# CHECK: branch: ok
check("branch", branch, rng.standard_normal(4096).astype(np.float32))
# CHECK: branch kept on the device: ok
check("branch kept on the device", branch, rng.standard_normal(4096).astype(np.float32),
      capture_control_flow=True)
# CHECK: odd shapes: ok
check("odd shapes", chain, rng.standard_normal((3, 5)).astype(np.float32))

# Device arrays: no copies in or out; the result stays on the GPU until asked for.
x = rng.standard_normal((512, 1024)).astype(np.float32)
got = dynamir.compile(softmax, backend="cuda")(dynamir.cuda.to_device(x))
# CHECK: device arrays: Array ok
print(f"device arrays: {type(got).__name__.replace('DeviceArray', 'Array')} "
      f"{'ok' if np.allclose(got.numpy(), softmax(x), rtol=1e-4, atol=1e-6) else 'MISMATCH'}")
