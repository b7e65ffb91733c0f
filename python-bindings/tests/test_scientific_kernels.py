"""The benchmark's scientific kernels (bench/scientific.py: stencils, a triangular solve, a
correlation, an n-body step, a complex butterfly, slice convolutions, an image blend, Jacobi
sweeps until a tolerance, conjugate gradients left by `break`) compile whole on the bench's own
inputs and give numpy's results, and every graph also lowers for the GPU (ptxas included),
but the complex butterfly's: GPU graphs have no complex numbers yet, and the lowering says so
(the test fails loudly once that changes), so `backend="cuda"` runs that frame eagerly with
the reason."""

import pathlib
import sys

import numpy as np
import pytest

import _dynamir
import dynamir

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import scientific  # noqa: E402

KERNELS = scientific.kernels()
GPU_REFUSED = {"butterfly": "computes complex numbers, which GPU graphs do not have yet"}


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_equals_numpy_in_one_graph(name):
    fn, inputs = KERNELS[name]
    want = fn(*[np.copy(a) for a in inputs])
    dynamir.reset()
    compiled = dynamir.compile(fn)
    for _ in range(2):
        args = [np.copy(a) for a in inputs]
        got = compiled(*args)
        assert scientific.agrees(got, want)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
        assert all(np.array_equal(a, b) for a, b in zip(args, inputs))  # no kernel stores
    counters = dynamir.counters()
    assert counters["graph_breaks_hit"] == 0 and counters["eager_runs"] == 0, counters


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_graphs_lower_for_the_gpu(name):
    fn, inputs = KERNELS[name]
    traced = dynamir.trace(fn, *inputs)
    assert not traced.graph_breaks and not traced.eager_reason
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graphs = [f for f in traced.module.functions if "_graph" in f]
    assert len(graphs) == 1
    if name in GPU_REFUSED:
        with pytest.raises(RuntimeError, match=GPU_REFUSED[name]):
            _dynamir.compile_graph(traced.module._native, graphs[0], "cuda")
        return
    assert pathlib.Path(_dynamir.compile_graph(traced.module._native, graphs[0],
                                               "cuda")).exists()
