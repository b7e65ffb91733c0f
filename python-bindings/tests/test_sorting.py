"""np.sort / np.argsort / ndarray.sort / np.median and torch.sort / argsort / msort / topk /
median in the graph: dyn.sort, a stable sort with NaN greater than every number, run by the
runtime on CPU graphs. Where numpy or torch leave the order of equal elements unspecified
(numpy's default argsort, torch's stable=False, topk, and -0.0 next to 0.0 in the values of an
unstable sort), a run-time check sends lanes with such ties to eager numpy or torch, so results
always equal theirs."""

import pathlib

import numpy as np
import pytest

import _dynamir
import dynamir
from test_library_breadth import check, torch

RNG = np.random.default_rng(11)

NUMPY_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                np.bool_]


def distinct(shape, dtype):
    """Values without ties (bools: as they come), with NaN and infinities among floats."""
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) > 0.5
    n = int(np.prod(shape))
    if np.dtype(dtype).kind == "i":
        values = RNG.permutation(n) - n // 2
    else:
        values = RNG.permutation(n) * 0.75 - n / 3 + 0.125
    values = values.astype(dtype).reshape(shape)
    if np.dtype(dtype).kind == "f" and n > 4:
        values.flat[1], values.flat[3], values.flat[4] = np.nan, np.inf, -np.inf
    return values


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_sort_and_argsort(dtype):
    x = distinct((5, 9), dtype)
    check(lambda a: (np.sort(a), np.sort(a, axis=0), np.sort(a, axis=None)), x,
          backends=("llvm", "eager"))
    if dtype != np.bool_:  # bools tie
        check(lambda a: (np.argsort(a), np.argsort(a, axis=0), np.argsort(a, axis=None)), x,
              backends=("llvm", "eager"))
    check(lambda a: np.argsort(a, kind="stable") + np.argsort(a, axis=0, stable=True), x,
          backends=("llvm", "eager"))


def test_ties_of_an_unstable_sort_run_eagerly():
    # numpy's default argsort and torch.sort(stable=False) order equal elements their own way
    # past 16 elements; such lanes fail the graph's check and run in numpy and torch.
    ties = RNG.integers(0, 3, (4, 40))
    check(lambda a: np.argsort(a), ties)
    check(lambda a: np.argsort(a, kind="stable"), ties)  # stable: no check
    report = dynamir.explain(lambda a: np.argsort(a), ties)
    assert report.graph_break_count == 0 and "np.argsort of equal elements" in str(report)
    check(lambda x: torch.sort(x, descending=True), torch.from_numpy(ties))
    # numpy's vectorized sort makes 0.0 and -0.0 into each other: equal values, other signs.
    zeros = np.array([0.0, -0.0, 1.0] * 7)
    check(lambda a: np.sort(a), zeros)
    check(lambda a: np.sort(a, kind="stable"), zeros)


def test_ndarray_sort_sorts_in_place():
    def f(a):
        r = a.sort(axis=0)
        a.sort()
        return r, a * 2

    x = distinct((4, 6), np.float64)
    check(f, x.copy())
    y = x.copy()
    assert dynamir.compile(f)(y) is not None and np.array_equal(y, np.sort(np.sort(x, 0)),
                                                                 equal_nan=True)
    check(lambda a: a.sort(axis=None), x.copy(), breaks=1)  # numpy raises TypeError


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64,
                                   torch.int32, torch.int8])
def test_torch_sort_argsort_msort(dtype):
    x = torch.from_numpy(distinct((6, 20), np.float64)).to(dtype)
    check(lambda t: (torch.sort(t), t.sort(dim=0, descending=True), torch.argsort(t, dim=0),
                     torch.argsort(t, descending=True, stable=True), torch.msort(t)), x,
          backends=("llvm", "eager"))


def test_topk():
    x = torch.from_numpy(distinct((5, 12), np.float32))
    check(lambda t: (torch.topk(t, 3), t.topk(2, dim=0, largest=False), torch.topk(t, 0),
                     torch.topk(t, 12).values.sum(-1)), x, backends=("llvm", "eager"))
    # a tie at the k-th element decides which position torch returns: eager
    check(lambda t: torch.topk(t, 2), torch.tensor([[3.0, 1.0, 3.0, 3.0] * 5]))
    check(lambda t: torch.topk(t, 2, sorted=False), x, breaks=1)
    check(lambda t: torch.topk(t, 13), x, breaks=1)  # torch raises


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8,
                                   np.bool_])
def test_numpy_median(dtype):
    odd, even = distinct((5, 7), dtype), distinct((6, 8), dtype)
    for x in (odd, even):
        check(lambda a: (np.median(a), np.median(a, axis=0), np.median(a, axis=-1),
                         np.median(a, axis=1, keepdims=True), np.median(a, keepdims=True)), x,
              backends=("llvm", "eager"))
    if np.dtype(dtype).kind == "f":  # NaN lanes are NaN
        y = distinct((4, 6), dtype)
        y[2] = np.arange(6)
        check(lambda a: np.median(a, axis=1), y)
    check(lambda a: np.median(a, axis=(0, 1)), odd, breaks=1)


def test_torch_median():
    x = torch.from_numpy(distinct((4, 5), np.float32))
    check(lambda t: (torch.median(t), t[1:, 2:].median(), torch.median(t.int())), x,
          backends=("llvm", "eager"))
    check(lambda t: torch.median(t, 0), x, breaks=1)  # a position: not modelled


def test_sort_in_a_model():
    # Mixture-of-experts routing: the top-2 of a softmax per token.
    def route(x, w):
        scores = torch.softmax(x @ w, dim=-1)
        weights, chosen = torch.topk(scores, 2, dim=-1)
        return weights / weights.sum(-1, keepdim=True), chosen

    x, w = torch.randn(16, 32), torch.randn(32, 4)
    check(route, x, w, rtol=1e-6, atol=1e-7, backends=("llvm", "eager"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint8, np.uint64, np.bool_])
def test_short_lanes_sort_as_ranks(dtype):
    # Lanes of at most 16 elements are sorted by ranks in the graph: stable among equal
    # elements (NaN among NaNs, -0.0 next to 0.0), NaN last ascending and first descending,
    # the extremes of each integer width in order.
    if np.dtype(dtype) == np.bool_:
        x = RNG.random((6, 11)) > 0.5
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = RNG.integers(0, 4, (6, 11)).astype(dtype)
        x[:, 0], x[:, 5] = info.max, info.min
    else:
        x = RNG.integers(-2, 3, (6, 11)).astype(dtype)
        x[0, 3] = x[1, 2] = x[1, 7] = np.nan
        x[2, 1], x[2, 4] = -0.0, 0.0
        x[3, 0], x[3, 9] = np.inf, -np.inf
    assert "dyn.sort" in str(dynamir.trace(lambda a: np.sort(a), x).module)
    check(lambda a: (np.sort(a, kind="stable"), np.argsort(a, kind="stable"),
                     np.argsort(a, axis=0, kind="stable")), x, backends=("llvm", "eager"))
    if np.dtype(dtype) in (np.float32, np.float64, np.int8, np.uint8):
        t = torch.from_numpy(x)
        check(lambda a: torch.sort(a, descending=True, stable=True), t, backends=("llvm", "eager"))


@pytest.mark.parametrize("n", [8, 64])
def test_gpu_graphs_sort_short_lanes_only(n):
    # Lanes of at most 16 elements are ranks, which GPU graphs compute; longer ones call the
    # runtime's sort, which they do not have.
    traced = dynamir.trace(lambda a: np.sort(a) * 2, distinct((n,), np.float32))
    assert "dyn.sort" in str(traced.module)
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graph = next(name for name in traced.module.functions if name.endswith("_graph0"))
    if n > 16:
        with pytest.raises(RuntimeError, match="the runtime's sort"):
            _dynamir.compile_graph(traced.module._native, graph, "cuda")
    else:
        assert pathlib.Path(_dynamir.compile_graph(traced.module._native, graph, "cuda")).exists()


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_long_lanes_sort_by_keys(dtype):
    # Lanes of 64 elements and more take the runtime's radix sort of order-preserving keys:
    # stable, NaN last (first when descending), -0.0 and 0.0 equal and kept in order, the
    # extremes of every integer width.
    x = distinct((3, 700), dtype)
    if np.dtype(dtype).kind == "f":
        x[0, ::7] = 0.0
        x[0, ::11] = -0.0
        x[1, ::5] = np.nan
    elif np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        x[0, ::9], x[0, ::13] = info.min, info.max
        x[1] = x[1] % 5  # many ties
    check(lambda a: (np.sort(a, kind="stable"), np.argsort(a, axis=-1, kind="stable"),
                     np.argsort(a.T, axis=0, kind="stable")), x, backends=("llvm", "eager"))
    if dtype not in (np.bool_,):
        t = torch.from_numpy(x)
        check(lambda t: (torch.sort(t, descending=True, stable=True),
                         torch.argsort(t, dim=0, stable=True)), t, backends=("llvm", "eager"))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8])
def test_numpy_quantile_and_percentile(dtype):
    # numpy's own steps in numpy's dtypes: a Python float q becomes a's float dtype (the
    # interpolation of float32 data runs in float32), a list of q float64.
    for shape in [(7,), (5, 9)]:
        x = distinct(shape, dtype)
        if np.dtype(dtype).kind == "f":
            x.flat[1] = 0.5  # no NaN here: a NaN lane's quantile is NaN, tested below
        check(lambda a: (np.percentile(a, 37), np.percentile(a, [1, 50, 99]),
                         np.quantile(a, 0.3), np.quantile(a, (0.0, 0.25, 1.0), axis=-1),
                         np.percentile(a, 90, axis=0), np.quantile(a, 0.5, axis=-1, keepdims=True),
                         np.percentile(a, 12.5, keepdims=True)), x, backends=("llvm", "eager"))
    if np.dtype(dtype).kind == "f":
        y = distinct((4, 6), dtype)
        y[2] = np.arange(6)
        check(lambda a: (np.quantile(a, 0.4, axis=1), np.percentile(a, [10, 60], axis=1)), y)
    x = distinct((5, 9), dtype)
    check(lambda a: np.quantile(a, 0.5, method="nearest"), x, breaks=1)
    check(lambda a: np.quantile(a, 1.5), x, breaks=1)  # numpy raises ValueError


def test_quantile_edges_keep_numpy_signs_and_nans():
    # At or past the last element numpy measures the weight from index -1: the sign of a zero
    # and inf - inf (NaN) come out as numpy's (difftest 290600011:12).
    for x in (np.array([[-0.0], [1.5]]), np.array([[np.inf], [-0.0]]), np.array([1.0, np.inf]),
              np.array([-np.inf, -0.0, 3.0])):
        check(lambda a: (np.quantile(a, [0.2, 0.9], axis=-1), np.percentile(a, 100),
                         np.quantile(a, 1.0, axis=0)), x, backends=("llvm", "eager"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.uint8])
def test_torch_cummax_and_cummin_with_their_positions(dtype):
    """The running extreme and where it was last taken: ties move the position, NaN takes it
    and keeps it (torch's rule)."""
    x = torch.tensor([[1, 3, 3, 0, 2, 5, 5], [2, 2, 1, 0, 7, 7, 1], [4, 4, 4, 4, 4, 4, 4]],
                     dtype=torch.float64).to(dtype)
    if dtype.is_floating_point:
        x[0, 3] = float("nan")
        x[1, 1] = -0.0
    for dim in (0, 1, -1):
        check(lambda x: (torch.cummax(x, dim), x.cummin(dim=dim), torch.cummax(x, dim).indices),
              x)
    check(lambda x: torch.cummin(x, 0), x[:, :1].clone())  # one element per lane
