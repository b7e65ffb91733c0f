"""for loops over ranges left by `break` on a tensor test (`if err < tol: break`), traced once
as a dyn.while that counts the iterations (lib/Frontend/Loops.cpp): one graph, no host
decision per iteration; where the break is taken mid-body, the iteration yields the values at
the break. A loop that cannot be captured so is what it was before. Every program is compared
with eager in each backend mode, arguments included, on inputs that break early, late, at
once and never."""

import pathlib

import _dynamir
import numpy as np
import pytest

import dynamir
from test_loops import same
from test_while_loops import check

torch = pytest.importorskip("torch")


def newton(x):
    y = x.copy()
    for i in range(50):
        d = (y * y - x) / (2 * y)
        y = y - d
        if np.abs(d).max() < 1e-12:
            break
    return y, i  # the variable after the loop: the iteration that broke, an int


def test_newton_iteration_stops_where_it_converges():
    check(newton, lambda seed: (np.linspace(1.0, 3.0 + 1e4 * seed, 8),))


def mid_body(x):
    s = np.zeros_like(x)
    for i in range(20):
        s = s + x
        if s.sum() > 10:
            break
        s = s * 1.5  # not done in the iteration that breaks
    return s, i


def two_breaks(x):
    acc = x * 0
    for k in range(10):
        acc = acc + 1
        if acc.max() > 3:
            break
        acc = acc * 2
        if acc.min() > 5:
            break
    return acc, k


def at_once(x):
    for i in range(8):
        x = x + 1
        if x.sum() > -100:
            break
    return x, i


def never(x):
    for i in range(8):
        x = x + 1
        if x.sum() > 1e9:
            break
    return x, i


def descending(x):
    for i in range(9, 0, -2):
        x = x * 0.5
        if x[i] < 0.1:
            break
    return x, i


def bound_after_the_test(x):
    y = x * 1
    for i in range(10):
        if y.sum() > 50:
            break
        z = y * 2  # not read after the loop: what it holds there does not matter
        y = z + 1
    return y


def integers(x):
    for i in range(12):
        x = x * 3 % 17
        if (x == 1).any():
            break
    return x, i


def inner_break(x):
    for i in range(5):
        for j in range(6):
            x = x + 1
            if x.max() > 7:
                break
        x = x - 3
    return x


@pytest.mark.parametrize("f", [mid_body, two_breaks, at_once, never, descending,
                               bound_after_the_test, integers])
def test_loops_left_by_break_are_one_graph(f):
    def make(seed):
        if f is integers:
            return (np.arange(2, 6) + seed,)
        return ((np.ones(10) if f is descending else np.ones(3)) * (1 + 5 * seed),)
    check(f, make)


def test_a_break_in_an_inner_loop_leaves_only_that_loop():
    check(inner_break, lambda seed: (np.zeros(2) + seed,), loops=1)


def stores_into_the_argument(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2
        if x[i] > 3:
            break
    return x


def updates_in_place(x):
    for i in range(6):
        x += 1
        if x[0] > 4:
            break
        x *= 1.5
    return x


@pytest.mark.parametrize("f", [stores_into_the_argument, updates_in_place])
def test_stores_into_the_callers_array_before_and_after_the_break(f):
    """The caller's array gets the value at the break: stores after it are not made. (The
    second traces the loop twice, first as a dyn.for: its ops, discarded, must leave nothing
    behind for ops MLIR puts at their addresses.)"""
    check(f, lambda seed: (np.linspace(0.0, 2.0 + seed, 6),))


def doubled_until(x, store):
    y = x
    for i in range(6):
        if y.sum() > 5:
            break
        y = y * 2
    if store:
        y[0] = -1.0  # into the caller's x where the first iteration breaks
    return y  # the caller's x itself where the first iteration breaks


def test_a_variable_a_break_may_leave_as_the_object_from_before_the_loop():
    """After the loop `y` is the caller's array or a new one, as the data decides: a store
    into it or returning it is a break whose state the host cannot recreate (which object y
    is), so the frame runs eagerly, with the very objects."""
    for start in (10.0, 0.1):  # breaks in the first iteration, or later
        for store in (True, False):
            check(doubled_until, lambda seed: (np.full(3, start + seed), store), loops=None)
        x = np.full(3, start)
        assert (dynamir.compile(doubled_until)(x, False) is x) == (doubled_until(x, False) is x)


def torch_fixed_point(x):
    h = torch.zeros_like(x)
    for t in range(30):
        h = torch.tanh(h + x)
        if (h - x).abs().max() < 0.3:
            break
    return h


def test_torch():
    check(torch_fixed_point, lambda seed: (torch.linspace(-1.0, 1.0 + seed, 5),))


def converge(x, trips):
    y = x.copy()
    for i in range(trips):
        d = (y * y - x) / (2 * y)
        y = y - d
        if np.abs(d).max() < 1e-12:
            break
    return y


def test_the_graph_does_not_grow_with_the_trip_count():
    x = np.linspace(1.0, 3.0, 8)
    short, long = (dynamir.explain(dynamir.compile(converge), x, n).ops_per_graph
                   for n in (50, 5000))
    assert len(long) == 1 and list(short.values()) == list(long.values())


def read_when_unbound(x):
    y = x
    z = None
    for i in range(10):
        if y.sum() > 50:
            break
        z = y * 2
        y = z + 1
    return y, z  # None where the first iteration breaks


def for_else(x):
    for i in range(6):
        x = x + 1
        if x.sum() > 100:
            break
    else:  # runs where the loop does not break: the two exits go on differently
        x = x * 0
    return x


def returns_inside(x):
    for i in range(6):
        x = x + 1
        if x.sum() > 10:
            return x * 100
    return x


@pytest.mark.parametrize("f", [read_when_unbound, for_else, returns_inside])
def test_loops_left_otherwise_run_as_before(f):
    check(f, lambda seed: (np.ones(3) * (1 + 30 * seed),), loops=None)


def test_the_loop_variable_after_the_loop_is_read_at_a_break():
    """Its value is the graph's: a use on the host (a slice bound) is a break there."""
    def head(x):
        for i in range(8):
            x = x * 2
            if x.sum() > 40:
                break
        return x[:i]
    check(head, lambda seed: (np.ones(3) + seed,), breaks=1)


def test_the_graph_compiles_for_the_gpu():
    x = np.linspace(1.0, 3.0, 1 << 10).astype(np.float32)
    traced = dynamir.trace(newton, x)
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graphs = [f for f in traced.module.functions if "_graph" in f]
    assert len(graphs) == 1
    assert pathlib.Path(_dynamir.compile_graph(traced.module._native, graphs[0],
                                               "cuda")).exists()
    assert same(dynamir.compile(newton)(x), newton(x))
