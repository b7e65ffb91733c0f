"""dynamir.compile against eager numpy/torch: results, caching, recompiles, breaks, explain."""

import sys

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")

from models import TestNet  # noqa: E402


def close(a, b):
    return np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_seed_testnet_matches_eager_and_compiles_branches_lazily():
    torch.manual_seed(0)
    model = TestNet()
    compiled = dynamir.compile(model)
    neg = dynamir.explain(compiled, torch.ones(3) * -1.0)
    assert isinstance(neg.result, torch.Tensor)
    assert close(neg.result, model(torch.ones(3) * -1.0).detach())
    assert neg.kernels_run_during_tracing == 0
    assert neg.graph_break_count == 0 and neg.graph_count == 5
    # sin and cos were traced (both sides of each if) but never compiled on -1.
    never = {tuple(neg.ops_per_graph[g]) for g in neg.never_compiled}
    assert never == {("dyn.sin",), ("dyn.cos",)}
    assert neg.host_syncs == 2

    pos = dynamir.explain(compiled, torch.ones(3))
    assert close(pos.result, model(torch.ones(3)).detach())
    assert pos.never_compiled == []  # the other branches compiled on first use
    c = dynamir.counters()
    assert c["frames_traced"] == 1 and c["recompiles"] == 0 and c["cache_hits"] == 1


def test_capture_control_flow_is_one_graph():
    torch.manual_seed(0)
    model = TestNet()
    e = dynamir.explain(dynamir.compile(model, capture_control_flow=True), torch.ones(3))
    assert e.graph_count == 1 and e.graph_break_count == 0 and e.host_syncs == 0
    assert close(e.result, model(torch.ones(3)).detach())


def test_numpy_chain_and_types():
    @dynamir.compile
    def f(x, y):
        z = np.cos(np.sin(x * 2) + 1) * 3
        return z, (x * y).sum(), np.maximum(x, y).max(axis=0)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    y = rng.standard_normal((64, 32)).astype(np.float32)
    got = f(x, y)
    want = f.__wrapped__(x, y)
    assert isinstance(got, tuple) and isinstance(got[0], np.ndarray)
    assert got[0].dtype == np.float32 and close(got[0], want[0])
    assert np.isscalar(got[1]) and close(got[1], want[1])
    assert close(got[2], want[2])


def test_inputs_are_never_written():
    def f(x, w, b):
        return torch.nn.functional.linear(x, w, b)

    w, b = torch.randn(4, 3), torch.randn(4)
    b0 = b.clone()
    compiled = dynamir.compile(f)
    for _ in range(2):
        assert close(compiled(torch.ones(3), w, b), f(torch.ones(3), w, b))
    assert torch.equal(b, b0)


def test_scalar_arguments_recompile_and_count():
    @dynamir.compile
    def f(x, n):
        for i in range(n):
            x = x + i
        return x

    x = np.ones(3, np.float32)
    assert close(f(x, 3), x + 3)
    assert close(f(x, 3), x + 3)
    assert close(f(x, 4), x + 6)
    c = dynamir.counters()
    assert c["recompiles"] == 1 and c["cache_hits"] == 1
    assert c["guard_failures"] == ["L['n']: expected the value 3, got 4"]


def test_new_shapes_recompile():
    f = dynamir.compile(lambda x: x * 2)
    f(np.ones(3, np.float32))
    f(np.ones(4, np.float32))
    assert dynamir.counters()["recompiles"] == 1
    assert "expected size 3 in dimension 0, got 4" in dynamir.counters()["guard_failures"][0]


def test_large_temporaries_come_from_the_pool():
    # y has two consumers, so the graph materializes it: a 16 MiB temporary per call.
    def f(x):
        y = np.sin(x) * 2
        return y.sum(axis=1) + y.max(axis=1)

    x = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    g = dynamir.compile(f)
    for _ in range(3):
        assert np.allclose(g(x), f(x), rtol=1e-4, atol=1e-3)
    assert dynamir.counters()["temporaries_reused"] == 2
    import _dynamir
    assert _dynamir.temporary_pool()["cached_bytes"] >= x.nbytes
    dynamir.reset()
    assert _dynamir.temporary_pool() == {"reused": 0, "allocated": 0, "cached_bytes": 0}


def test_dynamic_results_are_returned_to_the_pool():
    # With dynamic=True the graph allocates its result; the array hands it back when dropped.
    f = dynamir.compile(lambda a: np.sin(a) * 2 + 1, dynamic=True)
    for n in (1 << 20, 1 << 20, 3 << 19):
        a = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        assert close(f(a), np.sin(a) * 2 + 1)
    assert dynamir.counters()["recompiles"] == 0
    assert dynamir.counters()["temporaries_reused"] == 1


def test_wide_row_reductions_compile():
    # Rows of 4096: sums are split into blocks (not the keepdim ones, which once produced an
    # invalid op whose verification crashed the process) and read in memory order.
    x = np.random.default_rng(3).standard_normal((64, 4096)).astype(np.float32)
    programs = [
        lambda x: np.exp(x - x.max(axis=1, keepdims=True))
        / np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True),
        lambda x: x.sum(axis=1),
        lambda x: x.mean(axis=1, keepdims=True),
        lambda x: (np.sin(x) * 2).sum(axis=1) + x.max(axis=1),
    ]
    for f in programs:
        # Row sums of 4096 unit-scale terms: float32 rounding alone reaches ~1e-4 absolute
        # (near-zero sums make a relative bound meaningless).
        assert np.allclose(dynamir.compile(f)(x), f(x), rtol=1e-5, atol=1e-3)
    assert dynamir.counters()["eager_runs"] == 0


def test_recompile_limit_falls_back_to_eager():
    # A slice bound is a constant of the trace: every new n recompiles.
    f = dynamir.compile(lambda x, n: x[:n] * 2)
    f.recompile_limit = 2
    x = np.ones(8, np.float32)
    with pytest.warns(RuntimeWarning, match="recompile limit"):
        for n in range(1, 5):
            assert close(f(x, n), x[:n] * 2)
    assert dynamir.counters()["eager_runs"] >= 1


def test_changing_numbers_become_inputs_of_the_graph():
    # n only scales the tensor: after its value changes once, the graph takes it as an input.
    f = dynamir.compile(lambda x, n: x * n)
    x = np.ones(2, np.float32)
    for n in range(6):
        assert close(f(x, n), x * n)
    assert dynamir.counters()["recompiles"] == 1


def test_graph_break_runs_eagerly_with_prints_once_in_order(capsys):
    @dynamir.compile
    def f(x):
        y = x + 1
        print("once", y)
        dynamir.graph_break()
        print("twice")
        return y * 2

    x = np.ones(3, np.float32)
    assert close(f(x), (x + 1) * 2)
    assert capsys.readouterr().out == "once [2. 2. 2.]\ntwice\n"
    e = dynamir.explain(f, x)
    assert e.graph_break_count == 1 and e.break_reasons[0].kind == "requested"
    assert capsys.readouterr().out == "once [2. 2. 2.]\ntwice\n"


def test_in_place_updates_follow_eager_aliasing():
    def update_argument(x):
        x += 1
        return x * 2

    def update_temporary(x):
        y = x * 2
        alias = y
        y += 1
        return alias

    def update_viewed_temporary(x):
        y = x * 2
        view = y[1:]
        y += 1
        return view

    def extend_list(x):
        parts = [x]
        parts += [x * 2]
        return parts

    for fn in (update_argument, update_temporary, update_viewed_temporary, extend_list):
        dynamir.reset()
        a = np.arange(4, dtype=np.float32)
        b = a.copy()
        got, want = dynamir.compile(fn)(a), fn(b)
        assert np.array_equal(np.asarray(got), np.asarray(want)), fn.__name__
        assert np.array_equal(a, b), fn.__name__  # the caller's array changed exactly as eagerly

    # A temporary the trace made and nothing else holds is updated inside the graph.
    e = dynamir.explain(update_temporary, np.ones(2, np.float32))
    assert e.graph_break_count == 0
    # So is the caller's own array: the host writes its final value back (checked above).
    e = dynamir.explain(update_argument, np.ones(2, np.float32))
    assert e.graph_break_count == 0
    assert [g.source for g in e.guards if " written " in g.text] == ["L['x']"], e.guards


def test_appends_to_a_callers_list_happen():
    def f(x, out):
        out.append(x.sum())
        return x * 2

    got, want = [], []
    x = np.ones(3, np.float32)
    dynamir.compile(f)(x, got)
    f(x, want)
    assert got == want == [3.0]


def test_fullgraph_raises_graph_break_error():
    def f(x, log):
        print("side effect", file=log)
        return x

    with pytest.raises(dynamir.GraphBreakError, match=r"side_effect.*test_compile.py:\d+"):
        dynamir.compile(f, fullgraph=True)(np.ones(2), sys.stderr)


def test_eager_only_frames_run_eagerly():
    f = dynamir.compile(lambda x: x * 2)
    z = np.ones(2, np.clongdouble)  # complex256: no dyn type
    assert np.array_equal(f(z), z * 2)
    assert dynamir.counters()["eager_runs"] == 1


def test_sequential_and_dict_outputs():
    torch.manual_seed(0)
    seq = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    x = torch.randn(5, 4)
    assert close(dynamir.compile(seq)(x), seq(x).detach())

    @dynamir.compile
    def f(d):
        return {"s": d["a"] + d["b"], "n": len(d)}

    out = f({"a": np.ones(2), "b": np.full(2, 2.0)})
    assert out["n"] == 2 and close(out["s"], np.full(2, 3.0))


def test_to_dot_draws_graphs_branches_and_breaks():
    torch.manual_seed(0)
    e = dynamir.explain(TestNet(), torch.ones(3) * -1.0)
    dot = e.to_dot()
    assert dot.startswith("digraph dynamir {") and "shape=diamond" in dot
    assert "style=dashed" in dot  # the never-compiled sin/cos graphs


DISK_CACHE_SCRIPT = """
import numpy as np, dynamir
f = dynamir.compile(lambda x: np.cos(np.sin(x * 2) + 1) * 3)
x = np.linspace(-1, 1, 100, dtype=np.float32)
assert np.allclose(f(x), np.cos(np.sin(x * 2) + 1) * 3, rtol=1e-5, atol=1e-6)
c = dynamir.counters()
print(c["graphs_compiled"], c["graphs_from_disk_cache"])
"""


def test_persistent_cache_serves_a_new_process(tmp_path):
    import subprocess
    import sys

    env = dict(__import__("os").environ, DYNAMIR_CACHE_DIR=str(tmp_path))
    run = lambda: subprocess.run([sys.executable, "-c", DISK_CACHE_SCRIPT], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
    assert run() == ["1", "0"]  # compiled and stored
    assert run() == ["1", "1"]  # loaded from disk by another process
    assert len(list(tmp_path.glob("*.so"))) == 1


def test_large_outputs_are_recycled_only_when_dropped():
    f = dynamir.compile(lambda x: x * 2)
    x = np.arange(1 << 20, dtype=np.float32)  # 4 MiB: above the recycling threshold
    a = f(x)
    b = f(x)  # `a` is still alive: b must be a new buffer
    assert not np.shares_memory(a, b)
    address = b.__array_interface__["data"][0]
    del b
    c = f(x)  # nothing else holds the previous result: its memory is reused
    assert c.__array_interface__["data"][0] == address
    assert np.array_equal(a, x * 2) and np.array_equal(c, x * 2)


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_value_returned_twice(dynamic):
    # One graph result at several positions: buffer-results-to-out-params crashed (static
    # shapes) and the runtime freed the one buffer twice (dynamic shapes).
    def f(a):
        b = a + 1
        return b, b, a, np.maximum(b, b)

    compiled = dynamir.compile(f, dynamic=dynamic)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):
        for got, want in zip(compiled(a), f(a)):
            assert np.array_equal(got, want)


def test_dynamic_shapes_do_not_recompile():
    def f(x, y):
        z = np.cos(x) * 2 + y
        return z, z.sum(axis=0), (x * y).reshape(-1)

    compiled = dynamir.compile(f, dynamic=True)
    for n in (3, 7, 1000):
        x = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
        y = np.ones((n, 4), np.float32)
        for got, want in zip(compiled(x, y), f(x, y)):
            assert got.shape == want.shape
            assert np.allclose(got, want, rtol=1e-5, atol=1e-5)
    c = dynamir.counters()
    assert c["frames_traced"] == 1 and c["recompiles"] == 0 and c["cache_hits"] == 2
    # Rank and dtype are still guarded.
    compiled(np.ones((2, 4, 1), np.float32), np.ones((2, 4, 1), np.float32))
    assert dynamir.counters()["recompiles"] == 1


def test_numpy_scalar_arguments_hit_the_cache():
    f = dynamir.compile(lambda x, s: x * s)
    x = np.ones(3, np.float32)
    for _ in range(3):
        assert close(f(x, np.float64(2.0)), x * 2)
    assert close(f(x, 2.0), x * 2)  # a Python float is another type: one recompile
    c = dynamir.counters()
    assert c["cache_hits"] == 2 and c["recompiles"] == 1
    assert c["guard_failures"] == ["L['s']: expected a numpy.float64, got float"]


class Block(torch.nn.Module):
    """A transformer-style MLP block: LayerNorm, Linear, GELU, Dropout (eval), residual."""

    def __init__(self, width=16, approximate="none"):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.act = torch.nn.GELU(approximate=approximate)
        self.down = torch.nn.Linear(4 * width, width)
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x):
        h = self.drop(self.down(self.act(self.up(self.norm(x)))))
        return x + h


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_transformer_style_block_matches_torch(approximate):
    torch.manual_seed(0)
    block = Block(approximate=approximate).eval()
    x = torch.randn(8, 16)
    with torch.no_grad():
        want = block(x)
    got = dynamir.compile(block)(x)
    assert dynamir.counters()["eager_runs"] == 0
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-5)


class Gated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x, *, gate=None, scale=1.0):
        y = self.proj(x) * scale
        return y if gate is None else y * gate.sigmoid()


def test_keyword_arguments_of_a_module_call():
    # A user module's forward takes them as any inlined call; torch.nn's layers break.
    torch.manual_seed(0)
    block, x = Gated().eval(), torch.randn(2, 4)

    def f(m, x):
        return m(x, gate=x, scale=0.5) + m(x)

    assert torch.allclose(dynamir.compile(f)(block, x), f(block, x), rtol=1e-5, atol=1e-6)
    assert dynamir.explain(f, block, x).graph_break_count == 0

    def layer(m, x):
        return m.proj(input=x)

    e = dynamir.explain(layer, block, x)
    assert "keyword arguments to a call of torch.nn.modules.linear.Linear" in str(e)
    assert torch.allclose(dynamir.compile(layer)(block, x), layer(block, x))


def test_more_library_functions_match_eager():
    def torch_fn(x, y):
        z = torch.stack([x, y], dim=1) * torch.nn.functional.silu(x).unsqueeze(1)
        w = torch.zeros_like(x) + x.clone().contiguous() * x.size(0)
        return z, w, torch.nn.functional.layer_norm(y, (y.size(-1),)), torch.ones_like(y)

    def numpy_fn(x, y):
        return np.stack([x, y], axis=0).sum(axis=0) * x.size, np.zeros_like(x) + np.full_like(y, 2)

    x, y = torch.randn(5, 4), torch.randn(5, 4)
    for got, want in zip(dynamir.compile(torch_fn)(x, y), torch_fn(x, y)):
        assert torch.allclose(got, want, rtol=1e-4, atol=1e-5)
    a, b = x.numpy(), y.numpy()
    for got, want in zip(dynamir.compile(numpy_fn)(a, b), numpy_fn(a, b)):
        assert np.allclose(got, want, rtol=1e-5, atol=1e-6)
    assert dynamir.counters()["eager_runs"] == 0


@pytest.mark.parametrize("backend", ["cpu", "eager"])
def test_trunc_declared_by_one_line_matches_numpy_and_torch(backend):
    # dyn.trunc is its one line in DynElementwiseOps.td (docs/architecture.md: adding an
    # elementwise op).
    x = np.array([-2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.9, 6e4, np.inf, -np.inf, np.nan])
    f = dynamir.compile(lambda v: np.trunc(v), backend=backend)
    for dtype in (np.float16, np.float32, np.float64):
        got = f(x.astype(dtype))
        want = np.trunc(x.astype(dtype))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all()
    # numpy 2 and torch round integers to themselves; torch has no trunc of bools.
    for ints in (np.arange(-3, 3), np.array([True, False])):
        got = f(ints)
        assert got.dtype == ints.dtype and (got == ints).all()
    t = torch.tensor(x, dtype=torch.float32)
    g = dynamir.compile(lambda v: (torch.trunc(v), v.trunc()), backend=backend)
    for got in g(t):
        assert torch.equal(got.isnan(), t.isnan())
        assert torch.equal(got.nan_to_num(), torch.trunc(t).nan_to_num())
    assert dynamir.counters()["eager_runs"] == 0


def test_dropout_in_training_mode_breaks_and_runs_eagerly():
    torch.manual_seed(0)
    block = Block().train()
    e = dynamir.explain(block, torch.randn(2, 16))
    assert [b.reason for b in e.break_reasons] == ["nn.Dropout in training mode"]


def test_clip_square_var_std_match_eager():
    def np_fn(x):
        return (np.clip(x, -0.5, 0.5), np.square(x), x.var(axis=0), x.std(),
                np.var(x, axis=1, ddof=1, keepdims=True))

    def torch_fn(t):
        return (torch.clamp(t, min=0.0), t.var(dim=1), t.std(), t.var(dim=0, unbiased=False),
                t.clamp(max=0.1))

    x = np.random.default_rng(3).standard_normal((6, 5)).astype(np.float32)
    for got, want in zip(dynamir.compile(np_fn)(x), np_fn(x)):
        assert np.allclose(got, want, rtol=1e-5, atol=1e-6)
    t = torch.from_numpy(x)
    for got, want in zip(dynamir.compile(torch_fn)(t), torch_fn(t)):
        assert torch.allclose(got, want, rtol=1e-5, atol=1e-6)
    assert dynamir.counters()["eager_runs"] == 0


def test_matrix_products_through_blas_match_numpy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    w = rng.standard_normal((512, 128)).astype(np.float32)
    b = rng.standard_normal(128).astype(np.float32)
    programs = [
        lambda x, w, b: np.maximum(x @ w + b, 0),   # bias after the product
        lambda x, w, b: x[3:] @ w,                   # A starts inside its buffer
        lambda x, w, b: (x @ w).T @ x,               # a product of a product
        lambda x, w, b: x @ w[:, :64],               # B's rows longer than N
    ]
    for fn in programs:
        dynamir.reset()
        # With torch imported the products run in torch's MKL, whose float32 sums round
        # otherwise than numpy's OpenBLAS (which kernel MKL picks depends on the CPU): a
        # tolerance on the scale of the result, far below what a wrong layout gives.
        got, want = dynamir.compile(fn)(x, w, b), fn(x, w, b)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    # float64 products go to dgemm (numpy's own, or torch's MKL once torch is imported, as it
    # is here): BLAS sums (a loop nest differed by 2e-13 here, and was 16x slower).
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for fn in programs:
        dynamir.reset()
        got, want = dynamir.compile(fn)(x64, w64, b.astype(np.float64)), fn(x64, w64, b)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    linear = torch.nn.Linear(512, 128)
    with torch.no_grad():
        want = linear(torch.from_numpy(x))
    assert torch.allclose(dynamir.compile(linear)(torch.from_numpy(x)), want, rtol=1e-4,
                          atol=1e-4)


def test_with_torch_no_grad_is_traced():
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    x = torch.randn(3, 4)

    def infer(m, x):
        with torch.no_grad():
            y = m(x)
        return y * 2

    # The parameters require grad and autograd is on: read only inside no_grad, they are
    # inputs of the graph, and the result does not require grad, as eagerly.
    grad = torch.enable_grad()
    grad.__enter__()
    assert model[0].weight.requires_grad
    e = dynamir.explain(dynamir.compile(infer), model, x)
    assert e.graph_count == 1 and e.graph_break_count == 0, e
    got, want = dynamir.compile(infer)(model, x), infer(model, x)
    assert torch.allclose(got, want) and got.requires_grad is want.requires_grad is False

    def outside(m, x):
        with torch.no_grad():
            w = m[0].weight * 1
        return m[0].weight + w  # autograd records this eagerly: the frame runs eagerly

    got, want = dynamir.compile(outside)(model, x), outside(model, x)
    assert got.requires_grad and want.requires_grad and torch.equal(got, want)

    def prints_inside(m, x):
        with torch.no_grad():
            y = m(x)
            print("sum", float(y.sum()))
            z = m(x) + y
        return z

    got, want = dynamir.compile(prints_inside)(model, x), prints_inside(model, x)
    assert torch.allclose(got, want) and got.requires_grad is want.requires_grad is False
    grad.__exit__(None, None, None)


def test_module_settings_and_hooks_are_guarded():
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    x = torch.randn(2, 4)
    f = dynamir.compile(lambda m, x: m(x))
    with torch.no_grad():
        model.eval()
        assert torch.allclose(f(model, x), model(x))
        model.train()  # Dropout now drops: the traced identity must not be reused
        torch.manual_seed(0)
        want = model(x)
        torch.manual_seed(0)
        assert torch.allclose(f(model, x), want)
        model.eval()
        model[0].register_forward_hook(lambda mod, args, out: out * 3)
        assert torch.allclose(f(model, x), model(x))


def test_early_return_stays_on_the_device():
    """`if p.max() > t: return p` with the rest of the frame after it: with
    capture_control_flow=True both ends of the frame are the two sides of one dyn.if (one
    graph, no host sync), and each input takes the side eager takes."""
    torch.manual_seed(0)
    head, tail = torch.nn.Linear(8, 4), torch.nn.Linear(8, 4)

    def exit_early(x, threshold):
        p = torch.softmax(head(x), dim=-1)
        if p.max() > threshold:
            return p
        y = torch.tanh(x) * 2
        return torch.softmax(tail(y), dim=-1)

    compiled = dynamir.compile(exit_early, capture_control_flow=True)
    for scale, threshold in ((10.0, 0.5), (0.01, 0.5), (10.0, 1.5)):
        x = torch.randn(2, 8) * scale
        e = dynamir.explain(compiled, x, threshold)
        assert e.graph_count == 1 and e.graph_break_count == 0 and e.host_syncs == 0
        assert close(e.result, exit_early(x, threshold))

    def returns_only_on_one_side(x):
        if x.sum() > 0:
            return x * 2
        x = x + 1
        return [x]  # a list, not a tensor: the sides disagree, the branch is a break

    compiled = dynamir.compile(returns_only_on_one_side, capture_control_flow=True)
    for x in (torch.ones(3), -torch.ones(3)):
        got, want = compiled(x), returns_only_on_one_side(x)
        assert type(got) is type(want)
        assert close(torch.as_tensor(got[0] if isinstance(got, list) else got),
                     torch.as_tensor(want[0] if isinstance(want, list) else want))


def test_ir_the_passes_reject_runs_eagerly_with_the_reason(monkeypatch):
    # A tracer bug that builds an op its verifier rejects must not fail the user's call.
    def rejected(self, pipeline):
        raise dynamir.MLIRError("'dyn.cummax' op operand #0 must be ... (a tracer bug)")

    monkeypatch.setattr(dynamir.ir.Module, "run_pipeline", rejected)

    def f(x):
        return np.maximum.accumulate(x) * 2

    x = np.array([1.0, 3.0, 2.0])
    compiled = dynamir.compile(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly: .*a tracer bug"):
        assert np.array_equal(compiled(x), f(x))
    assert np.array_equal(compiled(x), f(x))  # eagerly from now on, without a new warning
    assert dynamir.counters()["eager_runs"] == 2
    with pytest.raises(dynamir.GraphBreakError, match="compilation failed"):
        dynamir.compile(f, fullgraph=True)(x)
