"""for loops over ranges traced once as dyn.for (lib/Frontend/Loops.cpp): the IR and the
compile time do not grow with the trip count, and every loop that cannot be captured unrolls
as before. Every program is compared with eager in each backend mode."""

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")

MODES = [{}, {"backend": "eager"}, {"capture_control_flow": True}]


def same(a, b):
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, (np.ndarray, np.generic)):
        return type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and \
            np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True)
    if isinstance(a, torch.Tensor):
        return type(b) is torch.Tensor and a.dtype == b.dtype and a.shape == b.shape and \
            bool(torch.allclose(a, b, rtol=1e-6, atol=1e-6))
    return type(a) is type(b) and a == b


def check(f, make, loops=1):
    """f on fresh arguments from make(), eagerly and compiled in each mode: results and the
    arguments afterwards equal; `loops` dyn.for ops in the first graph (None: unrolled)."""
    want_args = make()
    want = f(*want_args)
    for mode in MODES:
        compiled = dynamir.compile(f, **mode)
        for _ in range(2):
            args = make()
            got = compiled(*args)
            assert same(want, got), (mode, want, got)
            assert same(list(want_args), list(args)), mode
    ops = dynamir.explain(dynamir.compile(f), *make()).ops_per_graph
    found = sum(names.count("dyn.for") for names in ops.values())
    assert found == (loops or 0), ops
    return ops


def heat(u, nt, c):
    for n in range(nt):
        un = u.copy()
        u[1:-1] = un[1:-1] + c * (un[2:] - 2 * un[1:-1] + un[:-2])
    return u


def test_stencil_stores_into_its_argument():
    check(heat, lambda: (np.linspace(0.0, 1.0, 40) ** 2, 50, 0.1))


def test_ir_does_not_grow_with_the_trip_count():
    short = check(heat, lambda: (np.linspace(0.0, 1.0, 40) ** 2, 10, 0.1))
    long = check(heat, lambda: (np.linspace(0.0, 1.0, 40) ** 2, 2000, 0.1))
    assert short == long


def test_rebinding_and_the_loop_variable_as_a_value():
    def f(x):
        acc = np.zeros_like(x)
        for i in range(2, 12, 3):
            acc = acc + x * i
            x = np.sin(x)
        return acc, x, i
    check(f, lambda: (np.linspace(-1.0, 1.0, 6),))


def test_torch_loop_with_a_data_dependent_branch_inside():
    def f(x, w):
        for _ in range(8):
            y = x @ w
            if y.sum() > 0:
                y = torch.relu(y)
            x = torch.tanh(y)
        return x
    g = torch.Generator().manual_seed(0)
    check(f, lambda: (torch.randn(3, 4, generator=g.manual_seed(1)),
                      torch.randn(4, 4, generator=g.manual_seed(2)) * 0.5))


def test_nested_loops():
    def f(x):
        for i in range(5):
            for j in range(6):
                x = x * 0.5 + j
            x = x - i
        return x
    check(f, lambda: (np.arange(4.0),), loops=2)


@pytest.mark.parametrize("transposed", [False, True])
def test_contiguous_of_a_carried_tensor_is_itself(transposed):
    # The body's tensors are laid out as they were before the loop: contiguous() of a
    # contiguous argument is the argument, and its in-place update reaches the caller; of a
    # transposed one it is a copy (difftest 271388021:58 took the first for the second).
    def f(y):
        for i in range(4):
            y.contiguous().sub_(i)
        return y * 2

    def make():
        y = torch.arange(6.0).reshape(2, 3)
        return (y.t() if transposed else y,)
    check(f, make)


def test_stores_into_an_array_made_before_the_loop():
    def f(u):
        acc = np.zeros(4)
        for _ in range(5):
            acc[1:3] += u[1:3]
        acc += 1.0
        return acc
    check(f, lambda: (np.arange(6.0),))


def test_a_view_the_body_does_not_see_unrolls():
    # keep[0] is a view of u that no Var of the body holds: the loop would leave it stale.
    def f(u):
        keep = [u[1:3]]
        for _ in range(5):
            u[1:-1] = u[1:-1] + 1.0
        return keep[0]
    check(f, lambda: (np.arange(6.0),), loops=None)


def test_stores_into_a_copy_in_the_loop():
    def f(y):
        for i in range(4):
            v = y.contiguous()
            v -= i
        return v
    check(f, lambda: (torch.arange(6.0),), loops=None)


@pytest.mark.parametrize("body", ["index", "append", "break", "print", "short", "step"])
def test_loops_that_unroll(body, capsys):
    def index(x):
        for i in range(5):
            x = x + x[i]
        return x

    def append(x):
        out = []
        for i in range(5):
            out.append(x * i)
        return out

    def brk(x):
        for i in range(8):
            x = x * 2
            if i == 4:
                break
        return x

    def prints(x):
        for i in range(5):
            x = x + 1
            print("step", i)
        return x

    def short(x):
        for i in range(3):
            x = x * 2
        return x

    def step(x):
        for i in range(9, 0, -2):
            x = x * i
        return x
    f = {"index": index, "append": append, "break": brk, "print": prints, "short": short,
         "step": step}[body]
    check(f, lambda: (np.arange(6.0),), loops=None)
