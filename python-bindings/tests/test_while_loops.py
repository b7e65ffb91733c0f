"""while loops on tensor conditions traced once as dyn.while (lib/Frontend/Loops.cpp): one
graph, no break and no host decision per iteration, whatever the trip count; every loop that
cannot be captured is what it was before (a data-dependent branch at its first test). Every
program is compared with eager in each backend mode, arguments included."""

import contextlib
import pathlib

import _dynamir
import numpy as np
import pytest

import dynamir
from test_loops import MODES, same

torch = pytest.importorskip("torch")


def check(f, make, loops=1, breaks=0):
    """f on fresh arguments from make(), eagerly and compiled in each mode (twice each, the
    second time on other values): results and the arguments afterwards equal; `loops` dyn.while
    ops (None: not captured), in one graph unless the frame `breaks` after the loop."""
    for mode in MODES:
        compiled = dynamir.compile(f, **mode)
        for seed in range(2):
            want_args, args = make(seed), make(seed)
            want = f(*want_args)
            got = compiled(*args)
            assert same(want, got), (mode, want, got)
            assert same(list(want_args), list(args)), mode
    report = dynamir.explain(dynamir.compile(f), *make(0))
    found = sum(names.count("dyn.while") for names in report.ops_per_graph.values())
    assert found == (loops or 0), report.ops_per_graph
    if loops:
        assert report.graph_break_count == breaks, str(report)
        assert breaks or report.graph_count == 1, str(report)
    return report


def halve(x, tol):
    err = np.abs(x).max()
    while err > tol:
        x = x * 0.5
        err = np.abs(x).max()
    return x, err


def test_a_loop_on_a_tolerance_is_one_graph():
    check(halve, lambda seed: (np.linspace(-8.0, 8.0, 33) * (seed + 1), 1e-3))


def test_a_loop_that_never_runs_returns_its_start():
    check(halve, lambda seed: (np.linspace(-1.0, 1.0, 5), 2.0 + seed))


def test_the_trip_count_is_data_not_a_guard():
    """New data with other trip counts runs the same graph: no recompile."""
    compiled = dynamir.compile(halve)
    for scale in (1.0, 1e3, 1e-4, 1e9):
        x = np.linspace(-1.0, 1.0, 9) * scale
        assert same(compiled(x, 1e-3), halve(x, 1e-3))
    counters = dynamir.counters()
    assert counters["frames_traced"] == 1 and counters["recompiles"] == 0, counters


def newton_sqrt(a):
    y = a.copy()
    while np.abs(y * y - a).max() > 1e-12 * a.max():
        y = 0.5 * (y + a / y)
    return y


def test_newton_iterations():
    check(newton_sqrt, lambda seed: (np.linspace(1.0, 50.0 + seed, 17),))


def fixed_point(x):
    while not np.allclose(x, np.cos(x), rtol=0, atol=1e-12):  # a bool the graph computes
        x = np.cos(x)
    return x


def test_a_test_of_allclose():
    check(fixed_point, lambda seed: (np.linspace(0.0, 1.0 + seed, 5),))


def not_done(x):
    done = x.sum() < 1
    while not done:  # the first test jumps to the exit when true
        x = x - 0.25
        done = x.sum() < 1
    return x


def test_a_negated_condition():
    check(not_done, lambda seed: (np.arange(4.0) + seed,))


def decay_in_place(x):
    while x.max() > 1.0:
        x *= 0.5
    return x.sum()


def test_stores_into_the_callers_array():
    check(decay_in_place, lambda seed: (np.linspace(0.0, 20.0 + seed, 11),))


def torch_count(x):
    n = torch.zeros((), dtype=torch.int64)
    while x.norm() > 1:
        x = x / 2
        n = n + 1
    return x, n


def test_torch_with_a_tensor_counter_in_fullgraph():
    check(torch_count, lambda seed: (torch.linspace(-8, 8 + seed, 16),))
    x = torch.linspace(-8, 8, 16)
    assert same(dynamir.compile(torch_count, fullgraph=True)(x), torch_count(x))


def loop_in_loop(x):
    while x.max() > 1.0:
        for i in range(6):
            x = x * 0.9
    return x


def test_a_for_loop_inside():
    report = check(loop_in_loop, lambda seed: (np.linspace(0.0, 9.0 + seed, 7),))
    assert sum(ops.count("dyn.for") for ops in report.ops_per_graph.values()) == 1


def solver(x, tol, max_iter):
    it = 0
    err = np.abs(x * x - 1).max()
    while err > tol and it < max_iter:  # a counter the graph carries, tested by the graph
        x = 0.5 * (x + 1.0 / x)
        err = np.abs(x * x - 1).max()
        it += 1
    return x, it, err


def python_test_first(x, tol, max_iter):
    it, k = 0, 10
    while it < max_iter and x.max() > tol:  # the first test passed while tracing
        x = x * 0.5 - 0.01 * it
        it = it + 1
        k -= 2
    return x, it, k


@pytest.mark.parametrize("max_iter", [0, 2, 100])
def test_counters_and_tests_of_python_values(max_iter):
    check(solver, lambda seed: (np.linspace(2.0, 9.0 + seed, 5), 1e-12, max_iter))
    # With max_iter = 0 the trace decides the first test: no loop at all.
    check(python_test_first, lambda seed: (np.linspace(2.0, 9.0 + seed, 5), 1e-3, max_iter),
          loops=1 if max_iter else None)


def counter_as_a_bound(x):
    n = 0
    while x.max() > 1.0:
        x = x * 0.5
        n += 1
    return x[:n], n * 2  # its value after the loop: a break, the host hands over an int


def test_a_counters_value_after_the_loop():
    check(counter_as_a_bound, lambda seed: (np.linspace(0.0, 9.0 + seed, 7),), breaks=1)


def relax(u, tol, max_iter):
    it, err = 0, 1.0  # Python values: the trace goes through the first iteration
    while it < max_iter and err > tol:
        old = u.copy()
        u[1:-1] = 0.5 * (u[2:] + u[:-2])  # in place, in the caller's array
        err = np.abs(u - old).max()
        it += 1
    return it, err


@pytest.mark.parametrize("max_iter", [1, 500])
def test_a_first_iteration_on_python_values(max_iter):
    def make(seed):
        u = np.zeros(20 + seed)
        u[0] = 1.0
        return u, 1e-4, max_iter

    check(relax, make, loops=1 if max_iter > 1 else None)  # one iteration: no loop left


def walrus(x):
    while (m := x.max()) > 1:
        x = x / m * 0.9
    return x, m


def test_a_test_that_binds_a_variable():
    check(walrus, lambda seed: (np.linspace(0.0, 5.0 + seed, 4),))


def bound_in_the_body(x):
    while x.mean() < 0.5:  # difftest 3052000059:35: may run no iteration
        y = x * 2
        x = y + 0.1
    return x, y  # unbound after no iteration: UnboundLocalError


def inner_variable(x):
    i = -1
    while x.mean() < 0.5:
        for i in range(4):
            x = x + 0.01
    return x, i  # -1 after no iteration


@pytest.mark.parametrize("f", [bound_in_the_body, inner_variable])
def test_what_the_body_binds_is_not_read_after_a_loop_that_may_not_run(f):
    # The first graph breaks at the first test; the continuation, past one iteration, may
    # hold the loop (bound_in_the_body: y is bound there).
    report = check(f, lambda seed: (np.linspace(0.0, 0.4, 5),),
                   loops=None if f is inner_variable else 1, breaks=1)
    assert "dyn.while" not in report.ops_per_graph[f.__name__ + "_graph0"]
    with pytest.raises(UnboundLocalError) if f is bound_in_the_body else contextlib.nullcontext():
        assert same(dynamir.compile(f)(np.ones(3)), f(np.ones(3)))


def with_break(x):
    while x.max() > 1.0:
        x = x * 0.5
        if x.sum() < 3:
            break
    return x


def break_mid_body(x):
    n = 0
    while x.max() > 1.0 and n < 50:
        x = x * 0.5
        if x.min() < 0.2:
            break
        x = x - 0.01  # not done in the iteration that breaks
        n += 1
    return x, n


@pytest.mark.parametrize("f", [with_break, break_mid_body])
def test_a_break_on_a_tensor_test_stays_in_the_while_loop(f):
    """The iteration that breaks yields the values at the break; the loop goes on where its
    test passes and no break was taken (LoopBreaks.cpp)."""
    check(f, lambda seed: (np.linspace(0.0, 9.0 + 40 * seed, 7),))


def with_static_break(x):  # the test of the break is decided by the trace: one dyn.while
    while x.max() > 1.0:
        x = x * 0.5
        if x.shape[0] > 100:
            break
    return x


def test_a_break_the_trace_decides():
    check(with_static_break, lambda seed: (np.linspace(0.0, 9.0 + seed, 7),))


def either(x):
    n = 0
    while x.sum() > 100 or x.max() > 50:
        x = x * 0.5
        n += 1
    return x, n


def mixed(x, tol):
    it = 0
    while (x.max() > tol or x.min() < -tol) and it < 40:
        x = x * 0.7
        it += 1
    return x, it


def three(x):
    while x.sum() > 10 and (x.max() > 3 or x.min() > 1):
        x = x - 0.5
    return x


@pytest.mark.parametrize("f", [either, mixed, three])
def test_tests_joined_by_or(f):
    """`or` jumps into the body (the first tests) or back to it (the second ones): each test
    goes on, leaves or hands over to the next, folded into one predicate."""
    args = (lambda seed: (np.linspace(0.0, 30.0 * (seed + 1), 7), 2.0)) if f is mixed else \
        (lambda seed: (np.linspace(0.0, 30.0 * (seed + 1), 7),))
    check(f, args)


def with_continue(x):
    while x.max() > 1.0:
        x = x * 0.5
        if x.sum() > 1e9:
            continue
        x = x - 0.01
    return x


def counter_used_inside(x):
    n = 0
    while x.max() > 1.0:
        x = x * 0.5
        n += 1
        x[n % 3] = 0.25  # needs the counter's value
    return x, n


def printing(x):
    while x.max() > 1.0:
        x = x * 0.5
        print("max", x.max())
    return x


@pytest.mark.parametrize("f", [with_continue, counter_used_inside, printing])
def test_loops_that_are_not_captured_run_as_before(f, capsys):
    check(f, lambda seed: (np.linspace(0.0, 9.0 + seed, 7),), loops=None)


def test_the_while_graph_compiles_for_the_gpu():
    x = np.linspace(-8.0, 8.0, 1 << 12).astype(np.float32)
    for capture in (False, True):
        traced = dynamir.trace(halve, x, np.float32(1e-3), capture_control_flow=capture)
        traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
        graphs = [f for f in traced.module.functions if "_graph" in f]
        assert len(graphs) == 1
        library = _dynamir.compile_graph(traced.module._native, graphs[0], "cuda")
        assert pathlib.Path(library).exists()


def halve_then_store(x):
    while x.max() > 1:
        x = x * 0.5
    x[0] = 7.0  # the caller's x where the loop ran no iteration
    return x


def halve_only(x):
    while x.max() > 1:
        x = x * 0.5
    return x


@pytest.mark.parametrize("start", [0.5, 4.0])
def test_a_rebound_variable_is_the_object_from_before_a_loop_that_ran_no_iteration(start):
    # difftest 3054000055:93: x.neg_() after the loop changed a copy, not the caller's x. A
    # store into it runs for real; returned, it is the caller's x where the first test is
    # false (one graph), else the new array.
    for f in (halve_then_store, halve_only):
        want_x, got_x = np.array([start, 0.25]), np.array([start, 0.25])
        want, got = f(want_x), dynamir.compile(f)(got_x)
        assert same(want, got) and same(want_x, got_x)
        assert (want is want_x) == (got is got_x)
    assert dynamir.explain(halve_only, np.array([start, 0.25])).graph_break_count == 0


def store_halve_then_store(x):
    x[::2] = x[::2] * 2 - 1  # a store into the caller's x: its value is a new one, same object
    while x.max() > 1:
        x = x * 0.5
    x += 2  # into the caller's x where the loop ran no iteration
    return x


@pytest.mark.parametrize("start", [0.5, 4.0])
def test_the_callers_array_after_a_store_is_the_object_from_before_the_loop(start):
    # difftest 3094000012:88: after `x[::2] = ...`, x was taken for an array of the trace's
    # own, so `x += 2` after a loop that ran no iteration changed a copy, not the caller's x.
    want_x, got_x = np.array([start, 0.25, 0.5]), np.array([start, 0.25, 0.5])
    want, got = store_halve_then_store(want_x), dynamir.compile(store_halve_then_store)(got_x)
    assert same(want, got) and same(want_x, got_x)
    assert (want is want_x) == (got is got_x)
