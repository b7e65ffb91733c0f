"""numpy functions of numerical kernels that the tracer models (diff, vdot, inner, meshgrid, cov,
corrcoef, einsum, the numpy scalar types as other calls; arctan2 as dyn.atan2; cumsum and
cumprod as dyn's scans): compared with eager numpy or torch in type, dtype, shape and value,
with no graph break, and a break where a form is not modelled."""

import pathlib

import numpy as np
import pytest

import _dynamir
import dynamir
from test_library_breadth import FLOATS, array, check, special_floats, torch, ulps


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
def test_diff(dtype):
    x = array((4, 6), dtype)
    check(lambda x: np.diff(x), x)
    check(lambda x: np.diff(x, 2, axis=0), x)
    check(lambda x: np.diff(x, n=0), x)
    check(lambda x: np.diff(x, n=9), x)  # past the size: empty
    check(lambda x: np.diff(x, prepend=0), x, breaks=1)
    check(lambda x: np.diff(x > 0), x, breaks=1)  # booleans: not_equal


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
def test_vdot(dtype):
    check(lambda x, y: np.vdot(x, y), array((3, 4), dtype), array((12,), dtype), rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
def test_inner(dtype):
    check(lambda x, y: np.inner(x, y), array((6,), dtype), array((6,), dtype), rtol=1e-5, atol=1e-5)
    check(lambda x, y: np.inner(x, y), array((2, 3, 6), dtype), array((4, 6), dtype), rtol=1e-5,
          atol=1e-5)
    check(lambda x, y: np.inner(x, y), array((3,), dtype), array((4,), dtype))  # raises
    check(lambda x, y: np.inner(x, y), array((3,), dtype), np.float64(2.0))  # a 0-d product


def test_meshgrid():
    x, y, z = np.arange(4.0), array((3,), np.float32), array((2,), np.int64)
    check(lambda x, y: np.meshgrid(x, y), x, y)
    check(lambda x, y, z: np.meshgrid(x, y, z, indexing="ij"), x, y, z)
    check(lambda x, y, z: np.meshgrid(x, y, z), x, y, z)
    check(lambda x, y: np.meshgrid(x, y, sparse=True), x, y, breaks=1)
    tx, ty = torch.arange(4.0), torch.randn(3)
    check(lambda x, y: torch.meshgrid(x, y, indexing="ij"), tx, ty)
    check(lambda x, y: torch.meshgrid(x, y, indexing="xy"), tx, ty)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
def test_cov_and_corrcoef(dtype):
    x = array((3, 7), dtype)
    check(lambda x: np.cov(x), x, rtol=1e-12)
    check(lambda x: np.cov(x, rowvar=False), x, rtol=1e-12)
    check(lambda x: np.cov(x, bias=True), x, rtol=1e-12)
    check(lambda x: np.cov(x, ddof=2), x, rtol=1e-12)
    check(lambda x: np.cov(x[0]), x, rtol=1e-12)  # one variable: a 0-d array
    check(lambda x: np.corrcoef(x), x, rtol=1e-12)
    check(lambda x: np.corrcoef(x, rowvar=False), x, rtol=1e-12)
    check(lambda x: np.cov(x, ddof=7), x, breaks=1)  # divides by zero (numpy warns)
    check(lambda x: np.cov(x, x), x, breaks=1)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output: ik
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,jk->bki", [(2, 3, 4), (4, 5)]),
    ("i,i->", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("ii->i", [(4, 4)]),  # a repeated letter: the diagonal
    ("ii", [(4, 4)]),  # the trace
    ("iji->j", [(3, 2, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("ii,ij->j", [(3, 3), (3, 2)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM, ids=[s for s, _ in EINSUM])
@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
def test_einsum(spec, shapes, dtype):
    xs = [array(s, dtype) for s in shapes]
    check(lambda *xs: np.einsum(spec, *xs), *xs, rtol=1e-5)
    if dtype != np.int64:
        ts = [torch.from_numpy(x) for x in xs]
        check(lambda *ts: torch.einsum(spec, *ts), *ts, rtol=1e-5)


def test_einsum_forms_not_modelled_break():
    x = array((3, 3), np.float32)
    check(lambda x: np.einsum("...i,i->...", x, x[0]), x, breaks=1)
    check(lambda x: np.einsum("ij,jk,kl->il", x, x, x), x, breaks=1)
    check(lambda x: np.einsum("ij,jk->ik", x, x[:2]), x)  # sizes disagree: raises


def test_einsum_that_only_permutes_is_a_view():
    # Both libraries return a view of the operand for a pure permutation: a store through it
    # changes the argument. A reduction's result is a new array.
    def permute(x):
        r = np.einsum("ij->ji", x)
        r[0, 1] = 5.0
        return r.sum()

    def reduce(x):
        r = np.einsum("ij->i", x)
        r[0] = 5.0
        return r

    def scale(t):
        return torch.einsum("ij->ji", t).mul_(2).sum()

    def diagonal(x):  # a view too
        r = np.einsum("ii->i", x)
        r[1] = 7.0
        return x.sum()

    x = array((2, 3), np.float32)
    square = array((3, 3), np.float32)
    for fn, make in ((permute, x.copy), (reduce, x.copy), (scale, lambda: torch.tensor(x)),
                     (diagonal, square.copy)):
        want_arg, got_arg = make(), make()
        want, got = fn(want_arg), dynamir.compile(fn)(got_arg)
        assert np.allclose(np.asarray(got), np.asarray(want), rtol=1e-5)  # a float32 sum
        assert np.array_equal(np.asarray(got_arg), np.asarray(want_arg))  # the argument too
        assert dynamir.explain(fn, make()).graph_break_count == 0


def test_numpy_scalar_types_of_constants_promote_strongly():
    x = array((5,), np.float32)
    check(lambda x: x * np.float64(0.5), x)  # float64, as a numpy scalar makes it
    check(lambda x: x * np.float32(0.1) + np.int64(3), x)
    check(lambda x: np.int32(7) * (x > 0), x)
    check(lambda x: x + np.int32(2**40), x)  # raises OverflowError


def test_numpy_math_of_python_numbers_is_a_constant():
    """A numpy ufunc of numbers the trace holds as constants is computed while tracing, a
    numpy scalar; one that warns runs for real (a break), where numpy warns."""
    import math
    x = array((5,), np.float64)
    check(lambda x, a, c: x * np.exp(a * c) + math.sqrt(a) + np.log1p(c), x, 2.0, 0.5)
    check(lambda x, a: (np.exp(a), np.float32(a) * np.sqrt(np.float32(2)), x + np.hypot(a, 1)),
          x, 3.0)
    check(lambda x, a: (np.divmod(a, 3.0), x * np.modf(a)[0]), x, 7.5)  # two outputs
    check(lambda x, a: x * np.exp(a), x, 1000.0, breaks=1)  # overflow: numpy warns
    check(lambda x, a: np.sqrt(-a) + x, x, 1.0, breaks=1)  # invalid: numpy warns, NaN


@pytest.mark.parametrize("dtype", FLOATS + [np.float16, np.int64, np.bool_])
def test_arctan2(dtype):
    y = special_floats(dtype) if dtype in FLOATS + [np.float16] else array((139,), dtype)
    x = array(y.shape, dtype)
    tol = ulps(np.float32) if dtype != np.float64 else ulps(np.float64)
    check(lambda y, x: np.arctan2(y, x), y, x, rtol=tol, atol=1e-30)
    check(lambda y: np.arctan2(y, 2.0), y, rtol=tol, atol=1e-30)
    if dtype in FLOATS:
        ty, tx = torch.from_numpy(y), torch.from_numpy(x)
        check(lambda y, x: torch.atan2(y, x) + y.arctan2(x), ty, tx, rtol=tol, atol=1e-6)


def test_arctan2_lowers_for_the_gpu():
    traced = dynamir.trace(lambda y, x: np.arctan2(y, x) * 2, np.ones(8, np.float32),
                           np.ones(8, np.float32))
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graph = [f for f in traced.module.functions if "_graph" in f][0]
    assert pathlib.Path(_dynamir.compile_graph(traced.module._native, graph, "cuda")).exists()


@pytest.mark.parametrize("dtype", FLOATS + [np.float16, np.int32, np.int64, np.bool_])
def test_cumsum_and_cumprod(dtype):
    x = array((4, 6), dtype, scale=2)
    if dtype in FLOATS:
        x[0, 0] = -0.0  # numpy keeps a leading -0.0 (it copies the first element)
    for name in ("cumsum", "cumprod"):
        fn = getattr(np, name)
        check(lambda x: fn(x, axis=1), x, backends=("llvm", "eager"))
        check(lambda x: fn(x, 0), x)
        check(lambda x: fn(x), x)  # flattened
        check(lambda x: getattr(x, name)(axis=1), x)
        check(lambda x: fn(x[:0], axis=0), x)  # empty
    check(lambda x: np.cumsum(x, axis=1, dtype=np.float64), x)
    check(lambda x: np.cumsum(x, axis=2), x)  # raises AxisError


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool])
def test_torch_cumsum_and_cumprod(dtype):
    x = torch.from_numpy(array((4, 6), np.float64, scale=2)).to(dtype)
    if dtype.is_floating_point:
        x[0, 0] = -0.0  # torch's sum starts from +0: the result's first element is 0.0
    check(lambda x: torch.cumsum(x, 1), x)
    check(lambda x: torch.cumprod(x, dim=0), x)
    check(lambda x: x.cumsum(0), x)
    check(lambda x: x.cumsum(dim=-1, dtype=torch.float64), x)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_])
def test_ufunc_methods(dtype):
    x = array((3, 4), dtype)
    # numpy adds 8 or more float32s pairwise (8 running sums), the graph one after another: a
    # few ulps apart for some inputs.
    rtol = ulps(dtype) if dtype == np.float32 else 1e-12
    for ufunc in [np.add, np.multiply, np.maximum, np.minimum, np.logical_and, np.logical_or]:
        check(lambda x: ufunc.reduce(x), x, rtol=rtol)
        check(lambda x: ufunc.reduce(x, axis=1, keepdims=True), x, rtol=rtol)
        check(lambda x: ufunc.reduce(x, axis=None), x, rtol=rtol)
    check(lambda x: np.add.accumulate(x), x)
    check(lambda x: np.multiply.accumulate(x, axis=1), x, rtol=1e-12)
    check(lambda x: np.multiply.outer(x[0], x), x)
    check(lambda x: np.subtract.outer(x, x[:, 0]), x)  # raises for bools
    check(lambda x: np.greater.outer(x[0], x[1]), x)
    check(lambda x: np.sin.outer(x, x), x, breaks=1)  # numpy raises


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_])
def test_trace_ravel_flatten(dtype):
    x = array((3, 4), dtype)
    check(lambda x: np.trace(x), x)
    check(lambda x: x.trace(1), x)
    check(lambda x: np.trace(x.reshape(2, 3, 2), offset=-1, axis1=1, axis2=2), x)
    check(lambda x: (np.ravel(x.T), x.ravel(), x.flatten()), x)
    check(lambda x: np.ravel(x, order="F"), x, breaks=1)
    t = torch.from_numpy(x)
    check(lambda t: (torch.trace(t), t.trace(), torch.ravel(t.t()), t.ravel()), t,
          breaks=1 if dtype == np.bool_ else 0)


@pytest.mark.parametrize("dtype", FLOATS + [np.float16, np.int32, np.int64, np.bool_])
def test_running_maximum_and_minimum(dtype):
    x = array((4, 6), dtype, scale=2)
    if dtype in FLOATS:
        x[1, 2] = np.nan  # NaN from there on, as numpy's maximum does
    for ufunc in (np.maximum, np.minimum):
        check(lambda x: ufunc.accumulate(x), x, backends=("llvm", "eager"))
        check(lambda x: ufunc.accumulate(x, axis=-1), x, backends=("llvm", "eager"))
        check(lambda x: ufunc.accumulate(x[:, :0], axis=1), x)  # empty
    check(lambda x: np.maximum.accumulate(x, axis=None), x, breaks=1)  # numpy raises
    check(lambda x: np.maximum.accumulate(x[0, 0]), x, breaks=1)  # a 0-d array: raises
    traced = dynamir.trace(lambda x: np.maximum.accumulate(x, axis=1), x)
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graph = [f for f in traced.module.functions if "_graph" in f][0]
    assert pathlib.Path(_dynamir.compile_graph(traced.module._native, graph, "cuda")).exists()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_addmm_addmv_baddbmm(dtype):
    def tensor(*shape):
        return torch.from_numpy(array(shape, np.float64)).to(dtype)

    x, a, b, v = tensor(3, 4), tensor(3, 5), tensor(5, 4), tensor(5)
    floats = dtype.is_floating_point
    # torch adds input inside its gemm; the graph after it: a few ulps of the product's terms
    # (about 10 here) apart.
    tol = {"rtol": 1e-5, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 1e-12,
                                                                        "atol": 1e-12}
    check(lambda x, a, b: torch.addmm(x, a, b), x, a, b, **tol)
    check(lambda x, a, b: torch.addmm(x[0], a, b, beta=2, alpha=3), x, a, b, **tol)
    check(lambda x, a, b: x.addmm(a, b, beta=0), x * float("nan") if floats else x, a, b, **tol)
    check(lambda x, a, v: torch.addmv(x[:, 0], a, v), x, a, v, **tol)
    check(lambda x, a, b: torch.baddbmm(x, a[None], b[None], alpha=2), x, a, b, **tol)
    check(lambda x, a, b: torch.addmm(x.T, a, b), x, a, b, breaks=1)  # torch raises
    check(lambda x, a, b: torch.addmm(x, a, b.float() if dtype == torch.float64 else b.double()),
          x, a, b, breaks=1)  # torch raises
    check(lambda x, a, b: torch.addmm(x, a, b, alpha=0.5), x, a, b, **tol,
          breaks=0 if floats else 1)


def test_slice_object_attributes():
    x = np.arange(10.0)

    def f(x):
        s = slice(1, None, 2)
        return x[s] * s.step, s.start, s.stop

    check(f, x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8, np.bool_])
def test_round_half_to_even(dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.7, -3.2, 1e300 if dtype == np.float64 else 7.0,
                  np.nan if np.dtype(dtype).kind == "f" else 1]).astype(dtype)
    check(lambda x: (np.rint(x), np.round(x), x.round(), np.round(x, 0)), x)
    check(lambda x: np.round(x, 2), x, breaks=1)  # scaled by 10**2: not modelled
    if dtype != np.int8 and dtype != np.float16:
        t = torch.from_numpy(x)
        check(lambda x: (torch.round(x), x.round()), t, breaks=1 if dtype == np.bool_ else 0)
    if np.dtype(dtype).kind == "f":
        check(lambda x: np.reciprocal(x), x)
    else:
        check(lambda x: np.reciprocal(x), x, breaks=1)  # C's integer 1 / x


def test_numpy_round_of_integers_is_the_array_itself():  # difftest 289000027:43
    # numpy returns an integer array itself from round (no copy): a store into the result
    # reaches the argument. torch makes a new tensor.
    def f(x):
        r = np.round(x)
        r *= 2
        return r is x, x.round() is x, x

    from test_stores import check as check_arguments
    for dtype in (np.int8, np.int32, np.int64):
        check_arguments(f, np.arange(-3, 3, dtype=dtype))
    # a 0-d array rounds to a new numpy scalar (difftest 289100018:70)
    check(lambda x: (np.round(x), x.round(), np.round(x[()] + 1), np.round(x) is x), np.array(-1))
    t = torch.arange(4)
    check(lambda t: (torch.round(t) is t, torch.round(t).add_(1), t), t)


def test_mgrid_and_ogrid():
    # Constant slices, computed as numpy does: i * step + start along each, int64 for integer
    # bounds, float64 otherwise; one slice alone is np.arange.
    x = np.linspace(0.0, 1.0, 12).reshape(3, 4)
    check(lambda x: np.mgrid[0:3, 0:4] * x, x)
    check(lambda x: (np.mgrid[-1:1:0.25, 0:3], np.mgrid[0.1:1.1:0.1, 3:0:-1], x), x)
    check(lambda x: (np.mgrid[0:5], np.mgrid[0:2:0.5], np.mgrid[:3], np.mgrid[0:0, 0:2], x), x)
    check(lambda x: np.ogrid[0:3, 0:4][0] + np.ogrid[0:3, 0:4][1] * x, x)
    # A complex step (a count of points) is not modelled: the subscript breaks.
    check(lambda x: np.mgrid[0:1:4j] + x[0], x, breaks=1)


def test_histogram_equals_numpy_bit_for_bit():
    # numpy's own steps in its own dtypes: outer edges (a.min()/a.max() or range), np.linspace's
    # edges, truncated bins corrected against the edges, counts.
    rng = np.random.default_rng(11)
    for trial in range(40):
        dtype = [np.float64, np.float32, np.int64, np.int32, np.int16][trial % 5]
        scale = 10.0 ** rng.integers(-6, 7)
        a = (rng.normal(size=int(rng.integers(1, 200))) * scale + rng.normal() * scale)
        bins = int(rng.integers(1, 40))
        if trial % 2:
            low = float(rng.normal() * scale)
            r = (low, low + abs(float(rng.normal() * scale)))
            check(lambda a: np.histogram(a, bins, range=r), a.astype(dtype))
        else:
            check(lambda a: np.histogram(a, bins=bins), a.astype(dtype))
    check(lambda a: np.histogram(a), np.full(10, 2.5))  # equal outer edges: 0.5 apart
    check(lambda a: np.histogram(a, 4, range=(0, 1)), np.array([0.0, np.nan, 1.0, np.inf, -3.0]))
    check(lambda a: np.histogram(a, 3), np.array([0.0, np.nan, 1.0]))  # ValueError
    check(lambda a: np.histogram(a, 30), np.array([1.0, 1.0 + 1e-15]))  # edges not increasing
    check(lambda a: np.histogram(a, 3, weights=a), np.arange(5.0), breaks=1)


def test_numpy_functions_written_in_python_are_inlined():
    """numpy functions the table does not model but numpy writes in Python (over
    __array_function__) trace through numpy's own code; where that code does what the trace
    does not model, the call breaks and runs for real, never the whole frame."""
    x = np.linspace(-2.0, 3.0, 12)
    y = np.linspace(1.0, -1.0, 12).astype(np.float32)
    check(lambda x: np.polyval([1.0, -2.0, 3.0], x), x)
    check(lambda x, y: np.trapezoid(y, x), x, y, rtol=1e-6)
    check(lambda x: np.logspace(0, 2, 12) * x, x)
    check(lambda x: np.asanyarray(x) * 2, x)
    # numpy's code asks issubclass of dtype types (callables to the trace), tuples of them too
    check(lambda x: (issubclass(x.dtype.type, (np.integer, np.bool_)), x + 1), x)
    check(lambda x: (issubclass(x.dtype.type, np.floating), x + 1), x)
    s = np.eye(3) * 4 + 1
    check(lambda x, s: (x * 2, np.linalg.det(s)), x, s, breaks=1)
    report = dynamir.explain(lambda s: np.linalg.inv(s) + 1, s)
    assert report.graph_count == 1 and "inside numpy's inv" in str(report), str(report)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
def test_cross(dtype):
    a, b = array((4, 3), dtype), array((3,), dtype)
    check(lambda a, b: np.cross(a, b), a, b)
    check(lambda a, b: np.cross(a[:2], a[2:], axis=-1), a, b)
    check(lambda a, b: np.cross(a[:, :2], b[:2]), a, b, breaks=1)  # 2-vectors: not modelled


def test_unravel_index():
    a = array((3, 4), np.float64)
    check(lambda a: np.unravel_index(np.argmax(a), a.shape), a)
    check(lambda a: np.unravel_index(np.argsort(a.ravel()), (2, 6)), a)
    check(lambda a: np.unravel_index(np.argsort(a, axis=0).astype(np.int32), (3, 4)), a)
    check(lambda a: np.unravel_index(np.argsort(a.ravel()) + 9, (4, 5)), a)  # raises ValueError


PADS = [
    lambda x: np.pad(x, 1),
    lambda x: np.pad(x, (1, 2)),
    lambda x: np.pad(x, ((0, 1), (2, 0)), constant_values=-1.5),  # converted as numpy does
    lambda x: np.pad(x, ((1,), (2,)), constant_values=300.7),
    lambda x: np.pad(x, 2, mode="edge"),
    lambda x: np.pad(x, ((1, 2), (3, 1)), mode="reflect"),
    lambda x: np.pad(x, ((1, 2), (3, 1)), "symmetric"),
    lambda x: np.pad(x, ((3, 2), (4, 1)), "wrap"),
    lambda x: np.pad(x, 0),  # a new array all the same
]


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.uint8])
def test_pad(dtype):
    x = array((3, 4), dtype)
    for f in PADS:
        check(f, x)
    check(lambda x: np.pad(x, 5, mode="reflect"), x, breaks=1)  # reflections repeated
    check(lambda x: np.pad(x, 1, mode="mean"), x, breaks=1)  # statistics: numpy's code


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_])
def test_reductions_with_where_and_initial(dtype):
    # numpy's where= masks out elements (the identity, or initial for max and min, takes
    # their place); initial= joins the result, converted to its dtype as numpy converts it.
    x = array((3, 4), dtype)
    mask = array((3, 4), np.float64) > 0
    check(lambda x, m: np.sum(x, where=m), x, mask, rtol=1e-6)
    check(lambda x, m: np.sum(x, axis=1, where=m[0], keepdims=True, initial=1.5), x, mask,
          rtol=1e-6)
    check(lambda x, m: np.max(x, axis=0, where=m, initial=-1), x, mask)
    check(lambda x, m: x.min(initial=0.5), x, mask)
    check(lambda x, m: np.min(x[:0], axis=0, initial=5), x, mask)  # empty: the initial value
    check(lambda x, m: np.max(x, where=m), x, mask)  # raises: no initial value
    if dtype != np.bool_:
        check(lambda x, m: np.prod(x, where=m, initial=2), x, mask, rtol=1e-6)
        check(lambda x, m: np.mean(x, axis=0, where=m), x, mask, rtol=1e-6)
    check(lambda x, m: np.sum(x, where=[True, False, True, True]), x, mask, breaks=1)  # a list
