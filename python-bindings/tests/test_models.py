"""The benchmark's small real models (bench/model_zoo.py) compile whole and give torch eager's
results: no graph break, rtol 1e-4 as the models benchmark reports, and every graph also lowers
for the GPU (ptxas included), the MoE layer's routing by positions only the graph knows
(`torch.where(chosen == e)`, a masked load: parallel generics on the GPU) and its topk (ranks)
included. GRU and LSTM cells unrolled over a sequence compile into one graph too."""

import pathlib
import sys

import numpy as np
import pytest
import torch

import _dynamir
import dynamir

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import model_zoo  # noqa: E402

torch.manual_seed(0)
MODELS = model_zoo.models()


def outputs(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("name", list(MODELS))
def test_model_equals_torch_eager_in_one_graph(name):
    module, inputs, options = MODELS[name]
    module.eval()
    with torch.no_grad():
        want = module(*inputs)
        dynamir.reset()
        compiled = dynamir.compile(module, **options)
        for _ in range(2):
            got = compiled(*inputs)
            for g, w in zip(outputs(got), outputs(want), strict=True):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)
    counters = dynamir.counters()
    assert counters["graph_breaks_hit"] == 0 and counters["eager_runs"] == 0, counters


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_graphs_lower_for_the_gpu(name):
    module, inputs, options = MODELS[name]
    module.eval()
    with torch.no_grad():
        traced = dynamir.trace(module, *inputs,
                               capture_control_flow=options.get("capture_control_flow", False))
    assert not traced.graph_breaks and not traced.eager_reason
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graphs = [f for f in traced.module.functions if "_graph" in f]
    assert graphs
    for graph in graphs:
        library = _dynamir.compile_graph(traced.module._native, graph, "cuda")
        assert pathlib.Path(library).exists(), graph


@pytest.mark.parametrize("cell", [torch.nn.GRUCell, torch.nn.LSTMCell])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_recurrent_cells_unrolled_in_one_graph(cell, bias, dtype):
    layer = cell(5, 7, bias=bias).to(dtype).eval()

    def run(xs, state):
        for x in xs:
            state = layer(x, state)
        return state

    xs = [torch.randn(3, 5, dtype=dtype) for _ in range(4)]
    h = torch.randn(3, 7, dtype=dtype)
    state = h if cell is torch.nn.GRUCell else (h, torch.randn(3, 7, dtype=dtype))
    with torch.no_grad():
        want, got = outputs(run(xs, state)), outputs(dynamir.compile(run)(xs, state))
        assert dynamir.explain(run, xs, state).graph_break_count == 0
    tolerance = 1e-6 if dtype == torch.float32 else 1e-14
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=tolerance, atol=tolerance)
