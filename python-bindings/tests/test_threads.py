"""CPU graphs on several threads: large loop nests split into one chunk per thread
(dyn-cpu-parallel) and matrix products shared out among the same OpenMP threads (dyn-blas
threads=N). Results equal torch eager and do not depend on the thread count, chunk boundaries
included; test/Transforms/dyn-cpu-parallel.mlir and dyn-blas.mlir pin the IR."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import _dynamir
import dynamir


@pytest.fixture
def threads():
    """Restores the thread count a test changes."""
    before = dynamir.get_num_threads()
    yield
    dynamir.set_num_threads(before)


def block(x, w1, w2):
    """Products, an activation, a normalization, a softmax and a sum: every kind of loop."""
    h = F.gelu(x @ w1)
    h = F.layer_norm(h, h.shape[-1:])
    scores = torch.softmax(h @ h.transpose(-1, -2), dim=-1)
    return scores @ h @ w2, (h * h).sum()


def inputs(rows=333):
    g = torch.Generator().manual_seed(0)
    # An odd row count: the chunks are uneven and the last is shorter.
    return (torch.randn(3, rows, 256, generator=g), torch.randn(256, 512, generator=g) / 16,
            torch.randn(512, 64, generator=g) / 16)


def run(count, fn, args):
    dynamir.reset()
    dynamir.set_num_threads(count)
    compiled = dynamir.compile(fn)
    out = compiled(*args)
    c = dynamir.counters()
    assert c["graph_breaks_hit"] == 0 and c["eager_runs"] == 0, c
    return out


def test_thread_count_api(threads):
    assert dynamir.get_num_threads() >= 1
    dynamir.set_num_threads(3)
    assert dynamir.get_num_threads() == 3
    with pytest.raises(ValueError):
        dynamir.set_num_threads(0)
    assert dynamir.get_num_threads() == 3


def test_results_do_not_depend_on_the_thread_count(threads):
    args = inputs()
    want = block(*args)
    one = run(1, block, args)
    for count in (2, 3):
        got = run(count, block, args)
        for g, o, w in zip(got, one, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-4)
            # The same loops on every chunk and one BLAS kernel per part: bit-identical.
            np.testing.assert_array_equal(g.numpy(), o.numpy())


def test_numpy_elementwise_and_reductions(threads):
    a = np.random.default_rng(1).standard_normal((517, 1031)).astype(np.float32)

    def kernel(a):
        return np.tanh(a) * 2 + a.max(axis=1, keepdims=True), a.sum(axis=0), (a * a).sum()

    want = kernel(a)
    for count in (1, 2):
        got = run(count, kernel, (a,))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-3)


def test_graph_library_calls_the_runtime_pool_only_when_split(threads):
    """A graph split over threads calls dynamir_parallel (dyn-parallel-calls), whose hook the
    runtime sets: it links no OpenMP runtime of its own."""
    libomp = pathlib.Path("/usr/lib/llvm-22/lib/libomp.so")
    if not libomp.exists():
        pytest.skip("no OpenMP runtime (libomp-22-dev): graphs run on one thread")

    def big(x):
        return torch.sigmoid(x) * x

    x = torch.randn(512, 1024)
    found = {}
    for count in (1, 2):
        dynamir.set_num_threads(count)
        traced = dynamir.trace(big, x)
        traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
        graph = [f for f in traced.module.functions if f.endswith("_graph0")][0]
        library = _dynamir.compile_graph(traced.module._native, graph, "cpu")
        readobj = "/usr/lib/llvm-22/bin/llvm-readobj"
        needed = subprocess.run([readobj, "--needed-libs", library], capture_output=True,
                                text=True, check=True).stdout
        symbols = subprocess.run([readobj, "--dyn-symbols", library], capture_output=True,
                                 text=True, check=True).stdout
        found[count] = ("libomp" in needed, "dynamir_parallel_hook" in symbols)
    assert found == {1: (False, False), 2: (False, True)}


# A fresh process runs a graph of two chunks and reports the OpenMP runtimes it has mapped.
POOL_PROGRAM = """
import sys
import numpy as np
if sys.argv[1] == "torch":
    import torch
import dynamir
dynamir.set_num_threads(2)
f = dynamir.compile(lambda x: np.tanh(x) * 2 + x)
x = np.linspace(-3, 3, 1 << 20, dtype=np.float32)
assert np.allclose(f(x), np.tanh(x) * 2 + x, atol=1e-6)
assert dynamir.counters()["graphs_compiled"] == 1
maps = open("/proc/self/maps").read()
print("libomp" in maps, "libgomp" in maps)
"""


@pytest.mark.parametrize("imported, runtimes", [("numpy", "True False"), ("torch", "False True")])
def test_graphs_share_the_process_openmp_pool(tmp_path, imported, runtimes):
    """With torch imported, a graph's loops run on torch's own libgomp pool (two pools took the
    cores from each other: each one's workers spin after a loop); without it, on libomp."""
    if not pathlib.Path("/usr/lib/llvm-22/lib/libomp.so").exists():
        pytest.skip("no OpenMP runtime (libomp-22-dev): graphs run on one thread")
    env = dict(os.environ, DYNAMIR_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", POOL_PROGRAM, imported], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == runtimes
