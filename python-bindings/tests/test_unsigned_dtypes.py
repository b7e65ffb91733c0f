"""Unsigned integer arrays (numpy's uint8, uint16, uint32, uint64; torch's uint8) compiled, with
no graph break, and compared with eager numpy and torch in type, dtype, shape and value: the
dyn types keep the signedness (ui8) and lower to signless tensors with unsigned arith ops
(division, comparison, extremes, conversion, shifts, sorting)."""

import pathlib

import _dynamir
import numpy as np
import pytest

import dynamir
from test_library_breadth import check, torch

UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]


def uints(dtype, shape=(3, 5), seed=3):
    info = np.iinfo(dtype)
    values = np.random.default_rng(seed).integers(0, info.max, size=shape, endpoint=True,
                                                  dtype=dtype)
    values.flat[:4] = [0, info.max, info.max // 2 + 1, 1]  # 0, all ones, the top bit alone
    return values


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_arithmetic_wraps_and_divides_unsigned(dtype):
    x, y = uints(dtype), uints(dtype, seed=4)
    y.flat[5] = 0
    check(lambda x, y: (x + y, x - y, x * y, -x, abs(x), x ** 3, x ** y), x, y)
    check(lambda x, y: (x // y, x % y, np.fmod(x, y), np.divmod(x, 7)), x, y)  # by 0: 0
    check(lambda x, y: (np.maximum(x, y), np.minimum(x, 1), x * True, 3 - x), x, y)
    check(lambda x, y: (x < y, x >= y, x == y, x != 1, np.greater(x, y)), x, y)
    check(lambda x, y: (x & y, x | 5, x ^ y, ~x, x >> 3, x << 2, x >> (y & 127)), x, y)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_reductions_scans_and_sorting(dtype):
    x = uints(dtype)
    # numpy sums and multiplies unsigned integers in uint64
    check(lambda x: (x.sum(), x.sum(axis=0), x.prod(axis=1), np.cumsum(x, axis=1)), x)
    check(lambda x: (x.max(), x.min(axis=0), x.argmax(axis=1), x.argmin(), x.mean(axis=0)), x)
    check(lambda x: (np.maximum.accumulate(x, axis=1), np.minimum.reduce(x)), x)
    check(lambda x: (np.sort(x, axis=1), np.argsort(x, axis=0, kind="stable")), x)
    long = np.random.default_rng(5).integers(0, np.iinfo(dtype).max, size=300, dtype=dtype)
    check(lambda x: (np.sort(x), np.argsort(x, kind="stable"), np.median(x)), long)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_promotion_with_signed_integers_floats_and_python_numbers(dtype):
    x = uints(dtype)
    for other in [np.int8, np.int16, np.int32, np.int64, np.float16, np.float32]:
        y = np.arange(-7, 8, dtype=other).reshape(3, 5)
        check(lambda x, y: (x + y, x * y, x < y), x, y)  # uint64 with int64 is float64
    check(lambda x: (x + 1, x * 2.5, x / 3, np.sqrt(x), x.astype(np.float16) + 1), x)
    check(lambda x: (x < -1, x > 2**70, x == -5, x + np.uint8(7)), x)  # exact in numpy
    check(lambda x: x + (-1), x)  # OverflowError, as eager


def test_conversions_between_unsigned_signed_and_floats():
    x = uints(np.uint32)
    check(lambda x: (x.astype(np.int8), x.astype(np.uint8), x.astype(np.int64),
                     x.astype(np.float32), x.astype(np.uint64), x.astype(bool)), x)
    i = np.array([-1, -128, 127, 0, 5], np.int8)
    check(lambda i: (i.astype(np.uint8), i.astype(np.uint64), i.astype(np.uint16)), i)
    f = np.array([0.0, 0.9, 254.99, 3.5, 65535.5, 4e9, 1.8e19])
    check(lambda f: (f.astype(np.uint64), f[:4].astype(np.uint8), f[:5].astype(np.uint16)), f)


def test_floats_outside_the_unsigned_range_run_eagerly():
    """numpy's float to unsigned conversion of a negative value, NaN or one beyond the type's
    range depends on its loop (SIMD or scalar): the graph checks for them, and the frame runs
    eagerly and gives numpy's result."""

    def f(x):
        return (x * 2).astype(np.uint32)

    x = np.array([-3e9, 1.0, np.nan, 5e9, -0.5])
    compiled = dynamir.compile(f)
    with np.errstate(invalid="ignore"):
        assert np.array_equal(compiled(x), f(x))
    report = dynamir.explain(f, x)
    assert report.graph_break_count == 0
    assert "a float outside uint32's range converted to it" in str(report)
    check(f, np.array([0.25, 1.0, 2e9]))  # in range: compiled


def test_conversions_the_graph_bounds_are_not_checked():
    """np.clip of values computed from integers bounds them (dyn::elementBounds): converting
    them to uint8 needs no check, inside a loop too. np.clip of a float argument lets NaN
    through, so that conversion stays checked."""

    def blend(a, b):
        mix = (a.astype(np.uint16) * 3 + b.astype(np.uint16)) >> 2
        return np.clip(mix.astype(np.float32) * np.float32(1.2) + np.float32(10), 0,
                       255).astype(np.uint8)

    a, b = uints(np.uint8, (4, 6)), uints(np.uint8, (4, 6), seed=5)
    check(blend, a, b)
    assert "dyn.check" not in str(dynamir.trace(blend, a, b).module)

    def steps(a):
        acc = np.zeros(a.shape, np.uint8)
        for k in range(3):
            acc = acc + np.clip(a * 0.5 + k, 0, 100).astype(np.uint8)
        return acc

    check(steps, a)

    def clipped(x):
        return np.clip(x, 0, 255).astype(np.uint8)

    x = np.array([1.5, np.nan, 300.0, -4.0])
    assert "dyn.check" in str(dynamir.trace(clipped, x).module)
    with np.errstate(invalid="ignore"):
        assert np.array_equal(dynamir.compile(clipped)(x), clipped(x))
    check(clipped, np.array([1.5, 300.0, -4.0]))


def test_index_arrays_of_unsigned_integers():
    x = np.arange(10.0)
    check(lambda x, i: (x[i], np.take(x, i)), x, np.array([9, 0, 3], np.uint8))
    check(lambda x, i: x[i], x, np.array([9, 0, 3], np.uint64))
    # 2^63 is out of bounds (numpy reads it as a negative intp): IndexError, as eager
    check(lambda x, i: x[i], x, np.array([1, 2**63], np.uint64))


def test_torch_uint8():
    t = torch.tensor([[0, 1, 200, 255, 17], [3, 128, 7, 64, 9]], dtype=torch.uint8)
    s = torch.tensor([[1, -2, 3, 4, -5], [6, 7, -8, 9, 10]], dtype=torch.int8)
    check(lambda t: (t + 1, t * 3, t - 5, t // 3, t % 7, -t, t + 300, t < -1), t)  # ints wrap
    check(lambda t: (t.sum(), t.sum(dim=0).dtype, t.max(), t.cumsum(1), t.float() / 2), t)
    check(lambda t, s: (t + s, t * s, torch.maximum(t, t.flip(0))), t, s)  # int16
    check(lambda t: (torch.sort(t, dim=1, stable=True), t.argmax(dim=1), t.to(torch.int64)), t)
    f = torch.tensor([0.5, 3.9, 255.2, 17.0, 100.0])
    check(lambda f: (f.to(torch.uint8), f.byte(), f.byte().float()), f)


def test_torch_unsigned_wider_than_8_bits_runs_eagerly():
    """torch's uint16/32/64 have few kernels (`+` raises NotImplementedError): eager."""
    x = torch.arange(4, dtype=torch.int32).to(torch.uint16)
    report = dynamir.explain(lambda x: x * 2, x)
    assert "unsupported dtype torch.uint16" in str(report)


def test_eager_backend_and_gpu_kernels():
    x, y = uints(np.uint16), uints(np.uint16, seed=9)

    def f(x, y):
        return (x // (y | 1)).max(axis=0), np.minimum(x, y).min(), x > y

    check(f, x, y, backends=("llvm", "eager"))  # uint16 maxima: no warp shuffles on a GPU
    traced = dynamir.trace(f, x, y)
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    for graph in [name for name in traced.module.functions if "_graph" in name]:
        assert pathlib.Path(_dynamir.compile_graph(traced.module._native, graph, "cuda")).exists()


def test_ufunc_at_of_uint64_with_a_python_int_runs_for_real():  # difftest 292300013:21
    """numpy's ufunc.at takes uint64 with a Python int as float64 (rounding values above 2^53);
    other unsigned types compute in their own."""

    def f(x):
        np.subtract.at(x, ([0, -1],), 0)
        np.add.at(x, [1], 7)
        return x

    check(f, uints(np.uint64), breaks=2)
    check(f, uints(np.uint8))
