"""The torch API that small functions use around their tensor code, compiled with no graph
break and compared with eager torch/numpy in type, dtype, shape, value and argument state:
numpy/torch interop (x.numpy(), torch.from_numpy, torch.as_tensor and np.asarray share memory,
so stores through one are seen through the other), what the tensor guard knows of autograd
(requires_grad), torch.is_tensor,
x.to(other) and copy=True, torch.where of two Python scalars, torch.Size, nan_to_num and
nansum, and out= (a store into out)."""

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")


def same(got, want):
    """Same Python type, dtype, shape and values, recursively through tuples and lists."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, torch.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        assert torch.equal(got, want) or torch.allclose(got, want, 0, 0, equal_nan=True), (
            got, want)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), (got, want)
    else:
        assert got == want, (got, want)


def check(fn, make_args, breaks=0):
    """fn compiled (twice, on fresh arguments) equals fn eager in its result and in the state
    of its arguments afterwards, with `breaks` graph breaks and no kernel run by the trace;
    with none, no part of it runs eagerly (a graph whose lowering fails runs the frame eagerly
    with no break to show for it)."""
    report = dynamir.explain(fn, *make_args())
    assert report.graph_break_count == breaks, str(report)
    assert report.kernels_run_during_tracing == 0
    dynamir.reset()
    compiled = dynamir.compile(fn)
    for _ in range(2):
        eager_args, compiled_args = make_args(), make_args()
        want = fn(*eager_args)
        got = compiled(*compiled_args)
        same(got, want)
        same(list(compiled_args), list(eager_args))
    if breaks == 0:
        counters = dynamir.counters()  # (a run-time check that fails runs it eagerly)
        assert counters["eager_runs"] <= counters["failed_checks"], str(report)


def tensor(*shape, dtype=torch.float32):
    return torch.arange(float(np.prod(shape)), dtype=torch.float64).reshape(shape).sub(2).to(dtype)


# ---- interop: one memory, two libraries ------------------------------------------------------

def test_store_through_numpy_view_reaches_the_tensor():
    def f(x):
        a = x.numpy()
        a[0] = 42.0
        a[1:] *= 2
        return x + 1, a.sum()

    check(f, lambda: [tensor(4)])


def test_store_into_the_tensor_is_seen_by_its_numpy_view():
    def f(x):
        a = x.numpy()
        x.mul_(3)
        x[0] = -1
        return np.maximum(a, 0), a.dtype

    check(f, lambda: [tensor(2, 3)])


def test_from_numpy_and_as_tensor_share_the_array():
    def f(a):
        t = torch.from_numpy(a)
        t[1] = 7
        u = torch.as_tensor(a)
        u += 1
        return t * 2, torch.tensor(a).dtype, torch.as_tensor(a, dtype=torch.float32)

    check(f, lambda: [np.arange(5.0)])


def test_np_asarray_of_a_tensor_shares_its_memory():
    def f(x):
        a = np.asarray(x.T)
        a[0] = 0
        return x, a.dtype

    check(f, lambda: [tensor(3, 2)])


def test_numpy_of_a_computed_tensor_and_back():
    def f(x):
        u = (x * 2).numpy()
        b = np.maximum(u, 0)
        return torch.from_numpy(b) + 1, u

    check(f, lambda: [tensor(4, dtype=torch.float64)])


def test_numpy_scalar_to_from_numpy_raises_as_eagerly():
    def f(a):
        return torch.from_numpy(a.sum())

    with pytest.raises(TypeError):
        f(np.ones(3))
    with pytest.raises(TypeError):
        dynamir.compile(f)(np.ones(3))


# ---- autograd facts the guard keeps ------------------------------------------------------------

def test_requires_grad_is_guarded():
    def f(x):
        return x * 2, x.requires_grad

    compiled = dynamir.compile(f)
    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        same(compiled(w), f(w))
        same(compiled(torch.ones(3)), f(torch.ones(3)))  # the guard fails: a second trace
    assert len(compiled._entries) == 2


def test_layout_is_guarded_both_ways():
    # A trace of a strided argument relied on its being strided: contiguous() and ravel()
    # copied it. Called with a contiguous one, eager updates the argument through them.
    def f(x):
        y = x.contiguous()
        y += 1
        return x

    def g(a):
        v = a.ravel()
        v *= 2
        return a

    for fn, strided, plain in ((f, lambda: torch.ones(3, 2).t(), lambda: torch.ones(2, 3)),
                               (g, lambda: np.ones((3, 2)).T, lambda: np.ones((2, 3)))):
        compiled = dynamir.compile(fn)
        for make in (strided, plain, strided):
            same(compiled(make()), fn(make()))
        assert len(compiled._entries) == 2


def test_grad_mode_is_guarded():
    # torch.is_grad_enabled() is the caller's mode, guarded as Dynamo's global state is, and
    # False inside a traced no_grad block whatever the caller's mode.
    def f(x):
        outside = torch.is_grad_enabled()
        with torch.no_grad():
            inside = torch.is_grad_enabled()
        return (x * 2 if outside else x - 1), outside, inside

    compiled = dynamir.compile(f)
    x = torch.ones(3)
    for enabled in (False, True, False, True):
        with torch.set_grad_enabled(enabled):
            same(compiled(x), f(x))
            assert dynamir.explain(f, x).graph_break_count == 0
    assert len(compiled._entries) == 2  # one trace per mode, each used again


def test_enable_grad_and_set_grad_enabled_blocks():
    # Each block sets the mode torch.is_grad_enabled() reads inside it, with no guard.
    def f(x):
        with torch.enable_grad():
            on = torch.is_grad_enabled()
            with torch.set_grad_enabled(False):
                off = torch.is_grad_enabled()
                y = x * 2
            again = torch.is_grad_enabled()
        with torch.set_grad_enabled(mode=True):
            z = x + 1
        return y, z, on, off, again

    x = torch.ones(3)
    for enabled in (False, True):
        with torch.set_grad_enabled(enabled):
            same(dynamir.compile(f)(x), f(x))
            e = dynamir.explain(f, x)
            assert e.graph_count == 1 and e.graph_break_count == 0, e
            assert not any("grad_mode" in g.text for g in e.guards), e
    # An input that requires grad, used inside enable_grad: the eager result records its
    # gradient, so the frame runs eagerly, whatever the caller's mode.
    w = torch.ones(3, requires_grad=True)
    compiled = dynamir.compile(f)
    got, want = compiled(w), f(w)
    assert got[1].requires_grad and want[1].requires_grad and dynamir.counters()["eager_runs"]
    same(got[1].detach(), want[1].detach())


def test_set_grad_enabled_outside_a_with_statement_breaks():
    def f(x):
        torch.set_grad_enabled(False)  # the caller's mode after the call, too
        return x + 1, torch.is_grad_enabled()

    e = dynamir.explain(f, torch.ones(2))
    assert "outside a with statement" in str(e)
    with torch.enable_grad():
        got = dynamir.compile(f)(torch.ones(2))
        assert got[1] is False and not torch.is_grad_enabled()


def test_numpy_of_a_tensor_that_requires_grad():
    def f(x):
        return x.numpy() * 2, x.numpy(force=True)

    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():  # where numpy() does not raise for it
        same(dynamir.compile(f)(w), f(w))
        assert dynamir.explain(f, w).graph_break_count == 0
    with torch.enable_grad():  # (the tests run under no_grad: conftest.py)
        with pytest.raises(RuntimeError, match="requires grad"):
            f(w)
        with pytest.raises(RuntimeError, match="requires grad"):
            dynamir.compile(f)(w)


# ---- small API ----------------------------------------------------------------------------------

def test_is_tensor_of_anything():
    def f(x, a, n):
        return [v * 2 if torch.is_tensor(v) else v for v in (x, a, n, [x])]

    check(f, lambda: [tensor(3), np.ones(2), 5])


def test_to_another_tensor_and_copies():
    def f(x, i):
        y = x.to(dtype=torch.float64, copy=True)
        z = x.to(x, copy=True)
        z[0] = 9  # a copy: x keeps its value
        same_x = x.to("cpu", non_blocking=True)
        return i.type_as(x), x.to(i), y.dtype, z, same_x is x, x

    check(f, lambda: [tensor(3), tensor(3, dtype=torch.int64)])


@pytest.mark.parametrize("lib", ["torch", "numpy"])
@pytest.mark.parametrize("values", [(1.0, -1.0), (1, 2), (True, 2), (1, 2.5), (False, True)])
def test_where_of_two_python_scalars(lib, values):
    a, b = values
    if lib == "torch":
        def f(x):
            return torch.where(x > 0, a, b)
        make = lambda: [tensor(5)]  # noqa: E731
    else:
        def f(x):
            return np.where(x > 0, a, b)
        make = lambda: [np.arange(5.0) - 2]  # noqa: E731
    check(f, make)


def test_torch_size_of_constants():
    def f(x):
        tail = x.shape[1:]
        new = torch.Size([2]) + tail
        return tail, new, x.new_zeros(new)

    check(f, lambda: [tensor(3, 2, 2)])


# ---- NaN handling -------------------------------------------------------------------------------

def special(dtype):
    return np.array([1.5, np.nan, np.inf, -np.inf, -0.0, 2.0], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_to_num_and_nansum(dtype):
    def numpy_fn(a):
        return (np.nan_to_num(a), np.nan_to_num(a, nan=-1.0, posinf=9, neginf=-9),
                np.nan_to_num(a[1]), np.nansum(a), np.nansum(a.reshape(2, 3), axis=1),
                np.nan_to_num(a > 0), np.nansum(np.arange(3)))

    def torch_fn(x):
        return (torch.nan_to_num(x), x.nan_to_num(nan=0.5, posinf=1e3), torch.nansum(x),
                x.reshape(2, 3).nansum(dim=0, keepdim=True), torch.nan_to_num(x.long()))

    check(numpy_fn, lambda: [special(dtype)])
    check(torch_fn, lambda: [torch.from_numpy(special(dtype))])


def test_nan_to_num_in_place_is_not_modelled():
    def f(a):
        np.nan_to_num(a, copy=False)
        return a

    check(f, lambda: [special(np.float64)], breaks=1)


# ---- out= ---------------------------------------------------------------------------------------

def test_out_keyword_stores_into_the_array():
    def numpy_fn(a, b):
        np.multiply(a, 2, out=a)
        np.add(a, b, out=b)
        r = np.sqrt(b * b, out=(a,))
        return a, b.mean(), r is a

    def torch_fn(x, y, z):
        torch.add(x, y, out=z)
        torch.mul(z, 2, out=z)
        w = torch.where(x > 0, x, y, out=y)
        return z.sum(), w is y, x

    check(numpy_fn, lambda: [np.arange(4.0), np.ones(4)])
    check(lambda a: np.add(a, 1, out=None), lambda: [np.arange(4.0)])
    check(torch_fn, lambda: [tensor(3), tensor(3) * 3, torch.empty(3)])


def test_out_keyword_that_casts_resizes_or_is_refused_runs_for_real():
    def casts(a, o):
        return np.add(a, 1, out=o)  # float64 into float32: numpy casts (same_kind)

    def refused(x, o):
        return torch.relu(x, out=o)  # torch.relu takes no out=

    def overlaps(x):
        return torch.add(x[1:], 1, out=x[:-1])  # torch raises

    check(casts, lambda: [np.arange(3.0), np.zeros(3, np.float32)], breaks=1)
    with pytest.raises(TypeError):
        dynamir.compile(refused)(tensor(3), torch.empty(3))
    x = tensor(4)
    with pytest.raises(RuntimeError):
        overlaps(x.clone())
    with pytest.raises(RuntimeError):
        dynamir.compile(overlaps)(x.clone())


def test_allclose_equal_cross_and_masked_select():
    # torch.allclose and torch.equal are Python bools the graph computes; torch.cross is
    # torch's own arithmetic (its first product fused); masked_select selects as many as only
    # the graph knows.
    def make():
        g = torch.Generator().manual_seed(3)
        return [torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g)]

    check(lambda x, y: (torch.allclose(x, y), torch.allclose(x, x + 1e-9),
                        torch.allclose(x, x[0], rtol=0.5, equal_nan=True)), make)
    # torch computes part of it in place in a tensor of a's shape (it raises for some such
    # operands): where b broadcasts a, the call runs for real.
    check(lambda x, y: torch.allclose(x[0], x), make, breaks=1)
    check(lambda x, y: (torch.equal(x, x.clone()), torch.equal(x, y), torch.equal(x, x[:2]),
                        torch.equal(x, x.double()), x.equal(x * 1)), make)
    check(lambda x, y: torch.cross(x, y, dim=1) + torch.linalg.cross(x, y), make)
    check(lambda x, y: torch.cross(x[:3].T, y[:3].T), make)  # dim=None: the first of size 3
    check(lambda x, y: torch.linalg.cross(x, y[:1], dim=-1), make)  # broadcast
    check(lambda x, y: torch.cross((x * 9).long(), (y * 9).long(), dim=1), make)  # no fma
    check(lambda x, y: torch.masked_select(x, x > 0) * 2 + x.masked_select(y[:, :1] > 0).sum(),
          make)
    check(lambda x, y: torch.masked_select(x, torch.tensor([True, False, True])), make)
    check(lambda x, y: torch.masked_select(x, x > 10), make)  # nothing selected


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_functional_pad(mode):
    F = torch.nn.functional
    check(lambda t: F.pad(t, (1, 2, 2, 1), mode=mode), lambda: [tensor(1, 2, 3, 4)])
    check(lambda t: F.pad(t, (2, 0), mode=mode) * 2, lambda: [tensor(2, 3, 4)])
    if mode == "constant":
        check(lambda t: F.pad(t, (1, 1, 1, 1, 1, 1), value=3.5), lambda: [tensor(2, 3, 4)])
        check(lambda t: F.pad(t, (1, 1), value=2.7), lambda: [tensor(3, 4, dtype=torch.int64)])
