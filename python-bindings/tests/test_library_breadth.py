"""The breadth of numpy and torch the tracer models: functions that are several dyn ops (or one
new elementwise op), each compared with eager numpy or torch in type, dtype, shape and value on
several shapes and dtypes, with no graph break where the form is modelled and a break where it
is deliberately not.

Values are compared exactly, except where the compiled code computes a transcendental function
with its own polynomial or libm (exp, log1p, tanh, ...; a few ulp, `ulps=`) or sums in another
order (reductions, `rtol=`).
"""

import math
import warnings

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(20240611)


def assert_same(got, want, rtol=0.0, atol=0.0):
    """Same Python type, dtype, shape and values (NaN equal to NaN; floats within rtol and
    atol)."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol)
        return
    if isinstance(want, torch.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                     want.dtype, want.shape)
        got, want = got.numpy(), want.numpy()
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want), (
            got.dtype, np.shape(got), want.dtype, np.shape(want))
        if want.dtype.kind in "fc" and (rtol or atol):
            assert np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True), (got, want)
        else:
            assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"), (got, want)
            if want.dtype.kind == "f":  # -0.0 is not 0.0 (the sign of a NaN means nothing)
                numbers = ~np.isnan(want)
                assert np.array_equal(np.signbit(got)[numbers], np.signbit(want)[numbers]), (
                    got, want)
        return
    assert got == want or (got != got and want != want), (got, want)


def check(fn, *args, rtol=0.0, atol=0.0, breaks=0, backends=("llvm",)):
    """fn compiled equals fn eager (or raises what it raises); the trace breaks `breaks` times
    and runs no kernel, and with no break no part of it runs eagerly (a graph whose lowering
    fails runs the frame eagerly with no break to show for it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = fn(*args)
        except Exception as e:  # noqa: BLE001 - the compiled function must raise the same
            for backend in backends:
                kwargs = {} if backend == "llvm" else {"backend": backend}
                with pytest.raises(type(e)):
                    dynamir.compile(fn, **kwargs)(*args)
            return
        report = dynamir.explain(fn, *args)
        assert report.graph_break_count == breaks, str(report)
        assert report.kernels_run_during_tracing == 0
        dynamir.reset()
        for backend in backends:
            kwargs = {} if backend == "llvm" else {"backend": backend}
            assert_same(dynamir.compile(fn, **kwargs)(*args), want, rtol, atol)
        if breaks == 0:
            counters = dynamir.counters()  # (a run-time check that fails runs it eagerly)
            assert counters["eager_runs"] <= counters["failed_checks"], str(report)


def ulps(dtype):
    """A relative tolerance of a few units in the last place of dtype."""
    if isinstance(dtype, torch.dtype):
        return 4 * torch.finfo(dtype).eps
    return 4 * float(np.finfo(dtype).eps)


def special_floats(dtype, n=64):
    """Values across magnitudes and signs, with the IEEE special values."""
    x = np.concatenate([RNG.normal(size=n) * 4,
                        10.0 ** RNG.uniform(-20, 2, n) * RNG.choice([-1, 1], n),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 20.0, 25.0]])
    return x.astype(dtype)


def array(shape, dtype, scale=4):
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) > 0.5
    values = RNG.normal(size=shape) * scale
    return values.astype(dtype)


FLOATS = [np.float32, np.float64]
ALL = [np.float32, np.float64, np.int64, np.bool_]
SHAPES = [(7,), (3, 4), (2, 3, 5)]


# ---- elementwise ops: exp2, log2, log10, log1p, expm1, fmod, fma ---------------------------

# Methods by name (the tracer does not model getattr of a tensor with a computed name).
METHODS = {
    "exp2": lambda x: x.exp2(), "log2": lambda x: x.log2(), "log10": lambda x: x.log10(),
    "log1p": lambda x: x.log1p(), "expm1": lambda x: x.expm1(),
    "remainder": lambda x: x.remainder(-3), "floor_divide": lambda x: x.floor_divide(-3),
    "logical_and": lambda x, y: x.logical_and(y), "logical_or": lambda x, y: x.logical_or(y),
    "logical_xor": lambda x, y: x.logical_xor(y),
    "asin": lambda x: x.asin(), "acos": lambda x: x.acos(), "atan": lambda x: x.atan(),
    "asinh": lambda x: x.asinh(), "acosh": lambda x: x.acosh(), "atanh": lambda x: x.atanh(),
    "sinh": lambda x: x.sinh(), "cosh": lambda x: x.cosh(),
}


@pytest.mark.parametrize("name", ["exp2", "log2", "log10", "log1p", "expm1"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_float_functions(name, dtype):
    x = special_floats(dtype)
    fn = getattr(np, name)
    tol = ulps(dtype)
    check(lambda x: fn(x), x, rtol=tol, backends=("llvm", "eager"))
    tfn = getattr(torch, name)
    check(lambda x: tfn(x), torch.from_numpy(x), rtol=tol)
    check(METHODS[name], torch.from_numpy(x), rtol=tol)


INVERSE_AND_HYPERBOLIC = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sinh",
                          "cosh"]


@pytest.mark.parametrize("name", INVERSE_AND_HYPERBOLIC)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_inverse_and_hyperbolic_functions(name, dtype):
    # numpy's arcX is torch's aX (and arcX): libm's functions, a few ulps from numpy's and
    # torch's own; inside their domains (x in [-1, 1] for arcsin, x >= 1 for arccosh) and out.
    x = special_floats(dtype)
    x = np.concatenate([x, np.tanh(x), 1 + np.abs(x)]).astype(dtype)
    fn, short = getattr(np, name), name.replace("arc", "a")
    tol = ulps(dtype)
    # numpy's AVX-512 float16 loops are a subnormal ulp off on subnormals (sinh of 1.8e-7 is
    # 2.4e-7 there, 1.8e-7 in libm and in its other loops).
    tiny = 2.0**-23 if dtype == np.float16 else 0.0
    check(lambda x: fn(x), x, rtol=tol, atol=tiny, backends=("llvm", "eager"))
    t = torch.from_numpy(x)
    for spelling in (short, name):
        tfn = getattr(torch, spelling)
        check(lambda t: tfn(t), t, rtol=tol)
    check(METHODS[short], t, rtol=tol)
    # integers compute in float64 (numpy's AVX-512 loops are an ulp from libm's for some)
    check(lambda x: fn(x * 3), np.arange(-2, 3), rtol=ulps(np.float64))


@pytest.mark.parametrize("name", ["log1p", "expm1"])
def test_log1p_expm1_small_float64(name):
    # upstream lowers f64 math.log1p and math.expm1 to log(1 + x) and exp(x) - 1: every digit
    # of these would be lost.
    x = np.array([1e-300, -1e-18, 1e-10, -3e-9, 1e-5, 0.5, -0.5, 700.0, -800.0, 1e300])
    if name == "expm1":
        x = x[x < 710]
    check(lambda x: getattr(np, name)(x), x, rtol=ulps(np.float64))


def test_float_functions_of_integers_and_scalars():
    check(lambda x: np.log2(x), np.arange(1, 9))  # float64
    check(lambda x: torch.exp2(x), torch.arange(-3, 5), rtol=ulps(np.float32))  # float32
    check(lambda x: np.expm1(x), np.array([True, False]), rtol=ulps(np.float16))  # float16
    check(lambda x: np.log10(x[0]), np.array([100.0, 10.0]))  # a numpy scalar


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_fmod(dtype):
    x = array((3, 4), dtype, 10)
    y = array((4,), dtype, 4)
    y[y == 0] = 3
    check(lambda x, y: np.fmod(x, y), x, y, backends=("llvm", "eager"))
    check(lambda x: np.fmod(x, 3), x)
    check(lambda x: np.fmod(x, -3), x)
    check(lambda x: torch.fmod(x, 3), torch.from_numpy(x))
    check(lambda x: x.fmod(-2), torch.from_numpy(x))
    if np.dtype(dtype).kind == "f":
        check(lambda x, y: torch.fmod(x, y), torch.from_numpy(x), torch.from_numpy(y))
    else:  # torch raises for an integer division by zero, which a graph cannot
        check(lambda x, y: torch.fmod(x, y), torch.from_numpy(x), torch.from_numpy(y), breaks=1)


def test_fmod_zero_and_signs():
    check(lambda x: np.fmod(x, 0), np.array([5, -5, 0]))  # numpy: 0
    check(lambda x: np.fmod(x, np.array([0.0, 3.0, -3.0])), np.array([-0.0, -5.0, 5.0]))
    check(lambda x: np.fmod(x, x[1:]), np.array([np.iinfo(np.int64).min, -1]))
    check(lambda x: np.fmod(x, x), np.array([True, False]))  # int8 in numpy


@pytest.mark.parametrize("name", ["remainder", "floor_divide"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_remainder_floor_divide(name, dtype):
    x = array((3, 4), dtype, 10)
    check(lambda x: getattr(np, name)(x, 3), x)
    check(lambda x: getattr(np, name)(x, -2.5), x)
    check(lambda x: getattr(torch, name)(x, 3), torch.from_numpy(x))
    check(METHODS[name], torch.from_numpy(x))


# ---- keywords of the binary functions ------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
@pytest.mark.parametrize("alpha", [1, 2, -1, 0.5, 0.3, -7])
def test_add_sub_alpha(dtype, alpha):
    x = torch.from_numpy(array((3, 5), np.float64, 100)).to(dtype)
    y = torch.from_numpy(array((5,), np.float64, 100)).to(dtype)
    # integer tensors with a float alpha raise in torch; 16-bit floats round otherwise
    breaks = 1 if dtype == torch.float16 and alpha != 1 else 0
    check(lambda x, y: torch.add(x, y, alpha=alpha), x, y, breaks=breaks,
          backends=("llvm", "eager"))
    check(lambda x, y: torch.sub(x, y, alpha=alpha), x, y, breaks=breaks)
    check(lambda x, y: x.add(y, alpha=alpha), x, y, breaks=breaks)
    check(lambda x: torch.subtract(x, 3, alpha=alpha), x, breaks=breaks)


def test_add_alpha_bools_break():
    b = torch.tensor([True, False])
    check(lambda x: torch.add(x, x, alpha=2), b, breaks=1)


def test_binary_keywords():
    x, y = torch.randn(3, 4), torch.randn(4)
    check(lambda x, y: torch.mul(x, other=y), x, y)
    check(lambda x, y: torch.add(input=x, other=y), x, y)
    check(lambda x: torch.pow(x, exponent=2), x)
    check(lambda x, y: torch.mm(x, mat2=y.reshape(4, 1)), x, y, rtol=1e-6)  # sums in its order
    check(lambda x: torch.add(x, 1, out=x), x.clone())  # a store into out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
def test_div_rounding_mode(dtype):
    x = (torch.randn(400, 60, dtype=torch.float64) * 20).to(dtype)
    y = (torch.randn(60, dtype=torch.float64) * 4).to(dtype)
    y[y == 0] = 3
    for mode in ["trunc", "floor"]:
        check(lambda x: torch.div(x, 4, rounding_mode=mode), x)
        check(lambda x: torch.div(x, -3, rounding_mode=mode), x)
        check(lambda x: x.div(7, rounding_mode=mode), x)
        # integer divisors that are tensors may be 0, which torch raises for
        check(lambda x, y: torch.div(x, y, rounding_mode=mode), x, y,
              breaks=0 if dtype.is_floating_point else 1)
    check(lambda x: torch.div(x, 4, rounding_mode=None), x)
    check(lambda x: torch.div(x, 4, rounding_mode="round"), x, breaks=1)


def test_div_trunc_special_values():
    x = torch.tensor([7.0, -7.0, 0.0, -0.0, float("inf"), float("nan"), 1e30])
    check(lambda x: torch.div(x, 2.0, rounding_mode="trunc"), x)
    check(lambda x: torch.div(x, 0.0, rounding_mode="trunc"), x)


def test_matrix_products_check_ranks():
    a, b = np.ones((2, 3, 4)), np.ones((2, 4, 5))
    check(lambda a, b: np.dot(a, b), a, b, breaks=1)  # not a matmul beyond two dimensions
    check(lambda a, b: np.dot(a[0], b[0]), a, b)
    check(lambda a: np.dot(a[0, 0], a[0, 1]), a)
    check(lambda a: torch.dot(a, a), torch.arange(4.0))
    check(lambda a: torch.dot(a, a), torch.ones(2, 2), breaks=1)  # torch raises
    check(lambda a: torch.mm(a, a), torch.ones(2, 2))
    check(lambda a: torch.mm(a[0], a[0]), torch.ones(2, 2), breaks=1)
    check(lambda a, b: torch.bmm(a, b), torch.from_numpy(a), torch.from_numpy(b))


def test_binary_functions_of_two_numbers_are_numpy_scalars():
    # np.add(2, 3) is numpy.int64(5), not Python's 5: computed while tracing, as a numpy scalar.
    check(lambda x: (x + np.add(2, 3), np.add(2, 3), np.multiply(2.5, 2)), np.ones(2))


# ---- elementwise compositions ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_sign(dtype):
    x = special_floats(np.float64).astype(dtype) if np.dtype(dtype).kind == "f" else \
        np.arange(-4, 5).astype(dtype)
    check(lambda x: np.sign(x), x)
    check(lambda x: np.sign(x[1]), x)  # a numpy scalar
    check(lambda x: torch.sign(x), torch.from_numpy(x))
    check(lambda x: torch.sgn(x), torch.from_numpy(x))
    check(lambda x: x.sign(), torch.from_numpy(x))


def test_sign_of_bools():
    check(lambda x: torch.sign(x), torch.tensor([True, False]))
    check(lambda x: np.sign(x), np.array([True, False]), breaks=1)  # numpy raises


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.bool_])
def test_float_predicates(name, dtype):
    x = special_floats(np.float64).astype(dtype) if np.dtype(dtype).kind == "f" else \
        array((9,), dtype)
    check(lambda x: getattr(np, name)(x), x)
    check(lambda x: getattr(np, name)(x[3]), x)
    check(lambda x: getattr(torch, name)(x), torch.from_numpy(x))


def test_float_predicate_methods():
    t = torch.tensor([1.0, float("nan"), float("inf")])
    check(lambda x: x.isnan(), t)
    check(lambda x: x.isinf() | x.isfinite(), t)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("dtype", ALL)
def test_logical_binary(name, dtype):
    x = array((3, 4), dtype)
    x.flat[:3] = 0
    y = array((4,), dtype)
    if np.dtype(dtype).kind == "f":
        x.flat[5] = np.nan
    check(lambda x, y: getattr(np, name)(x, y), x, y)
    check(lambda x: getattr(np, name)(x, 0.0), x)
    check(lambda x: getattr(np, name)(True, x), x)
    check(lambda x: getattr(np, name)(x[0, 0], x[1, 1]), x)
    check(lambda x, y: getattr(torch, name)(x, y), torch.from_numpy(x), torch.from_numpy(y))
    check(METHODS[name], torch.from_numpy(x), torch.from_numpy(y))
    check(lambda x: getattr(torch, name)(x, 1), torch.from_numpy(x), breaks=1)  # torch raises


@pytest.mark.parametrize("dtype", ALL)
def test_logical_not(dtype):
    x = array((2, 5), dtype)
    x.flat[0] = 0
    check(lambda x: np.logical_not(x), x)
    check(lambda x: torch.logical_not(x), torch.from_numpy(x))
    check(lambda x: x.logical_not(), torch.from_numpy(x))


@pytest.mark.parametrize("dtype", ALL)
def test_isclose(dtype):
    x = array((3, 4), dtype, 3)
    if dtype == np.bool_:
        y = array((4,), dtype)
    else:
        y = (x + array((4,), np.float64, 0.1)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x.flat[:4] = [np.nan, np.inf, -np.inf, 1.0]
        y[:4] = [np.nan, np.inf, np.inf, 1.0]
    check(lambda x, y: np.isclose(x, y), x, y)
    check(lambda x, y: np.isclose(x, y, rtol=0.05, atol=0.02, equal_nan=True), x, y)
    check(lambda x: np.isclose(x, 1.0), x)
    check(lambda x: np.isclose(0, x, atol=0.5), x)
    check(lambda x: np.isclose(x[0, 0], x[1, 1]), x)  # a numpy bool
    t = torch.from_numpy(x)
    u = torch.from_numpy(np.broadcast_to(y, x.shape).copy())
    check(lambda x, y: torch.isclose(x, y), t, u)
    check(lambda x, y: torch.isclose(x, y, rtol=0.05, atol=0.02, equal_nan=True), t, u)
    check(lambda x, y: x.isclose(y, rtol=0, atol=0), t, u)


def test_isclose_breaks():
    x = torch.randn(3)
    check(lambda x: torch.isclose(x, x.double()), x, breaks=1)  # torch raises
    check(lambda x: torch.isclose(x, x, rtol=-1.0), x, breaks=1)
    check(lambda x: np.isclose(x, x, rtol=np.ones(3)), np.ones(3), breaks=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8,
                                   np.uint8, np.bool_])
def test_hypot(dtype):
    x = special_floats(np.float64).astype(dtype) if np.dtype(dtype).kind == "f" else \
        array((16,), dtype)
    y = x[::-1].copy()
    # float64 (and integers that numpy computes in it) call libm's hypot, as numpy does
    check(lambda x, y: np.hypot(x, y), x, y)
    check(lambda x, y: np.hypot(x, y * 1e300), x, y)  # overflow avoided, or inf
    if np.dtype(dtype).kind == "f":
        # torch's float64 kernel is Sleef's: runs for real
        breaks = 1 if dtype == np.float64 else 0
        check(lambda x, y: torch.hypot(x, y), torch.from_numpy(x), torch.from_numpy(y),
              breaks=breaks)


@pytest.mark.parametrize("dtype", ALL)
def test_outer(dtype):
    a, b = array((4,), dtype), array((2, 3), dtype)
    check(lambda a, b: np.outer(a, b), a, b)
    check(lambda a: np.outer(a, 2 * a if a.dtype != bool else a), a)
    t = torch.from_numpy(a)
    check(lambda a: torch.outer(a, a), t)
    check(lambda a: torch.ger(a, a[:2]), t)
    check(lambda a: a.outer(a), t)
    check(lambda b: torch.outer(b, b), torch.from_numpy(b), breaks=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_lerp(dtype):
    start = torch.from_numpy(special_floats(np.float64, 20)).to(dtype)
    end = torch.randn(start.shape, dtype=torch.float64).to(dtype) * 10
    weight = torch.rand(start.shape, dtype=torch.float64).to(dtype) * 2 - 0.5
    for w in [0.0, 0.3, 0.5, 0.7, 1.0, -0.25, 1.5]:
        check(lambda s, e: torch.lerp(s, e, w), start, end)
    check(lambda s, e, w: torch.lerp(s, e, w), start, end, weight, backends=("llvm", "eager"))
    check(lambda s, e, w: s.lerp(e, w), start, end[0], weight)
    other = end.float() if dtype == torch.float64 else end.double()
    check(lambda s, e: torch.lerp(s, e, 0.5), start, other, breaks=1)  # torch raises


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
def test_addcmul_addcdiv(dtype):
    x, a, b = (torch.from_numpy(array(s, np.float64, 8)).to(dtype) for s in [(3, 4), (4,), (3, 1)])
    value = 3 if dtype == torch.int64 else 0.3
    check(lambda x, a, b: torch.addcmul(x, a, b), x, a, b)
    check(lambda x, a, b: torch.addcmul(x, a, b, value=value), x, a, b,
          backends=("llvm", "eager"))
    check(lambda x, a, b: x.addcmul(a, b, value=-2), x, a, b)
    breaks = 0 if dtype.is_floating_point else 1  # integer addcdiv raises in torch
    check(lambda x, a, b: torch.addcdiv(x, a, b, value=value), x, a, b, breaks=breaks)
    check(lambda x, a, b: x.addcdiv(a, b), x, a, b, breaks=breaks)


def test_reciprocal():
    check(lambda x: torch.reciprocal(x), torch.tensor([2.0, -0.0, 0.5]))
    check(lambda x: torch.reciprocal(x), torch.arange(1, 5))


# ---- torch.nn.functional activations ---------------------------------------------------------

ACTIVATIONS = [
    ("leaky_relu", lambda x: F.leaky_relu(x), 0),
    ("leaky_relu 0.2", lambda x: F.leaky_relu(x, 0.2), 0),
    ("elu", lambda x: F.elu(x), 1),
    ("elu 1.5", lambda x: F.elu(x, alpha=1.5), 1),
    ("selu", lambda x: F.selu(x), 1),
    ("softplus", lambda x: F.softplus(x), 1),
    ("softplus beta", lambda x: F.softplus(x, beta=2.0, threshold=10.0), 1),
    ("hardtanh", lambda x: F.hardtanh(x), 0),
    ("hardtanh bounds", lambda x: F.hardtanh(x, -1.5, 2.0), 0),
    ("relu6", lambda x: F.relu6(x), 0),
    ("hardsigmoid", lambda x: F.hardsigmoid(x), 0),
    ("hardswish", lambda x: F.hardswish(x), 0),
    ("mish", lambda x: F.mish(x), 2),
    ("logsigmoid", lambda x: F.logsigmoid(x), 1),
]


@pytest.mark.parametrize("name,fn,transcendental", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_activations(name, fn, transcendental, dtype):
    # (bfloat16 tensors are not yet graph inputs: the runtime rejects them)
    x = torch.from_numpy(special_floats(np.float64)).to(dtype)
    rtol = transcendental * ulps(dtype)
    check(fn, x, rtol=rtol)
    check(fn, x[::2], rtol=rtol)


def test_activation_modules():
    x = torch.randn(4, 5)
    for module in [torch.nn.LeakyReLU(0.3), torch.nn.ELU(), torch.nn.Hardswish(),
                   torch.nn.Hardtanh(-2, 2), torch.nn.ReLU6(), torch.nn.LogSigmoid(),
                   torch.nn.Softplus(), torch.nn.Mish(), torch.nn.Hardsigmoid(), torch.nn.SELU()]:
        check(module, x, rtol=ulps(torch.float32) * 2)


def test_activations_of_integers():
    x = torch.arange(-8, 9)
    check(lambda x: F.hardtanh(x, -2, 3), x)  # a clamp: integers are fine
    check(lambda x: F.relu6(x), x)
    check(lambda x: F.leaky_relu(x), x)  # torch raises for all of these
    check(lambda x: F.elu(x), x)
    check(lambda x: F.softplus(x), x)
    check(lambda x: F.hardswish(x), x)
    check(lambda x: F.mish(x), x)
    check(lambda x: F.logsigmoid(x), x)
    check(lambda x: F.silu(x), x)  # these used to compute a float result
    check(lambda x: F.gelu(x), x)
    check(lambda x: F.softmax(x, 0), x)
    check(lambda x: x.log_softmax(0), x)
    check(lambda x: F.hardtanh(x, -1.5, 2.0), x, breaks=1)
    check(lambda x: F.leaky_relu(x, inplace=True), torch.randn(3), breaks=1)


# ---- reductions ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_])
def test_sum_mean_prod_dtype(dtype):
    x = array((3, 4, 5), dtype, 2)
    isf = np.dtype(dtype).kind == "f"
    check(lambda x: np.sum(x, dtype=np.float64), x, rtol=1e-12)
    check(lambda x: x.sum(axis=1, dtype=np.float32), x, rtol=1e-5)
    check(lambda x: np.sum(x, axis=(0, 2), dtype=np.int32), x, breaks=1 if isf else 0)
    check(lambda x: x.prod(axis=2, dtype=np.float64), x, rtol=1e-12)
    check(lambda x: np.mean(x, dtype=np.float64), x, rtol=1e-12)
    check(lambda x: x.mean(axis=0, dtype=np.float32, keepdims=True), x, rtol=1e-5)
    check(lambda x: np.mean(x, dtype=np.int64), x, breaks=1)  # numpy truncates the mean
    check(lambda x: np.sum(x, dtype=bool), x, breaks=1)
    t = torch.from_numpy(x)
    check(lambda x: torch.sum(x, dtype=torch.float64), t, rtol=1e-12)
    check(lambda x: x.sum(1, dtype=torch.int64), t, breaks=1 if isf else 0)
    check(lambda x: torch.prod(x, 2, dtype=torch.float64), t, rtol=1e-12)
    check(lambda x: torch.mean(x, (0, 1), dtype=torch.float64), t, rtol=1e-12)
    check(lambda x: x.mean(dtype=torch.float32), t, rtol=1e-5)


def test_sum_dtype_float16():
    x = np.linspace(-3, 3, 301).astype(np.float16)
    check(lambda x: np.sum(x, dtype=np.float16), x, rtol=1e-3)
    check(lambda x: np.mean(x, dtype=np.float32), x, rtol=1e-6)
    check(lambda x: torch.sum(x, dtype=torch.float32), torch.from_numpy(x), rtol=1e-6)


@pytest.mark.parametrize("shape", SHAPES + [(2, 0)])
@pytest.mark.parametrize("dtype", ALL)
def test_any_all(shape, dtype):
    x = array(shape, dtype)
    if x.size:
        x.flat[0] = 0
    if np.dtype(dtype).kind == "f" and x.size > 2:
        x.flat[2] = np.nan
    rank = len(shape)
    for axis in [None, 0, -1, tuple(range(rank))]:
        check(lambda x: np.any(x, axis=axis), x)
        check(lambda x: np.all(x, axis=axis, keepdims=True), x)
        check(lambda x: x.any(axis), x)
        check(lambda x: (x != 1).all(axis=axis), x)
        t = torch.from_numpy(x)
        if axis is None:
            check(lambda x: torch.any(x), t)
            check(lambda x: x.all(), t)
        else:
            check(lambda x: torch.any(x, axis, keepdim=True), t)
            check(lambda x: x.all(dim=axis), t)


def test_any_all_breaks():
    check(lambda x: np.any(x, where=x > 0), np.ones(3), breaks=1)
    check(lambda x: np.all(x, 0, np.empty(())), np.ones(3), breaks=1)  # out=


@pytest.mark.parametrize("dtype", ALL)
def test_count_nonzero(dtype):
    x = array((3, 4, 5), dtype)
    x.flat[:7] = 0
    check(lambda x: np.count_nonzero(x), x)
    check(lambda x: np.count_nonzero(x, axis=1), x)
    check(lambda x: np.count_nonzero(x, axis=(0, 2), keepdims=True), x)
    check(lambda x: np.count_nonzero(x[0, 0]), x)
    t = torch.from_numpy(x)
    check(lambda x: torch.count_nonzero(x), t)
    check(lambda x: torch.count_nonzero(x, dim=(0, 1)), t)
    check(lambda x: x.count_nonzero(-1), t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_aminmax(dtype):
    x = array((3, 4), dtype)
    t = torch.from_numpy(x)
    check(lambda x: torch.aminmax(x), t)
    check(lambda x: torch.aminmax(x, dim=1), t)
    check(lambda x: x.aminmax(dim=0, keepdim=True), t)
    check(lambda x: torch.aminmax(x[:0], dim=0), t)  # of nothing: raises


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_ptp(dtype):
    x = array((3, 4), dtype, 100)
    check(lambda x: np.ptp(x), x)
    check(lambda x: np.ptp(x, axis=1), x)
    check(lambda x: np.ptp(x, 0, keepdims=True), x)
    check(lambda x: np.ptp(x), np.array([True, False]), breaks=1)  # numpy raises


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool])
def test_logsumexp(dtype):
    x = torch.from_numpy(array((3, 4, 5), np.float64, 10)).to(dtype)
    rtol = 1e-5 if dtype != torch.float64 else 1e-13
    check(lambda x: torch.logsumexp(x, 1), x, rtol=rtol)
    check(lambda x: torch.logsumexp(x, (0, 2), keepdim=True), x, rtol=rtol)
    check(lambda x: x.logsumexp(-1), x, rtol=rtol)


def test_logsumexp_infinities():
    x = torch.tensor([[float("inf"), 1.0], [-float("inf"), -float("inf")], [float("nan"), 0.0],
                      [1000.0, 1000.0]])
    check(lambda x: torch.logsumexp(x, 1), x, rtol=1e-6)
    check(lambda x: torch.logsumexp(x, 0), torch.tensor(3.0), rtol=1e-6)  # 0-d
    check(lambda x: torch.logsumexp(x, 0), torch.zeros(0, 2), breaks=1)


NORMS = [
    {}, {"p": 2}, {"p": 1}, {"p": float("inf")}, {"p": -float("inf")}, {"p": "fro"},
    {"dim": 1}, {"p": 1, "dim": 0, "keepdim": True}, {"p": "fro", "dim": (0, 1)},
    {"p": float("inf"), "dim": (1, 2), "keepdim": True}, {"dtype": torch.float64},
]


@pytest.mark.parametrize("kwargs", NORMS, ids=[str(k) for k in NORMS])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_torch_norm(kwargs, dtype):
    x = torch.randn(3, 4, 5, dtype=torch.float64).to(dtype) * 10
    rtol = {torch.float32: 1e-5, torch.float64: 1e-13, torch.float16: 2e-3}[dtype]
    check(lambda x: torch.norm(x, **kwargs), x, rtol=rtol)
    check(lambda x: x.norm(**kwargs), x, rtol=rtol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_functional_normalize(dtype):
    # x / x.norm(p, dim, keepdim=True).clamp_min(eps), torch's definition; a zero row stays 0.
    x = torch.randn(3, 4, 5, dtype=torch.float64).to(dtype)
    x[1] = 0
    check(lambda x: F.normalize(x), x, rtol=ulps(dtype))
    check(lambda x: F.normalize(x, 1.0, -1, 1e-3), x, rtol=ulps(dtype))
    check(lambda x: F.normalize(x, p=float("inf"), dim=(0, 2), eps=0.5), x, rtol=ulps(dtype))
    check(lambda x: F.normalize(x, p=3), x, breaks=1)  # torch.norm with p=3 is not modelled


def test_torch_norm_breaks():
    x = torch.randn(3, 4)
    check(lambda x: torch.norm(x, "nuc"), x, breaks=1)
    check(lambda x: torch.norm(x, 3), x, breaks=1)
    check(lambda x: torch.norm(x, 0), x, breaks=1)
    check(lambda x: torch.norm(x), torch.arange(4), breaks=1)  # torch raises


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_torch_linalg_norms(dtype):
    x = torch.randn(3, 4, dtype=dtype)
    rtol = 1e-5 if dtype == torch.float32 else 1e-13
    check(lambda x: torch.linalg.vector_norm(x), x, rtol=rtol)
    check(lambda x: torch.linalg.vector_norm(x, 1, dim=1, keepdim=True), x, rtol=rtol)
    check(lambda x: torch.linalg.vector_norm(x, float("inf"), dim=(0, 1)), x, rtol=rtol)
    check(lambda x: torch.linalg.norm(x), x, rtol=rtol)
    check(lambda x: torch.linalg.norm(x, "fro"), x, rtol=rtol)
    check(lambda x: torch.linalg.norm(x, 1, dim=0), x, rtol=rtol)
    check(lambda x: torch.linalg.norm(x, "nuc"), x, breaks=1)
    check(lambda x: torch.linalg.norm(x, 1), x, breaks=1)  # a matrix norm


NP_NORMS = [
    {}, {"ord": 2}, {"ord": 1}, {"ord": np.inf}, {"ord": -np.inf}, {"ord": 0}, {"axis": 1},
    {"ord": 1, "axis": 0, "keepdims": True}, {"keepdims": True}, {"ord": "fro"},
    {"ord": 1, "axis": (0, 1)}, {"ord": np.inf, "axis": (1, 0)}, {"ord": -1, "axis": (0, 1)},
    {"ord": "fro", "axis": (1, 0), "keepdims": True},
]


@pytest.mark.parametrize("kwargs", NP_NORMS, ids=[str(k) for k in NP_NORMS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_numpy_linalg_norm(kwargs, dtype):
    x = array((3, 4), dtype, 5)
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    vector_only = "ord" in kwargs and "axis" not in kwargs and kwargs["ord"] != "fro"
    if vector_only:  # of a matrix, the norm of that order is another norm
        check(lambda x: np.linalg.norm(x[0], **kwargs), x, rtol=rtol)
    else:
        check(lambda x: np.linalg.norm(x, **kwargs), x, rtol=rtol)
        check(lambda x: np.linalg.norm(x[1], **kwargs), x, rtol=rtol)


def test_numpy_linalg_norm_breaks():
    x = np.ones((3, 4))
    check(lambda x: np.linalg.norm(x, 2), x, breaks=1)  # singular values
    check(lambda x: np.linalg.norm(x, "nuc"), x, breaks=1)
    check(lambda x: np.linalg.norm(x, 3, axis=1), x, breaks=1)


# ---- rearranging and repeating ---------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ALL)
def test_flip(shape, dtype):
    x = array(shape, dtype)
    rank = len(shape)
    check(lambda x: np.flip(x), x)
    check(lambda x: np.flip(x, -1), x)
    check(lambda x: np.flipud(x), x)
    t = torch.from_numpy(x)
    check(lambda x: torch.flip(x, (0,)), t)
    check(lambda x: x.flip(-1), t)
    check(lambda x: torch.flipud(x), t)
    if rank >= 2:
        check(lambda x: np.flip(x, (0, -1)), x)
        check(lambda x: np.fliplr(x), x)
        check(lambda x: x.flip(0, 1), t)
        check(lambda x: torch.fliplr(x), t)
    else:
        check(lambda x: np.fliplr(x), x, breaks=1)  # numpy raises


def test_flip_views_and_copies():
    def numpy_view(x):
        y = np.flip(x)
        x[0] = 5.0  # y is a view: the store must be seen (or run for real)
        return y
    x = np.arange(4.0)
    assert_same(dynamir.compile(numpy_view)(x.copy()), numpy_view(x.copy()))

    def torch_copy(x):
        y = torch.flip(x, (0,))
        y[0] = 7.0  # a copy: x does not change
        return x, y
    assert_same(dynamir.compile(torch_copy)(torch.arange(4.0)), torch_copy(torch.arange(4.0)))
    check(lambda x: np.flip(x, (0, 0)), np.ones((2, 2)), breaks=1)


@pytest.mark.parametrize("dtype", ALL)
def test_roll(dtype):
    x = array((3, 4, 5), dtype)
    for shift, axis in [(2, None), (-7, None), (1, 0), (-1, 2), (4, 1), ((1, 3), (0, 2)),
                        ((1, 1), (2, 2)), (0, 1)]:
        check(lambda x: np.roll(x, shift, axis=axis), x)
        if not isinstance(shift, tuple) or axis is not None:
            check(lambda x: torch.roll(x, shift, axis), torch.from_numpy(x))
    check(lambda x: x.roll(1, 0), torch.from_numpy(x))
    check(lambda x: np.roll(x, 3, axis=(0, 1)), x)  # one shift for every axis


def test_roll_result_is_a_copy():
    def f(x):
        y = np.roll(x, 0)
        y[0] = 9
        return x, y
    assert_same(dynamir.compile(f)(np.arange(3)), f(np.arange(3)))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_swapaxes_moveaxis(dtype):
    x = array((2, 3, 4), dtype)
    t = torch.from_numpy(x)
    check(lambda x: np.swapaxes(x, 0, 2), x)
    check(lambda x: x.swapaxes(-1, 1), x)
    check(lambda x: torch.swapaxes(x, 0, 1), t)
    check(lambda x: torch.swapdims(x, 2, 0), t)
    check(lambda x: x.swapaxes(1, 2), t)
    check(lambda x: np.moveaxis(x, 0, -1), x)
    check(lambda x: np.moveaxis(x, (0, 1), (2, 0)), x)
    check(lambda x: torch.movedim(x, 2, 0), t)
    check(lambda x: torch.moveaxis(x, (0, 2), (1, 0)), t)
    check(lambda x: x.movedim(-1, 0), t)
    check(lambda x: np.moveaxis(x, (0, 0), (1, 2)), x, breaks=1)  # numpy raises


def test_unflatten():
    x = torch.arange(24.0).reshape(4, 6)
    check(lambda x: torch.unflatten(x, 1, (2, 3)), x)
    check(lambda x: x.unflatten(0, (2, -1)), x)
    check(lambda x: x.unflatten(-1, (6, 1, 1)), x)
    check(lambda x: x.unflatten(1, (4, 2)), x, breaks=1)  # torch raises


@pytest.mark.parametrize("dtype", ALL)
def test_repeat_tile(dtype):
    x = array((2, 3), dtype)
    t = torch.from_numpy(x)
    check(lambda x: x.repeat(2, 3), t)
    check(lambda x: x.repeat(2, 1, 2), t)
    check(lambda x: x.repeat((1, 1)), t)
    check(lambda x: x.repeat(2), t, breaks=1)  # fewer than the rank: torch raises
    check(lambda x: torch.tile(x, (2,)), t)
    check(lambda x: np.tile(x, 2), x)
    check(lambda x: np.tile(x, (3, 1, 2)), x)
    check(lambda x: np.tile(x[0, 0], 3), x)
    check(lambda x: np.repeat(x, 2), x)
    check(lambda x: np.repeat(x, 3, axis=0), x)
    check(lambda x: x.repeat(2, axis=-1), x)
    check(lambda x: torch.repeat_interleave(x, 2), t)
    check(lambda x: x.repeat_interleave(3, dim=1), t)
    check(lambda x: np.repeat(x, [1, 2], axis=0), x, breaks=1)
    check(lambda x, r: torch.repeat_interleave(x, r, dim=0), t, torch.tensor([1, 2]), breaks=1)


STACKS = ["hstack", "vstack", "dstack", "column_stack"]


@pytest.mark.parametrize("name", STACKS)
@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (3, 4, 2)])
def test_stacks(name, shape):
    x = np.asarray(array(shape, np.float32))
    y = np.asarray(array(shape, np.int64))
    if name == "column_stack" and len(shape) > 2:
        return
    check(lambda x, y: getattr(np, name)((x, y)), x, y)
    check(lambda x, y: getattr(np, name)([x, x, y]), x, y)
    check(lambda x, y: getattr(torch, name)((x, y)), torch.from_numpy(x), torch.from_numpy(y))


def test_stacks_of_mixed_ranks():
    v, m = np.arange(3.0), np.ones((2, 3))
    check(lambda v, m: np.vstack((v, m)), v, m)
    check(lambda v, m: np.column_stack((v[:2], m)), v, m)
    check(lambda v, m: torch.row_stack((v, m)), torch.from_numpy(v), torch.from_numpy(m))
    check(lambda v: np.hstack(()), v, breaks=1)
    for name in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        for x in [np.float64(2.0), v, m]:
            check(lambda x: getattr(np, name)(x), x)


@pytest.mark.parametrize("dtype", ALL)
def test_diagonal(dtype):
    m = array((4, 6), dtype)
    x = array((3, 4, 5), dtype)
    for k in [0, 1, 3, -1, -3, 7, -5]:
        check(lambda m: np.diagonal(m, k), m)
        check(lambda m: m.diagonal(k, 1, 0), m)
        check(lambda m: torch.diagonal(m, k), torch.from_numpy(m))
        check(lambda m: np.diag(m, k), m)
        check(lambda m: torch.diag(m, k), torch.from_numpy(m))
    check(lambda x: np.diagonal(x, 1, 2, 0), x)
    check(lambda x: torch.diagonal(x, -1, 0, 2), torch.from_numpy(x))
    check(lambda x: x.diagonal(dim1=-1, dim2=-2), torch.from_numpy(x))


@pytest.mark.parametrize("dtype", ALL)
def test_diag_of_vectors(dtype):
    v = array((4,), dtype)
    for k in [0, 1, -2]:
        check(lambda v: np.diag(v, k), v)
        check(lambda v: torch.diag(v, k), torch.from_numpy(v))
    check(lambda x: np.diag(x), array((2, 2, 2), dtype), breaks=1)


def test_diagonal_stores():
    def numpy_store(m):
        d = np.diagonal(m)
        d[0] = 1.0  # numpy's diagonal is read-only: raises
        return d
    with pytest.raises(ValueError):
        dynamir.compile(numpy_store)(np.zeros((2, 2)))

    def torch_store(m):
        d = torch.diag(m)
        d[0] = 1.0  # torch.diag of a matrix is a copy
        return m, d
    assert_same(dynamir.compile(torch_store)(torch.zeros(2, 2)), torch_store(torch.zeros(2, 2)))


# ---- constructors ----------------------------------------------------------------------------

def test_eye_identity():
    x = np.ones((3, 3), np.float32)
    check(lambda x: x + np.eye(3), x)
    check(lambda x: np.eye(3, 5, 1, dtype=np.int64), x)
    check(lambda x: np.eye(4, 2, k=-1, dtype=bool), x)
    check(lambda x: np.eye(2, k=5), x)
    check(lambda x: np.identity(4, np.float32), x)
    t = torch.from_numpy(x)
    check(lambda x: x + torch.eye(3), t)
    check(lambda x: torch.eye(3, 4, dtype=torch.int64), t)
    check(lambda x: torch.eye(2, device="cpu"), t)


LINSPACES = [(0, 1), (0, 1, 5), (0, 1, 5, False), (-2.5, 7, 13), (3, 3, 4), (1, 2, 1),
             (1, 2, 0), (0.1, 0.7, 1000), (5, -5, 9), (1e-3, 1e3, 33, True, False, np.float32),
             (0, 10, 7, True, False, np.int64), (-5, 5, 11, True, False, np.int32)]


@pytest.mark.parametrize("args", LINSPACES, ids=[str(a) for a in LINSPACES])
def test_linspace(args):
    check(lambda x: np.linspace(*args) + x, np.zeros(()))


def test_linspace_breaks():
    check(lambda x: np.linspace(0, 1, 5, retstep=True), np.zeros(()), breaks=1)
    check(lambda x: torch.linspace(0, 1, 7), torch.zeros(()), breaks=1)  # torch's kernel
    check(lambda x: np.linspace(x, 1, 3), np.float64(0.5), breaks=1)  # array bounds


DATA = [[1, 2, 3], [1.5, 2], [[True, False], [False, True]], [[1, 2.5], [3, 4]], 3, 2.5, True,
        [], [[1], [2]], [True, 2], (1, 2), [0.1, 1e-45, 1e300], [-2 ** 63, 2 ** 63 - 1]]


@pytest.mark.parametrize("data", DATA, ids=[repr(d) for d in DATA])
def test_arrays_of_constants(data):
    x = np.zeros(())
    check(lambda x: np.array(data), x)
    check(lambda x: np.asarray(data), x)
    check(lambda x: torch.tensor(data), torch.from_numpy(x))
    check(lambda x: torch.as_tensor(data), torch.from_numpy(x))


def test_arrays_with_dtypes():
    x = np.zeros(2, np.float32)
    t = torch.from_numpy(x)
    check(lambda x: np.array([1.7, -2.7], dtype=np.int64), x)
    check(lambda x: np.array([0, 2.5], bool), x)
    check(lambda x: np.asarray([1, 2], dtype=np.float32) + x, x)
    check(lambda x: torch.tensor([1.7, -2.7], dtype=torch.int64), t)
    check(lambda x: torch.tensor([0.1, 1e-5, 70000.0], dtype=torch.float16), t)
    check(lambda x: x.new_tensor([1, 2]) + x, t)  # x's dtype
    check(lambda x: x.new_tensor([1, 2], dtype=torch.int64), t)
    check(lambda x: np.array([1, "a"]), x, breaks=1)
    check(lambda x: np.array([2 ** 64]), x, breaks=1)
    check(lambda x: np.array([[1], [2, 3]], dtype=object), x, breaks=1)


def test_arrays_of_arrays():
    x = np.arange(4.0)

    def copies(x):
        a, b = np.array(x), np.asarray(x)
        a[0] = 7.0  # a copy
        b[1] = 8.0  # x itself
        return x, a, b
    assert_same(dynamir.compile(copies)(x.copy()), copies(x.copy()))
    check(lambda x: np.array(x, dtype=np.int64), x)
    check(lambda x: np.asarray(x, np.float32), x)
    check(lambda x: np.asarray(x.sum()), x)  # a numpy scalar becomes a 0-d array
    check(lambda x: torch.as_tensor(x) + 1, torch.from_numpy(x))
    check(lambda x: np.asarray(x), torch.from_numpy(x))  # the tensor's memory
    check(lambda x: torch.tensor(x), torch.from_numpy(x), breaks=1)  # a copy with a warning


def test_empty_and_device_keywords():
    x = np.ones(3)
    t = torch.from_numpy(x)
    check(lambda x: np.empty((2, 3)).shape, x)
    check(lambda x: np.empty(3, dtype=np.int64).dtype, x)
    check(lambda x: torch.empty(2, 3).shape, t)
    check(lambda x: np.zeros(3, dtype=np.int64), x)
    check(lambda x: np.full(3, 2.7, dtype=np.int64), x)
    check(lambda x: np.full_like(x, 2, dtype=bool), x)
    check(lambda x: torch.full((2,), -2.7, dtype=torch.int64), t)
    check(lambda x: torch.zeros(2, 3) + 1, t)
    check(lambda x: torch.ones(3, device=x.device), t)
    check(lambda x: torch.zeros_like(x, device="cpu"), t)
    assert dynamir.explain(lambda x: torch.ones(3, device="meta"), t).graph_break_count == 1
    assert dynamir.explain(lambda x: torch.ones(3, requires_grad=True), t).graph_break_count == 1


def test_new_constructors():
    t = torch.ones(3, dtype=torch.float64)
    check(lambda x: x.new_zeros(2, 3), t)
    check(lambda x: x.new_ones((2,)), t)
    check(lambda x: x.new_full((2, 2), 7), t)
    check(lambda x: x.new_empty(3).shape, t)
    check(lambda x: x.new_zeros(2, dtype=torch.int64), t)
    check(lambda x: x.new_ones(x.shape) + x, t)


def test_one_hot():
    x = torch.zeros(())
    check(lambda x: F.one_hot(torch.tensor([0, 2, 1]), 4), x)
    check(lambda x: F.one_hot(torch.tensor([[0, 2], [1, 1]])), x)
    check(lambda x: F.one_hot(torch.arange(3), num_classes=5), x)
    # indices only known at run time may be out of range, which raises in torch
    check(lambda i: F.one_hot(i, 5), torch.tensor([1, 2]), breaks=1)
    check(lambda x: F.one_hot(torch.tensor([0, 5]), 4), x, breaks=1)
    check(lambda x: F.one_hot(torch.tensor([0.0]), 4), x, breaks=1)


# ---- pooling ---------------------------------------------------------------------------------

POOLS = [
    ("avg 2", lambda x: F.avg_pool2d(x, 2)),
    ("max 2", lambda x: F.max_pool2d(x, 2)),
    ("avg 2x3", lambda x: F.avg_pool2d(x, (2, 3))),
    ("max 3 (floor)", lambda x: F.max_pool2d(x, 3)),
    ("avg stride", lambda x: F.avg_pool2d(x, 3, stride=3, padding=0)),
    ("avg divisor", lambda x: F.avg_pool2d(x, 2, divisor_override=3)),
    ("adaptive avg 1", lambda x: F.adaptive_avg_pool2d(x, 1)),
    ("adaptive avg 2x3", lambda x: F.adaptive_avg_pool2d(x, (2, 3))),
    ("adaptive max None", lambda x: F.adaptive_max_pool2d(x, (4, None))),
    # overlapping, padded and dilated windows (dyn.unfold); max pooling pads with -inf
    ("max 3 stride 2 pad 1", lambda x: F.max_pool2d(x, 3, stride=2, padding=1)),
    ("max 2 stride 1 dilation 2", lambda x: F.max_pool2d(x, 2, stride=1, dilation=2)),
    ("avg 3 stride 1 pad 1", lambda x: F.avg_pool2d(x, 3, stride=1, padding=1)),
    ("avg 3x2 stride (2, 1) divisor", lambda x: F.avg_pool2d(x, (3, 2), (2, 1), (1, 0),
                                                             divisor_override=5)),
    ("MaxPool2d", torch.nn.MaxPool2d(2)),
    ("AvgPool2d", torch.nn.AvgPool2d((4, 3))),
    ("AdaptiveAvgPool2d", torch.nn.AdaptiveAvgPool2d((1, 1))),
]


@pytest.mark.parametrize("name,fn", POOLS, ids=[p[0] for p in POOLS])
@pytest.mark.parametrize("shape", [(2, 3, 8, 12), (3, 8, 12)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pooling(name, fn, shape, dtype):
    x = torch.randn(shape, dtype=dtype)
    x.view(-1)[0] = float("nan")
    # means of 4 to 96 elements, summed in another order
    check(fn, x, rtol=1e-6, atol=1e-6 if dtype == torch.float32 else 1e-14)


def test_pooling_of_other_dtypes():
    check(lambda x: F.max_pool2d(x, 2), torch.arange(64).reshape(1, 8, 8))
    check(lambda x: F.max_pool2d(x, 3, stride=1), torch.arange(64).reshape(1, 8, 8))
    check(lambda x: F.avg_pool2d(x, 2), torch.randn(1, 4, 4).half(), rtol=1e-3)
    check(lambda x: F.avg_pool2d(x, 2), torch.arange(16).reshape(1, 4, 4), breaks=1)


@pytest.mark.parametrize("shape", [(2, 3, 11), (3, 11)])
def test_pooling_1d(shape):
    x = torch.randn(shape, dtype=torch.float64)
    for fn in (lambda x: F.max_pool1d(x, 2), lambda x: F.avg_pool1d(x, 3, stride=2, padding=1),
               lambda x: F.max_pool1d(x, (3,), 1, dilation=2), torch.nn.MaxPool1d(4),
               torch.nn.AvgPool1d(2, count_include_pad=False)):
        check(fn, x, rtol=1e-14)
    check(lambda x: F.max_pool1d(x, 2, ceil_mode=True), x, breaks=1)


def test_nearest_interpolation():
    x = torch.randn(2, 3, 4, 5)
    for fn in (lambda x: F.interpolate(x, scale_factor=2),
               lambda x: F.interpolate(x, size=(12, 5)),
               lambda x: F.interpolate(x, scale_factor=(3.0, 1.0)),
               lambda x: F.interpolate(x, size=(8, 10), mode="nearest"),
               lambda x: F.interpolate(x[0], scale_factor=2),  # 1-D
               torch.nn.Upsample(scale_factor=4)):
        check(fn, x)
    check(lambda x: F.interpolate(x, scale_factor=1.5), x, breaks=1)
    check(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), x, breaks=1)
    check(lambda x: F.interpolate(x, size=(7, 5)), x, breaks=1)


def test_pooling_breaks():
    x = torch.randn(1, 2, 8, 8)
    check(lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False), x, breaks=1)
    check(lambda x: F.max_pool2d(x, 2, padding=2), x)  # padding above half the kernel raises
    check(lambda x: F.max_pool2d(x, 2, ceil_mode=True), x, breaks=1)
    check(lambda x: F.max_pool2d(x, 2, return_indices=True), x, breaks=1)
    check(lambda x: F.adaptive_avg_pool2d(x, 3), x, breaks=1)  # 3 does not divide 8


# ---- host constants --------------------------------------------------------------------------

def test_dtype_facts_run_on_constants():
    x = np.ones(3, np.float32)
    t = torch.from_numpy(x)
    check(lambda x: x * torch.finfo(torch.float32).eps, t)
    check(lambda x: x * torch.finfo(x.dtype).tiny, t)
    check(lambda x: x * torch.finfo().max, t)
    check(lambda x: x * torch.iinfo(torch.int32).max, t)
    check(lambda x: x * np.finfo(x.dtype).bits, x)
    check(lambda x: np.iinfo(np.int64).min + 0 * x, x)
    check(lambda x: x.to(torch.promote_types(torch.float32, torch.int64)), t)
    check(lambda x: x.astype(np.promote_types(np.float32, np.int64)), x)
    check(lambda x: x.to(torch.get_default_dtype()), t)
    check(lambda x: x.to(torch.device("cpu")) + 1, t)
    check(lambda x: x.to("cpu", torch.float64), t)
    check(lambda x: x.to(device="cpu", dtype=torch.int64), t)
    check(lambda x: x.cpu() * 2, t)
    check(lambda x: x.to(torch.result_type(x, 2.5)), t)
    check(lambda x: x.astype(np.result_type(x, 1)), x)
    check(lambda x: x.astype(np.dtype("float64")), x)
    check(lambda x: np.can_cast(np.float32, np.int64) + x, x)
    # np.finfo's eps is a numpy scalar the trace makes: the host cannot rebuild it
    check(lambda x: x * np.finfo(x.dtype).eps, x, breaks=1)
    assert dynamir.explain(lambda x: x.to("meta"), t).graph_break_count == 1


@pytest.mark.parametrize("a,b", [(np.arange(-7, 8), 3),
                                 (np.arange(-7.0, 8.0) * 1.3, np.array(-2.5)),
                                 (np.arange(-7, 8).astype(np.int8), np.arange(1, 16).astype(np.int8))])
def test_numpy_divmod(a, b):
    check(lambda a, b: np.divmod(a, b), a, b, backends=("llvm", "eager"))
    check(lambda a, b: np.divmod(a.sum(), 2), a, b)  # numpy scalars


def test_astype_copy_false_is_the_array_itself():
    def f(a):
        b = a.astype(np.float64, copy=False)  # a itself: the store changes a
        b[0] = 7.0
        c = a.astype(np.float32, copy=False)  # another dtype: a copy
        c[1] = 9.0
        return b is a, c is a, c

    x = np.arange(6.0)
    want, y = f(x.copy()), x.copy()
    got = dynamir.compile(f)(y)
    assert_same(got, want)
    assert np.array_equal(y, [7.0, 1, 2, 3, 4, 5])
    assert dynamir.explain(f, x.copy()).graph_break_count == 0
