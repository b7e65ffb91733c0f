"""Complex arrays (numpy's complex64 and complex128) compiled with no graph break and compared
with eager numpy in type, dtype, shape and value: arithmetic as numpy's loops compute it
(Smith's division, hypot for the magnitude), exp, real and imaginary parts, conjugates,
products and sums; what dyn does not define on complex numbers (a sine, an ordering) breaks
cleanly with the verifier's reason and gives numpy's result."""

import warnings

import _dynamir
import numpy as np
import pytest

import dynamir
from test_library_breadth import assert_same, check

COMPLEX = [np.complex64, np.complex128]


def complexes(dtype, shape=(3, 4), seed=3):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)


def tol(dtype):
    return 8 * float(np.finfo(np.empty(0, dtype).real.dtype).eps)


def compiled_whole(fn, *args):
    """fn runs as one graph, with no break and no eager frame."""
    report = dynamir.explain(fn, *args)
    assert report.graph_count == 1 and report.graph_break_count == 0, str(report)
    return report


@pytest.mark.parametrize("dtype", COMPLEX)
def test_arithmetic_and_division_as_numpy(dtype):
    x, y = complexes(dtype), complexes(dtype, seed=4)
    y.flat[0] = 0  # numpy's division by a zero divisor: inf and nan per part
    y.flat[1] = 1e-30j
    fn = lambda x, y: (x + y, x - y, x * y, x / y, -x, +x, x * 2, 1j * x, x / 3 + 2.5j)  # noqa
    compiled_whole(fn, x, y)
    with np.errstate(all="ignore"):
        check(fn, x, y, rtol=tol(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_functions_parts_and_comparisons(dtype):
    x = complexes(dtype)
    x.flat[:4] = [0, 3 + 4j, -2.5, 1e-3j]
    fn = lambda x: (np.exp(x), abs(x), np.abs(x), x.real, x.imag, np.real(x), np.imag(x),  # noqa
                    np.conj(x), x.conjugate(), x == x.conj(), x != 3 + 4j, x.astype(bool))
    compiled_whole(fn, x)
    check(fn, x, rtol=tol(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_magnitude_is_numpys_bit_for_bit(dtype):
    """numpy's SIMD loop: hi * sqrt(fma(lo / hi, lo / hi, 1)) in the parts' type. libm's
    hypot (and glibc's hypotf) differ from it on a third (a tenth) of random values, and the
    same without the fused multiply-add on 4% (difftest-style values, compared exactly)."""
    rng = np.random.default_rng(7)
    n = 1 << 15
    z = (rng.standard_normal(n) * np.exp(rng.uniform(-30, 30, n))
         + 1j * rng.standard_normal(n)).astype(dtype)
    check(lambda z: (np.abs(z), abs(z[::3])), z)


def test_magnitude_is_hypot_at_the_extremes():
    x = np.array([3e300 + 4e300j, 3e-320 + 4e-320j, np.inf + np.nan * 1j, np.nan + 0j, 0j,
                  -1e308 - 1e308j])
    for dtype in COMPLEX:
        z = x.astype(dtype) if dtype == np.complex128 else np.array(
            [3e30 + 4e30j, 3e-40 + 4e-40j, complex(np.inf, np.nan), 1 + 1j], dtype)
        with np.errstate(all="ignore"):
            check(lambda z: np.abs(z), z, rtol=tol(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_promotion_reductions_and_products(dtype):
    x, m = complexes(dtype), complexes(dtype, shape=(4, 5), seed=5)
    f32 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    i64 = np.arange(12).reshape(3, 4)
    fn = lambda x, m, f, i: (x + f, x * i, x + 1.5, f * 2j, i + 1j, x.sum(), x.sum(axis=0),  # noqa
                             x.mean(axis=1), x.prod(axis=0), x @ m, np.matmul(f, m),
                             x.astype(np.complex128), f.astype(np.complex64))
    compiled_whole(fn, x, m, f32, i64)
    check(fn, x, m, f32, i64, rtol=tol(dtype))


def test_constants_and_constructors():
    fn = lambda x: (x + np.array([1 + 2j, 3, -1j, 0.5]), np.zeros(4, np.complex64) + x,  # noqa
                    np.full(4, 2 - 1j) * x, np.ones_like(x) * 1j)
    x = complexes(np.complex128, shape=(4,))
    compiled_whole(fn, x)
    check(fn, x, rtol=tol(np.complex128))


def test_movement_and_where():
    x = complexes(np.complex64, shape=(3, 4))
    fn = lambda x: (x.T, x[1:, ::2], x.reshape(2, 6), np.concatenate([x, x]),  # noqa
                    np.where(x.real > 0, x, 0))
    compiled_whole(fn, x)
    check(fn, x)


def test_what_complex_numbers_do_not_have_breaks_cleanly():
    """Each is a graph break with a reason (the op's definition) and numpy's own result:
    functions dyn does not define on complex numbers, orderings, a warning numpy gives."""
    x = complexes(np.complex128)
    for fn in [lambda x: np.sin(x) + 1, lambda x: (x * 2).max(), lambda x: np.sort(x * 2),
               lambda x: x < x * 2, lambda x: (x * 2).astype(np.float64), lambda x: np.sqrt(x),
               lambda x: x ** 2, lambda x: x // 2]:
        with np.errstate(all="ignore"):
            try:
                want = fn(x)
            except TypeError:
                with pytest.raises(TypeError):
                    dynamir.compile(fn)(x)
                continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = dynamir.compile(fn)(x)
        assert_same(got, want)


def test_stores_through_complex_parts_run_for_real():
    """numpy's x.real and x.imag are views of x: a store into one changes x, and a store into
    x changes them; the trace computes parts as new arrays, so such stores break."""

    def through_part(x):
        r = x.real
        r[0] = 7.0
        return x * 2

    def into_base(x):
        r = x.imag
        x[1] = 5 + 5j
        return r + 1

    for fn in (through_part, into_base):
        x = complexes(np.complex128, shape=(4,))
        want_x = x.copy()
        want = fn(want_x)
        got = dynamir.compile(fn)(x)
        assert_same(got, want)
        assert_same(x, want_x)


def test_real_arrays_parts():
    """x.real of a real array is x's own memory (a store into it is a store into x); x.imag is
    read-only zeros."""

    def f(x):
        r = x.real
        r[0] = 9.0
        return x + x.imag

    x = np.arange(4.0)
    want_x = x.copy()
    want = f(want_x)
    assert_same(dynamir.compile(f)(x), want)
    assert_same(x, want_x)


def test_gpu_graphs_have_no_complex_numbers():
    """The GPU pipeline has no complex lowering yet: dyn-gpu-map names the reason (the frame
    then runs eagerly on a GPU machine)."""
    traced = dynamir.trace(lambda x: x * x + 1, complexes(np.complex64, shape=(8,)))
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graph = next(name for name in traced.module.functions if name.endswith("_graph0"))
    with pytest.raises(RuntimeError, match="complex numbers, which GPU graphs do not have"):
        _dynamir.compile_graph(traced.module._native, graph, "cuda")


def test_stores_into_complex_arrays():
    """Stores of Python numbers (complex ones too) and arrays into complex arrays, in place."""

    def f(y, z):
        y[:] = 3
        y[0] = 1 + 2j
        y[1:] += 1j * z[1:]
        z[::2] = y[::2].conj()
        return y * 2, z

    y, z = complexes(np.complex128, shape=(5,)), complexes(np.complex64, shape=(5,), seed=6)
    compiled_whole(f, y.copy(), z.copy())
    want_y, want_z = y.copy(), z.copy()
    want = f(want_y, want_z)
    got = dynamir.compile(f)(y, z)
    assert_same(got, want)
    assert_same((y, z), (want_y, want_z))


def test_regressions_from_the_differential_tester():
    # 20261201:103 and :258: stores of Python ints into complex arrays (x[...] = 3) crashed
    # the tracer, which read the element type as an integer's width.
    def p103(x, y):
        x = np.sum((y[y != 0]), axis=-1)
        y[:] = 3
        return x, y + 1

    def p258(x):
        v1 = np.where(x < x, x, x).copy()
        x[...] = 3
        return x, v1 + 1j

    for fn, args in [(p103, (np.ones(1, np.float32), np.ones(1, np.complex128))),
                     (p258, (np.zeros((5, 0), np.complex64),)),
                     (p258, (complexes(np.complex64),))]:
        eager_args = [a.copy() for a in args]
        with np.errstate(all="ignore"):
            want = fn(*eager_args)
        compiled_args = [a.copy() for a in args]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same(dynamir.compile(fn)(*compiled_args), want)
        assert_same(compiled_args, eager_args)


def test_loops_and_diagonals_of_complex_arrays():
    def f(x):
        acc = np.zeros(x.shape[1], np.complex128)
        for i in range(x.shape[0]):
            acc = acc * 1j + x[i]
        return acc, np.diag(x[0], 1)

    x = complexes(np.complex128, shape=(3, 4))
    check(f, x, rtol=tol(np.complex128))


def assert_parts_close(got, want, rtol):
    """Real and imaginary parts each equal within rtol (NaN where numpy has NaN, part by part:
    np.isclose calls a complex number NaN if either part is), subnormal results within the
    smallest normal number (exp(-745 + 1e300i) is -5e-324 or -0 by the order of glibc's
    roundings)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    tiny = float(np.finfo(np.real(want).dtype).smallest_normal)
    for take in (np.real, np.imag):
        g, w = take(got).astype(np.float64), take(want).astype(np.float64)
        ok = np.isclose(g, w, rtol=rtol, atol=tiny, equal_nan=True)
        assert ok.all(), (take.__name__, got[~ok][:4], want[~ok][:4])


@pytest.mark.parametrize("dtype", COMPLEX)
def test_special_values_as_numpy(dtype):
    """Every pair of parts from infinities, NaN, signed zeros, huge and subnormal values:
    products (fused as numpy's SIMD loop), quotients, exp (C99's infinities; difftest
    293000020:2: exp(inf + inf·i) is inf + NaN·i, exp(-inf - inf·i) is 0 - 0i) and magnitudes."""
    parts = (np.inf, -np.inf, np.nan, 0.0, -0.0, 1.5, -3.0, 1e300, 1e-310, 710.0, -745.0)
    z = np.array([complex(a, b) for a in parts for b in parts])
    if dtype == np.complex64:
        z = np.where(np.isfinite(z) & (np.abs(z) > 1e30), z * 1e-270, z)
    z = z.astype(dtype)
    a, b = np.repeat(z, z.size), np.tile(z, z.size)
    with np.errstate(all="ignore"):
        for fn, args in [(lambda a, b: a * b, (a, b)), (lambda a, b: a / b, (a, b)),
                         (lambda z: np.exp(z), (z,))]:
            assert_parts_close(dynamir.compile(fn)(*args), fn(*args), tol(dtype))
        got, want = dynamir.compile(lambda z: np.abs(z))(z), np.abs(z)
        assert np.allclose(got, want, rtol=tol(dtype), atol=0, equal_nan=True)


def test_long_complex_sums_are_as_accurate_as_numpy():
    """A complex sum is its parts' float sums (vectorized and blocked as numpy's pairwise sum):
    one serial complex accumulator was 6.5e-15 from the exact sum of 2^22 normals, numpy 2.3e-16."""
    rng = np.random.default_rng(1)
    z = rng.standard_normal(1 << 20) + 1j * rng.standard_normal(1 << 20)
    got, want = dynamir.compile(lambda z: (z.sum(), z.mean()))(z), (z.sum(), z.mean())
    for g, w in zip(got, want):
        assert abs(g - w) <= 1e-14 * abs(w), (g, w)


def test_mean_over_no_dimension_divides_as_complex_numbers():
    """difftest 293400001:63: the mean of a 0-d complex array is x / (1 + 0i), NaN + NaN·i for
    inf + inf·i; the fold that makes a reduction over no dimension its input keeps off complex
    means, and the lowering divides without a reduction loop (consumers stay exact)."""
    for x in [np.array(complex(np.inf, np.inf)), np.array(1.5 + 2j),
              np.array([complex(np.inf, 1), 2j])]:
        for fn in [lambda x: (x.mean(),), lambda x: (np.stack([x, x]) * x.mean(),),
                   lambda x: (x.sum(), x.mean(axis=()))]:
            with np.errstate(all="ignore"):
                want, got = fn(x), dynamir.compile(fn)(x)
            for g, w in zip(got, want):
                assert_parts_close(np.asarray(g), np.asarray(w), tol(np.complex128))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_matrix_products_scale_as_blas_does(dtype):
    """difftest 295700000: numpy multiplies complex matrices with gemm/gemv, which return
    alpha * A B with alpha = 1 + 0i; an infinite part times alpha's 0 is NaN, so numpy's
    `exp(x + 300) @ exp(x + 300).T` is NaN + NaN·i where the plain sums are inf + inf·i."""
    x = complexes(dtype)
    m = complexes(dtype, (4, 2), seed=4)
    x[0, 1] = complex(np.inf, 0)
    x[1, 2] = complex(1, np.inf)
    for fn, args in [(lambda x: np.exp(x + 300) @ np.exp(x + 300).T, (x,)),
                     (lambda x, m: x @ m, (x, m)), (lambda x, m: np.dot(x, m), (x, m)),
                     (lambda x, v: x @ v, (x, m[:, 0].copy())),
                     (lambda v, x: v @ x, (x[:, 0].copy(), x))]:
        with np.errstate(all="ignore"):
            want = fn(*args)
            got = dynamir.compile(fn)(*args)
        assert_parts_close(got, want, tol(dtype))
