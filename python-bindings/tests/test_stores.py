"""Stores into arrays and tensors inside the graph: `x[...] = v`, `x[i] op= v` and `x op= v` on
the caller's arrays become dyn.insert_slice / new values in the graph, and the host writes each
argument's final value back into it (at the return and before a graph break goes on). Each
test compares with eager on copies of the inputs: the result, its type, and the arguments after
the call; and says how many breaks the frame has."""

import pathlib

import numpy as np
import pytest

import _dynamir
import dynamir

torch = pytest.importorskip("torch")


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a.clone() if isinstance(a, torch.Tensor)
            else a for a in args]


def same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and torch.equal(a, b), (a, b)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), (a, b)
    else:
        assert a == b, (a, b)


def check(fn, *args, breaks=0, **options):
    """fn compiled agrees with fn eagerly on two calls; returns the explanation of a third."""
    for _ in range(2):
        want_args, got_args = copies(args), copies(args)
        want = fn(*want_args)
        got = dynamir.compile(fn, **options)(*got_args)
        same(got, want)
        for g, w in zip(got_args, want_args):
            same(g, w)
    e = dynamir.explain(dynamir.compile(fn, **options), *copies(args))
    assert e.graph_break_count == breaks, e
    return e


def test_stencil_with_a_copy_updates_the_argument_in_the_graph():
    def heat(u, steps):
        for _ in range(steps):
            un = u.copy()
            u[1:-1] = un[1:-1] + 0.25 * (un[2:] - 2 * un[1:-1] + un[:-2])
        return u

    e = check(heat, np.sin(np.arange(16.0)), 3)
    assert [g.source for g in e.guards if " written " in g.text] == ["L['u']"], e.guards
    assert any("dyn.insert_slice" in ops for ops in e.ops_per_graph.values()), e


def test_augmented_subscripts_numpy_and_torch():
    def triangle(A, beta):
        for i in range(A.shape[0]):
            A[i, :i + 1] *= beta
        A[-1] += 1
        return A

    check(triangle, np.arange(16.0).reshape(4, 4), 0.5)
    check(triangle, torch.arange(16.0).reshape(4, 4), 0.5)


def test_the_argument_itself_is_returned():
    def f(x):
        x += 1
        x[0] = 7
        return x

    a = np.zeros(3)
    assert dynamir.compile(f)(a) is a
    assert a.tolist() == [7.0, 1.0, 1.0]
    check(f, np.zeros(3))
    check(f, torch.zeros(3))


def test_stored_values_are_cast_and_broadcast_as_numpy_does():
    def f(x, y, b):
        x[1] = True            # a bool into a float array
        x[2:4] = y             # int32 values into float64
        b[0] = 2               # a nonzero int into a bool array is True
        b[1:] = np.ones((1, 1, 2))  # leading dimensions of size 1 are dropped
        x[None, 4:] = 3.5      # None in the index
        return x, b

    check(f, np.zeros(6), np.array([3, 4], np.int32), np.zeros(3, bool))


def test_stores_eager_rejects_still_raise():
    def into_int(x):
        x[0] = np.nan  # numpy: ValueError, cannot convert float NaN to integer
        return x

    def wrong_shape(x):
        x[0:2] = np.ones(3)
        return x

    for fn in (into_int, wrong_shape):
        with pytest.raises(ValueError):
            fn(np.zeros(3, np.int64) if fn is into_int else np.zeros(3))
        with pytest.raises(ValueError):
            dynamir.compile(fn)(np.zeros(3, np.int64) if fn is into_int else np.zeros(3))

    def read_only(x):
        x[0] = 1.0
        return x

    a = np.broadcast_to(np.zeros(3), (2, 3))
    with pytest.raises(ValueError):
        read_only(a)
    with pytest.raises(ValueError):
        dynamir.compile(read_only)(a)

    def overlapping_torch(x):
        x[1:] = x[:-1]
        return x

    with pytest.raises(RuntimeError):
        overlapping_torch(torch.arange(4.0))
    with pytest.raises(RuntimeError):
        dynamir.compile(overlapping_torch)(torch.arange(4.0))


def test_overlapping_numpy_store_copies_first():
    def shift(x):
        x[1:] = x[:-1]
        return x.sum()

    # numpy copies an operand that overlaps the destination first: the graph computes that.
    check(shift, np.arange(5.0))


def test_arguments_that_share_memory_are_not_written_back_blindly():
    def f(a, b):
        a[...] = 0
        return b + 1

    g = dynamir.compile(f)
    x, y = np.ones(3), np.ones(3)
    assert g(x, y).tolist() == [2.0, 2.0, 2.0] and x.tolist() == [0.0] * 3
    # The same array twice, and a view of it: b sees the store, as eagerly.
    for make in (lambda: (np.ones(3),) * 2, lambda: (lambda z: (z[1:], z[:2]))(np.ones(3))):
        want_args, got_args = make(), make()
        same(g(*got_args), f(*want_args))
        same(got_args[0], want_args[0])


def test_live_views_see_a_store_into_their_base():
    def f(x):
        v = x[1:]
        t = x.reshape(2, 3).T
        x[1] = 5.0
        x[4:] += 1
        return v * 1, t + 0, v

    check(f, np.arange(6.0))


def test_stores_through_views_reach_the_base_and_its_other_views():
    def numpy_views(x):
        r = x.ravel()
        r[0] = 50.0
        col = x.T[1]
        col *= -1
        x[:, ::2][1] = 7.0
        return x.sum(), r, col

    check(numpy_views, np.arange(12.0).reshape(3, 4))

    def torch_views(x):
        x.t()[0].zero_()
        x.view(-1)[-1] = 9
        x[1].unsqueeze(0).add_(1)
        return x * 2

    check(torch_views, torch.arange(9.0).reshape(3, 3))


def test_stores_through_views_that_copy_break():
    def reshape_copies(x):
        y = x.T.reshape(-1)  # a copy: x must not change
        y[0] = 5.0
        return x, y

    def negative_step(x):
        x[::-1][0] = 1.0
        return x

    for fn in (reshape_copies, negative_step):
        check(fn, np.arange(6.0).reshape(2, 3), breaks=1)


def test_stores_into_a_copy_of_a_view_stay_in_the_graph():
    # A copy is an array of its own, laid out as the copy function says (row-major here).
    def copy_of_view(x):
        y = x.T.copy()
        y[0, 0] = 5.0
        r = y.ravel()
        r[1] = 7.0
        return x, y

    check(copy_of_view, np.arange(6.0).reshape(2, 3))


def raises_as_eager(fn, make, error):
    """fn raises `error` eagerly and compiled, and leaves its argument as eager code does."""
    want, got = make(), make()
    with pytest.raises(error):
        fn(want)
    with pytest.raises(error):
        dynamir.compile(fn)(got)
    same(got, want)


def test_stores_that_numpy_or_torch_refuse_raise():
    def read_only_diagonal(x):
        d = np.diagonal(x)
        d[0] = 1.0
        return x

    def broadcast(x):
        b = np.broadcast_to(x, (2, 3))
        b[0] = 1.0
        return x

    def read_only_after_a_store(x):
        d = np.diagonal(x)
        x[0, 0] = 5.0  # d is taken again from x's new value, and stays read-only
        d[1] = 1.0
        return x

    raises_as_eager(read_only_diagonal, lambda: np.ones((2, 2)), ValueError)
    raises_as_eager(read_only_after_a_store, lambda: np.ones((2, 2)), ValueError)
    raises_as_eager(broadcast, lambda: np.ones(3), ValueError)
    # torch refuses an operand that overlaps the destination other than as itself (numpy
    # copies it first).
    for fn in (lambda x: x.add_(x.t()), lambda x: x[1:].copy_(x[:-1])):
        raises_as_eager(fn, lambda: torch.arange(9.0).reshape(3, 3), RuntimeError)
    check(lambda x: x.mul_(x), torch.arange(4.0))


def test_torch_stores_from_the_same_tensor():
    # torch raises where the value's memory meets the indexed view's (but for x[:] = x), and
    # copies without a check between disjoint parts: the graph's copy-first store is exact
    # there (difftest 262388023:16 stored x[-1::2] = x of a 1-element x without a break).
    def boundary(x):
        x[0] = x[1]
        x[-1] = x[-2]
        return x

    def halves(x):
        x[:2] = x[2:]
        return x

    def rows(x):
        y = x * 2
        y[0, :] = y[1, :]
        y[:, -1] = y[:, 0]
        return y

    check(boundary, torch.arange(5.0))
    check(halves, torch.arange(4.0))
    check(rows, torch.arange(12.0).reshape(3, 4))

    def itself(x):
        x[:] = x
        return x

    def whole_but_strided(x):
        x[-1::2] = x
        return x

    def shifted(x):
        x[1:] = x[:-1]
        return x

    check(itself, torch.arange(3.0))
    raises_as_eager(whole_but_strided, lambda: torch.zeros(1, dtype=torch.bool), RuntimeError)
    raises_as_eager(shifted, lambda: torch.arange(4.0), RuntimeError)


def test_arrays_made_from_a_numpy_scalar_are_new():
    # s[...], s[None] and np.expand_dims(s, 0) of a numpy scalar are new arrays: a store into
    # one is not seen by another (difftest 267908013:23).
    def f(z):
        y = np.sin(z)  # a numpy scalar
        x = y[...]
        v = y[None]
        e = np.expand_dims(y, 0)
        x *= 1.5
        e += 1
        return x, v, e, y

    check(f, np.array(3))
    # ... but for its broadcast, which is read-only (difftest 270236014:52).
    raises_as_eager(lambda z: np.broadcast_to(np.sin(z), (2,)).__setitem__(0, 1.0),
                    lambda: np.array(3.0), ValueError)


def test_ravel_of_a_strided_array_is_a_copy():
    # ravel is a view only of a contiguous array: a[::-1].ravel() is a copy where reshape(-1)
    # would be a view (difftest 270236009:13).
    def f(y):
        v = y[-1, ::-1].ravel()
        u = y[0].ravel()  # contiguous: a view
        y[...] = 0
        return v, u

    def g(y):
        v = y.t()[0].ravel()  # strided: a copy
        u = y[0].ravel()
        y[...] = 0
        return v, u

    check(f, np.arange(15.0).reshape(3, 5))
    check(g, torch.arange(15.0).reshape(3, 5))


def test_stores_before_a_break_are_written_back_first(capsys):
    def f(x):
        x[0] = 3.0
        print("first", x.tolist())
        dynamir.graph_break()
        x *= 2
        print("second", x)
        return x

    # The print sees the store, x *= 2 the printed x, on both sides of the break.
    check(f, np.ones(2), breaks=1)
    assert capsys.readouterr().out == "first [3.0, 1.0]\nsecond [6. 2.]\n" * 5


def test_stores_into_globals_and_inside_branches():
    def f(x):
        STATE[1:] = x
        if x.sum() > 0:
            x[0] = -1.0
        return STATE.sum() + x

    global STATE
    for captured in (False, True):
        STATE = np.zeros(3)
        want = f(np.ones(2))
        STATE = np.zeros(3)
        got = dynamir.compile(f, capture_control_flow=captured)(np.ones(2))
        same(got, want)
        assert STATE.tolist() == [0.0, 1.0, 1.0]


def test_stores_run_on_every_backend_and_lower_for_the_gpu():
    def f(u):
        un = u.copy()
        u[1:-1, 1:-1] = (un[:-2, 1:-1] + un[2:, 1:-1] + un[1:-1, :-2] + un[1:-1, 2:]) / 4
        u[0] += 1
        return u

    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    check(f, a, backend="eager")
    check(f, a)
    traced = dynamir.trace(f, a.copy())
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graphs = [name for name in traced.module.functions if "_graph" in name]
    assert graphs
    for graph in graphs:
        assert pathlib.Path(_dynamir.compile_graph(traced.module._native, graph, "cuda")).exists()


def test_torch_in_place_methods():
    def f(x, y):
        x.add_(y)
        x.mul_(2).clamp_(min=0.5)
        torch.relu_(x)
        z = y * 3
        z.sub_(1).div_(2)
        return x, z.sum()

    check(f, torch.arange(6.0).reshape(2, 3) - 2, torch.ones(2, 3))

    def g(x, src):
        x.copy_(src)        # broadcast and cast into x's dtype
        out = torch.empty_like(src)
        out.zero_()
        return x, out

    check(g, torch.zeros(2, 3, dtype=torch.int64), torch.tensor([1.7, -2.2, 3.0]))


def test_torch_in_place_methods_eager_rejects_still_raise():
    def int_add_float(x):
        return x.add_(1.5)  # torch: RuntimeError, result type Float can't be cast to Long

    def fill_with_vector(x):
        return x.fill_(torch.ones(3))

    for fn, arg in ((int_add_float, torch.zeros(3, dtype=torch.int64)),
                    (fill_with_vector, torch.zeros(3))):
        with pytest.raises(RuntimeError):
            fn(arg.clone())
        with pytest.raises(RuntimeError):
            dynamir.compile(fn)(arg.clone())


def test_results_that_eager_code_copies_do_not_see_later_stores():
    # Handlers make some copies of view ops (a broadcast and a reshape, a flip); a store into
    # the argument must not reach them as it reaches a view.
    F = torch.nn.functional

    def torch_copies(x):
        y = F.interpolate(x, scale_factor=1)
        z = torch.flip(x, [3])
        w = torch.repeat_interleave(x, 1, dim=0)
        x += 1
        return y, z, w, x

    check(torch_copies, torch.randn(1, 1, 2, 3))

    def numpy_copies(v):
        grid = np.meshgrid(v, v)
        v[0] = 100.0
        return grid[0], grid[1], np.flip(v)

    check(numpy_copies, np.arange(3.0))


def test_a_view_of_an_integer_rounding_is_no_view_of_its_operand():  # difftest 283100044:14
    """torch.ceil and np.floor of integers, np.abs of bools: a new array of the operand's
    values. The trace gave the result the operand's own value, so a store through a view of it
    went into the operand (the caller's x, or the array b)."""
    torch = pytest.importorskip("torch")

    def ceil(x):
        v = torch.ceil(x)
        v.T[:] = 1
        return v

    def floor(x):
        v = np.floor(x)
        w = v[1:]
        w[:] = 7
        return v

    def absolute(x):
        b = x > 0
        v = np.abs(b)
        w = v[:1]
        w[:] = True
        return b, v

    for fn, make in ((ceil, lambda: torch.tensor([[0, -2, 3], [1, 2, 0]], dtype=torch.int32)),
                     (floor, lambda: np.array([3, -1, 4])),
                     (absolute, lambda: np.array([-3, -1, 4]))):
        dynamir.reset()
        x, x_eager = make(), make()
        got, want = dynamir.compile(fn)(x), fn(x_eager)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert type(g) is type(w) and g.dtype == w.dtype and (g == w).all()
        assert (x == x_eager).all()
