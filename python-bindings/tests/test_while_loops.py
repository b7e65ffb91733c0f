"""while loops on tensor conditions traced once as dyn.while (lib/Frontend/Loops.cpp): one
graph, no break and no host decision per iteration, whatever the trip count; every loop that
cannot be captured is what it was before (a data-dependent branch at its first test). Every
program is compared with eager in each backend mode, arguments included."""

import pathlib

import _dynamir
import numpy as np
import pytest

import dynamir
from test_loops import MODES, same

torch = pytest.importorskip("torch")


def check(f, make, loops=1):
    """f on fresh arguments from make(), eagerly and compiled in each mode (twice each, the
    second time on other values): results and the arguments afterwards equal; `loops` dyn.while
    ops in one graph with no break (None: not captured)."""
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
        assert report.graph_count == 1 and report.graph_break_count == 0, str(report)
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


def with_break(x):
    while x.max() > 1.0:
        x = x * 0.5
        if x.sum() < 3:
            break
    return x


def with_static_break(x):  # the test of the break is decided by the trace: one dyn.while
    while x.max() > 1.0:
        x = x * 0.5
        if x.shape[0] > 100:
            break
    return x


def test_a_break_the_trace_decides():
    check(with_static_break, lambda seed: (np.linspace(0.0, 9.0 + seed, 7),))


def with_continue(x):
    while x.max() > 1.0:
        x = x * 0.5
        if x.sum() > 1e9:
            continue
        x = x - 0.01
    return x


def python_counter(x):
    n = 0
    while x.max() > 1.0:
        x = x * 0.5
        n += 1
    return x, n


def two_tests(x):
    k = 0
    while x.max() > 1.0 and k < 3:
        x = x * 0.5
        k += 1
    return x


def printing(x):
    while x.max() > 1.0:
        x = x * 0.5
        print("max", x.max())
    return x


@pytest.mark.parametrize("f", [with_break, with_continue, python_counter, two_tests, printing])
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
