"""Advanced indexing by one integer array and the functions that gather (dyn.gather): x[idx],
x[:, [0, 2]], np.take, torch.index_select, F.embedding. Results equal eager in every backend
mode, with no graph break; an index out of bounds is checked at run time (dyn.check) and the
frame then runs eagerly, raising what numpy or torch raises."""

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")
F = torch.nn.functional

from test_tensor_api import same  # noqa: E402  (exact types, dtypes, shapes and values)

MODES = [{}, {"backend": "eager"}, {"capture_control_flow": True}]


def check(f, *args):
    """f compiled in every mode equals eager, with no graph break and one graph."""
    want = f(*args)
    for mode in MODES:
        same(dynamir.compile(f, **mode)(*args), want)
    e = dynamir.explain(f, *args)
    assert e.graph_break_count == 0 and "dyn.gather" in str(e), e


X = np.arange(24.0).reshape(4, 6)
T = torch.arange(24.0).reshape(4, 6)


@pytest.mark.parametrize("case", ["rows", "negative", "columns_list", "ellipsis", "2d_index",
                                  "after_slice", "int32"])
def test_numpy_integer_array_index(case):
    idx = np.array([3, -1, 0, 2])
    f = {
        "rows": lambda x, i: x[i] * 2,
        "negative": lambda x, i: x[-i],
        "columns_list": lambda x, i: x[:, [0, 5, -6]] + 1,
        "ellipsis": lambda x, i: x[..., i],
        "2d_index": lambda x, i: x[i.reshape(2, 2)],
        "after_slice": lambda x, i: x[1:, i[1:]],
        "int32": lambda x, i: x[i.astype(np.int32)],
    }[case]
    check(f, X, idx)


def test_torch_index_and_functions():
    def f(x, i, w):
        return (x[i].relu(), x[:, i], torch.index_select(x, 1, i), x.index_select(0, i[:2]),
                F.embedding(i.reshape(2, 2), w))
    check(f, T, torch.tensor([3, 0, 2, 1]), torch.randn(5, 3))


def test_np_take():
    def f(x, i):
        return np.take(x, i), np.take(x, i % 6, axis=1), x.take([1, -2], axis=0), np.take(x, 7)
    check(f, X, np.array([[0, 23], [5, -1]]))


def test_embedding_module():
    emb = torch.nn.Embedding(10, 4)

    def f(tokens):
        return emb(tokens).sum(1)
    check(f, torch.tensor([[1, 9, 0], [4, 4, 2]]))


def test_the_index_is_computed_in_the_graph():
    def f(x, scores):
        best = scores.argmax(dim=1)
        return x[best] * 2
    check(f, T, torch.randn(3, 4))


@pytest.mark.parametrize("backend", ["cpu", "eager"])
def test_out_of_bounds_raises_as_eagerly(backend):
    def f(x, i):
        return x[i] + 1

    compiled = dynamir.compile(f, backend=backend)
    same(compiled(X, np.array([0, 3])), f(X, np.array([0, 3])))
    assert dynamir.explain(compiled, X, np.array([0, 3])).checks == [
        "indexing by an index out of bounds for size 4"]
    before = dynamir.counters()["failed_checks"]
    for bad in (np.array([0, 4]), np.array([-5, 0])):
        with pytest.raises(IndexError):
            f(X, bad)
        with pytest.raises(IndexError):
            compiled(X, bad)
    assert dynamir.counters()["failed_checks"] == before + 2
    same(compiled(X, np.array([1, -4])), f(X, np.array([1, -4])))  # the same entry again
    assert len(compiled._entries) == 1


def test_out_of_bounds_leaves_the_arguments_as_eager_does():
    # The store before the failing index happens once (eagerly), the one after never.
    def f(x, i):
        x[0] = 100.0
        y = x[i]
        x[1] = -1.0
        return y

    want, got = X.copy(), X.copy()
    with pytest.raises(IndexError):
        f(want, np.array([9]))
    with pytest.raises(IndexError):
        dynamir.compile(f)(got, np.array([9]))
    same(got, want)


def test_index_select_has_no_negative_indices():
    def f(x, i):
        return torch.index_select(x, 0, i)

    with pytest.raises(IndexError):
        f(T, torch.tensor([-1]))
    with pytest.raises(IndexError):
        dynamir.compile(f)(T, torch.tensor([-1]))


def test_result_is_a_copy():
    def f(x, i):
        y = x[i]
        y += 1
        return x, y
    want = f(X.copy(), np.array([0, 0]))
    got = dynamir.compile(f)(X.copy(), np.array([0, 0]))
    same(got, want)


def test_masked_loads_compile():
    # x[mask] (dyn.compress): the selected elements in row-major order, a size only the graph
    # knows; sums and elementwise ops take it, a maximum (which raises for none) breaks.
    def f(x):
        pos = x[x > 5]
        return pos, (pos * 2).sum(), x[x < -100]

    def g(x):
        return torch.sqrt(x[x > 0.5]) + 1, torch.masked_select(x, x > 2)

    want = f(X)
    for mode in MODES:
        same(dynamir.compile(f, **mode)(X), want)
    assert dynamir.explain(f, X).graph_break_count == 0
    t = torch.from_numpy(X.copy())
    want = g(t)
    for mode in MODES:
        got = dynamir.compile(g, **mode)(t)
        assert all(a.shape == b.shape and torch.allclose(a, b, rtol=1e-12) for a, b in zip(got, want))
    with pytest.raises(ValueError):
        dynamir.compile(lambda x: np.max(x[x > 100]))(X)


def test_masks_of_leading_dimensions_select_rows():
    # x[mask] with a mask of x's first dimensions: the subarrays of the others where it is
    # true, stacked (dyn.compress of rows), none or all of them included.
    x3 = np.arange(48.0).reshape(4, 3, 4) - 20

    def rows(x):
        r = x[x[:, 0] > 0]
        return r, r.sum(axis=0), x[x[:, 0] > 1e9] * 2

    def planes(x):
        return x[x.sum(axis=2) > 0], x[np.abs(x[:, 0, 0]) < 100] - 1

    def torch_rows(t):
        return t[t[:, 1] > 3] * 2, t[t[:, 0] < 13, 1:], t[t[:, 0] > 0, ..., -1]

    def with_slices(x):
        m = x[:, 0] > 0
        return x[m, 1:], x[m, -1], x[m, ::2] + 1

    for f, arg in [(rows, X - 10), (planes, x3), (torch_rows, T.clone()), (with_slices, X - 10)]:
        want = f(arg)
        for mode in MODES:
            same(dynamir.compile(f, **mode)(arg), want)
        e = dynamir.explain(f, arg)
        assert e.graph_break_count == 0 and "dyn.compress" in str(e), e


@pytest.mark.parametrize("index", ["apart", "none_between", "zero_d"])
def test_other_advanced_indices_still_break(index):
    # Arrays apart from one another (a slice or None between them) move the result's
    # dimensions first; a 0-d index array is an integer (a view).
    i = np.array([0, 2])
    f = {
        "apart": lambda x: x.reshape(2, 3, 4)[i % 2, :, i],
        "none_between": lambda x: x[i, None, i],
        "zero_d": lambda x: x[np.array(1)],
    }[index]
    want = f(X)
    for mode in MODES:
        same(dynamir.compile(f, **mode)(X), want)
    assert dynamir.explain(f, X).graph_break_count == 1


def test_gathers_and_masked_rows_compile_for_the_gpu():
    import pathlib

    import _dynamir

    def f(x, i):
        return torch.relu(x[i]).sum(1) + F.embedding(i, x)[:, 0]

    def rows(x, i):  # dyn.compress of rows: a scalar loop nest, one GPU thread
        return x[x[:, 0] > 5, 1:].sum(0) * 2  # (results of dynamic sizes stay on the CPU)

    def by_positions(x, i):  # np.nonzero's positions: a gather and a scatter of their count
        r = torch.where(x[:, 0] > 5)[0]
        y = x.clone()
        y[r] += x[r] * 2
        return y

    for fn in (f, rows, by_positions):
        traced = dynamir.trace(fn, T, torch.tensor([3, 0, 2]))
        traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
        graphs = [g for g in traced.module.functions if "_graph" in g]
        assert graphs and ("dyn.check" in str(traced.module)) == (fn is not rows)
        for graph in graphs:
            library = _dynamir.compile_graph(traced.module._native, graph, "cuda")
            assert pathlib.Path(library).exists()


@pytest.mark.parametrize("case", ["pairs", "with_int", "int_first", "lists", "broadcast",
                                  "after_ellipsis"])
def test_several_adjacent_index_arrays(case):
    rows, cols = np.array([3, 0, -1]), np.array([5, -6, 2])
    f = {
        "pairs": lambda x, r, c: x[r, c],
        "with_int": lambda x, r, c: x[r, 1],
        "int_first": lambda x, r, c: x[-2, c],
        "lists": lambda x, r, c: x[[0, 2], [1, 0]] * 2,
        "broadcast": lambda x, r, c: x[r[:, None], c[None, :2]],
        "after_ellipsis": lambda x, r, c: x.reshape(2, 2, 6)[..., r[:2] % 2, c[:2]],
    }[case]
    check(f, X, rows, cols)
    if case == "pairs":
        def g(x, r, c):
            return x[r, c]
        check(g, T, torch.from_numpy(rows), torch.from_numpy(cols))


@pytest.mark.parametrize("case", ["before", "after", "after_pair", "ellipsis", "torch"])
def test_none_beside_index_arrays_is_a_new_dimension(case):
    # numpy keeps the arrays' dimensions where they stand; None adds one of size 1 in place.
    i, j = np.array([3, 0, -1]), np.array([5, -6, 2])
    f = {
        "before": lambda x, i, j: x[None, i],
        "after": lambda x, i, j: x[i, None] + 1,
        "after_pair": lambda x, i, j: x[i, j, None],
        "ellipsis": lambda x, i, j: x.reshape(2, 2, 6)[None, ..., j, None],
        "torch": lambda x, i, j: x[:, None, i[:2] % 4 - 4],
    }[case]
    if case == "torch":
        check(f, T, torch.from_numpy(i), torch.from_numpy(j))
    else:
        check(f, X, i, j)


M = np.array([[0.5, -1.0, 0.0, 2.0], [0.0, 0.0, 3.0, -0.5], [1.0, 0.0, 0.0, 0.0]])


@pytest.mark.parametrize("mask", ["some", "none", "all"])
@pytest.mark.parametrize("case", ["nonzero", "method", "where", "argwhere", "flatnonzero",
                                  "of_floats", "load"])
def test_numpy_nonzero_family(case, mask):
    # Positions of the true elements, as many as only the graph knows (dyn.compress), in
    # row-major order, as int64; indexing by them gathers.
    f = {
        "nonzero": lambda x, m: np.nonzero(m),
        "method": lambda x, m: m.nonzero()[1] * 2,
        "where": lambda x, m: np.where(m),
        "argwhere": lambda x, m: np.argwhere(m),
        "flatnonzero": lambda x, m: np.flatnonzero(m),
        "of_floats": lambda x, m: np.nonzero(x * m),  # NaN counts as nonzero
        "load": lambda x, m: x[np.nonzero(m)] + x[np.nonzero(m)[0]].sum(1),
    }[case]
    m = {"some": M != 0, "none": M > 10, "all": M < 10}[mask]
    x = np.where(M == 2.0, np.nan, M + 1)
    want = f(x, m)
    for mode in MODES:
        same(dynamir.compile(f, **mode)(x, m), want)
    e = dynamir.explain(f, x, m)
    assert e.graph_break_count == 0 and "dyn.compress" in str(e), e


@pytest.mark.parametrize("count", [0, 1, 2])
def test_squeezing_a_count_only_the_graph_knows_depends_on_it(count):
    # A masked load's size may be 1 (it goes) or not (it stays): the squeeze is decided at a
    # break, where the count is known (difftest 3084000074:2 kept it as a size 1).
    y = np.array([[0.9] * count + [0.1] * (3 - count)])
    for f in (lambda y: y[y > 0.5].squeeze(), lambda y: np.squeeze(y[:, y[0] > 0.5], 0),
              lambda y: torch.from_numpy(y)[torch.from_numpy(y) > 0.5].squeeze()):
        want = f(y)
        for mode in MODES:
            got = dynamir.compile(f, **mode)(y)
            assert got.shape == want.shape
            same(got, want)
        assert dynamir.explain(f, y).graph_break_count == 1


@pytest.mark.parametrize("case", ["where", "nonzero", "as_tuple", "method", "argwhere"])
def test_torch_nonzero_family(case):
    f = {
        "where": lambda t: torch.where(t > 0),
        "nonzero": lambda t: torch.nonzero(t > 0),
        "as_tuple": lambda t: torch.nonzero(t, as_tuple=True),
        "method": lambda t: t.nonzero(),
        "argwhere": lambda t: torch.argwhere(t),
    }[case]
    t = torch.from_numpy(M)
    want = f(t)
    for mode in MODES:
        same(dynamir.compile(f, **mode)(t), want)
    assert dynamir.explain(f, t).graph_break_count == 0


def routed(x, gate):
    """The loads and stores of a mixture of experts' routing (bench/model_zoo.py's MoE): the
    tokens each expert chose, by positions only the graph knows, weighted and added back."""
    weights, chosen = torch.topk(torch.softmax(gate, dim=-1), 2, dim=-1)
    out = torch.zeros_like(x)
    for e in range(gate.shape[1]):
        rows, slot = torch.where(chosen == e)
        out[rows] += weights[rows, slot, None] * torch.tanh(x[rows] @ x[rows].T) @ x[rows]
    return out


@pytest.mark.parametrize("experts", [3, 12])  # with 12, some experts get no token
def test_routing_by_positions_the_graph_counts(experts):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 5, generator=g)
    gate = torch.randn(8, experts, generator=g)
    want = routed(x, gate)
    for mode in MODES:
        torch.testing.assert_close(dynamir.compile(routed, **mode)(x, gate), want)
    e = dynamir.explain(routed, x, gate)
    assert e.graph_break_count == 0 and "dyn.scatter" in str(e), e

    def numpy_routed(x, chosen):  # np.add.at's cousin: a store of rows by positions
        out = np.zeros_like(x)
        rows = np.nonzero(chosen == 1)[0]
        out[rows] = x[rows] * 2 - out[rows]
        return out

    c = np.array([1, 0, 1, 1, 0, 2, 1, 0])
    for chosen in (c, c + 5):  # some rows, none
        want = numpy_routed(x.numpy(), chosen)
        for mode in MODES:
            same(dynamir.compile(numpy_routed, **mode)(x.numpy(), chosen), want)


def test_gather_and_take_along_axis():
    def f(x, i):
        return torch.gather(x, 1, i), x.gather(0, i[:, :1] % 4), torch.gather(x, -1, i[:2])
    check(f, T, torch.tensor([[0, 5], [3, 3], [2, 0], [1, 4]]))

    def g(a, i):
        best = np.argmax(a, axis=1, keepdims=True)
        return np.take_along_axis(a, best, axis=1), np.take_along_axis(a, i, 1)
    check(g, np.random.default_rng(0).standard_normal((3, 5)), np.array([[0], [-1], [4]]))
    with pytest.raises(RuntimeError):
        torch.gather(T, 1, torch.tensor([[-1]]))
    with pytest.raises(RuntimeError):
        dynamir.compile(lambda x, i: torch.gather(x, 1, i))(T, torch.tensor([[-1]]))
