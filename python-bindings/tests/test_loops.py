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


@pytest.mark.parametrize("body", ["index", "append", "break", "print", "short"])
def test_loops_that_unroll(body, capsys):
    def index(x):  # not affine in i: the index needs i's value
        for i in range(5):
            x = x + x[i % 3]
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

    f = {"index": index, "append": append, "break": brk, "print": prints, "short": short}[body]
    check(f, lambda: (np.arange(6.0),), loops=None)


# Indexing by the loop's variable (lib/Frontend/Windows.cpp): boxes at offsets the graph
# computes, their bounds checked over the loop's range.


def forward_substitution(L, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = (b[i] - np.dot(L[i, :i], x[:i])) / L[i, i]
    return x


def lower_triangular(n):
    rng = np.random.default_rng(n)
    return np.tril(rng.standard_normal((n, n))) + n * np.eye(n), rng.standard_normal(n)


def test_forward_substitution_is_one_loop_whatever_its_length():
    short = check(forward_substitution, lambda: lower_triangular(6))
    long = check(forward_substitution, lambda: lower_triangular(120))
    assert short == long
    text = str(dynamir.trace(forward_substitution, *lower_triangular(6)))
    assert "sizes [1, %arg2] : tensor<6x6xf64>" in text and "dyn.insert_window" in text


def test_indexing_by_affine_forms_of_the_loop_variable():
    def history(u0, n):
        u = np.zeros((n + 1, u0.shape[0]))
        u[0] = u0
        for t in range(n):
            u[t + 1] = u[t] + 0.1 * np.sin(u[t])
        return u

    def back_substitution(U, b):
        x = np.zeros_like(b)
        for i in range(b.shape[0] - 1, -1, -1):
            x[i] = (b[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
        return x

    def reverse(x):
        y = np.empty_like(x)
        for i in range(len(x)):
            y[-1 - i] = x[i] * 3 - i
        return y

    def prefix_sums(x):
        out = np.zeros_like(x)
        for i in range(len(x)):
            out[i] = np.sum(x[:i]) + x[i:].sum()
        return out

    def torch_neighbours(x):
        out = torch.zeros_like(x)
        for i in range(1, x.shape[0]):
            out[i] = x[i] * 2 + x[i - 1]
        return out

    def descending(x):
        for i in range(9, 0, -2):
            x = x * i
        return x, i

    U, c = lower_triangular(9)
    check(descending, lambda: (np.arange(4.0),))
    check(history, lambda: (np.linspace(0.0, 1.0, 5), 30))
    check(back_substitution, lambda: (U.T.copy(), c.copy()))
    check(reverse, lambda: (np.arange(8.0),))
    check(prefix_sums, lambda: (np.arange(8.0),))
    check(torch_neighbours, lambda: (torch.arange(8.0),))


def test_a_bound_out_of_range_in_some_iteration_unrolls_and_raises():
    def shift(x):
        for i in range(len(x)):
            x[i + 1] = x[i] * 2
        return x

    with pytest.raises(IndexError):
        dynamir.compile(shift)(np.ones(6))


def test_a_box_that_may_be_empty_takes_no_maximum():
    # numpy raises for the maximum of x[:0]; sums of boxes that change size stay in the loop.
    def running_max(x):
        out = np.zeros_like(x)
        for i in range(len(x)):
            out[i] = np.max(x[:i])
        return out

    with pytest.raises(ValueError):
        dynamir.compile(running_max)(np.arange(8.0))


def test_an_accumulator_that_starts_as_a_python_number_peels_one_iteration():
    # `s = 0.0` is a float in the first iteration and a numpy scalar or tensor after it: the
    # first iteration unrolls, the rest is one dyn.for carrying what it made.
    def dot(x, y):
        s = 0.0
        for i in range(len(x)):
            s += x[i] * y[i]
        return s

    def total(x):
        s = 0
        for i in range(x.shape[0]):
            s = s + x[i]
        return s

    check(dot, lambda: (np.arange(10.0), np.linspace(0.0, 1.0, 10)))
    check(dot, lambda: (np.arange(10, dtype=np.uint8), np.arange(10, dtype=np.uint8)))
    check(total, lambda: (torch.arange(6.0),))
    check(total, lambda: (np.arange(6, dtype=np.int16),))


def test_a_view_the_body_binds_is_taken_again_after_the_loop():
    # `row = A[i]` is not carried: after the loop it is the last row again, a view of the
    # final A (a store through it reaches A, as in numpy).
    def rows(A, x):
        y = np.zeros(A.shape[0])
        for i in range(A.shape[0]):
            row = A[i]
            y[i] = row @ x
        return y, row

    def scale_rows(A):
        for i in range(A.shape[0]):
            row = A[i, 1:]
            row *= i + 1
        row[0] = -1.0
        return A, row

    check(rows, lambda: (np.arange(20.0).reshape(5, 4), np.linspace(0.0, 1.0, 4)))
    check(scale_rows, lambda: (np.arange(20.0).reshape(5, 4),))
    A = np.arange(20.0).reshape(5, 4)
    _, row = dynamir.compile(scale_rows)(A)
    assert np.shares_memory(row, A) and row[0] == -1.0 and A[4, 1] == -1.0
