"""Integer arrays of every signed width (int8, int16, int32, int64) and their bitwise operators:
compared with eager numpy and torch in type, dtype, shape and value, with no graph break, and
with numpy's and torch's own rules where they differ (a Python int out of an array's range
raises OverflowError in numpy and wraps in torch; numpy compares with it exactly)."""

import numpy as np
import pytest

import dynamir
from test_library_breadth import check, torch

SIGNED = [np.int8, np.int16, np.int32, np.int64]


def ints(dtype, shape=(3, 5)):
    info = np.iinfo(dtype)
    values = np.random.default_rng(3).integers(info.min, info.max, size=shape, endpoint=True)
    values.flat[:4] = [info.min, info.max, 0, -1]
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", SIGNED)
def test_arithmetic_wraps_at_the_width(dtype):
    x, y = ints(dtype), ints(dtype)[::-1].copy()
    check(lambda x, y: (x + y, x - y, x * y, -x, abs(x)), x, y)
    check(lambda x, y: (x // y, x % y, np.fmod(x, y)), x, y)  # by 0, MIN // -1
    check(lambda x, y: (x * 3 + 1, 2 - x, x * True), x, y)
    check(lambda x, y: np.maximum(x, y) + np.minimum(x, 1), x, y)
    check(lambda x, y: (x.sum(), x.max(axis=0), x.argmin(), np.cumsum(x, axis=1)), x, y)
    check(lambda x, y: (x / 3, x.mean(axis=1), np.sqrt(np.abs(x.astype(np.float64)))), x, y)
    t, u = torch.from_numpy(x), torch.from_numpy(y)
    check(lambda x, y: (x + y, x * y - 7, -x, x.sum(), x.max(dim=0).values), t, u)


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_narrow_promotion(dtype):
    x = ints(dtype)
    # float ufuncs: the narrowest float that holds the values (np.sqrt of int8 is float16)
    check(lambda x: (np.sqrt(np.abs(x) + 1), np.sin(x)), x, rtol=2e-3)
    check(lambda x: (x + np.ones(5, np.float16), x * np.float32(1.5), x + np.ones(5, np.int32)),
          x)
    check(lambda x: (x + 2.5, x.astype(np.float32) * x), x)
    t = torch.from_numpy(x)
    check(lambda x: (x * 2.5, x + torch.ones(5, dtype=torch.float16)), t)
    check(lambda x: torch.sqrt(x.abs().float()), t, rtol=2e-7)


@pytest.mark.parametrize("dtype", SIGNED)
def test_bitwise_operators_and_shifts(dtype):
    x, y = ints(dtype), ints(dtype)[::-1].copy()
    amounts = (np.arange(15).reshape(3, 5) * 5 - 10).astype(dtype)  # negative, >= the width
    check(lambda x, y: (x & y, x | y, x ^ y, ~x, x & 0x5A, 3 | x), x, y)
    check(lambda x, s: (x << s, x >> s, x << 3, x >> 1, 1 << s), x, amounts)
    check(lambda x, y: (np.bitwise_and(x, y), np.bitwise_xor(x, 7), np.invert(x),
                        np.left_shift(x, 2), np.right_shift(x, y & 7)), x, y)
    t, u, s = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(amounts)
    check(lambda x, y, s: (x & y, x | 3, x ^ y, ~x, x << s, x >> s), t, u, s)
    check(lambda x, y: (torch.bitwise_and(x, y), torch.bitwise_not(x), torch.bitwise_or(x, y),
                        torch.bitwise_left_shift(x, 2), torch.bitwise_right_shift(x, 1)), t, u)


def test_bitwise_operators_on_bools_and_floats():
    a, b = np.array([True, False, True]), np.array([True, True, False])
    check(lambda a, b: (a ^ b, a & b, a | b, ~a, a << 1, np.left_shift(a, b)), a, b)
    check(lambda a, b: a ^ b, torch.from_numpy(a), torch.from_numpy(b))
    # numpy computes these of bools in int8, torch's square in int64
    check(lambda a, b: (a // b, a % b, np.square(a), np.fmod(a, b), a // 1), a, b)
    check(lambda a: torch.square(a), torch.from_numpy(a))
    # numpy and torch raise TypeError; the operator runs for real
    check(lambda x: x & 1, np.ones(3), breaks=1)
    check(lambda x: ~x, torch.ones(3), breaks=1)


def test_a_python_int_out_of_range_raises_in_numpy_and_wraps_in_torch():
    x = np.arange(-3, 3, dtype=np.int8)
    check(lambda x: x + 300, x)  # OverflowError, as eager
    check(lambda x: x * 100 + 127, x)  # in range: wraps
    check(lambda x: (x < 300, x == 1000, x > -2**40, 300 >= x), x)  # exact in numpy
    t = torch.from_numpy(x)
    check(lambda x: (x + 300, x < 300, x == 256), t)  # torch wraps the int
    check(lambda x: x + 2**40, np.arange(3, dtype=np.int32))


def test_a_dynamic_python_int_is_checked_against_the_width():
    # The int changes between calls (a dynamic scalar for wide arrays); numpy raises for one
    # its int32 array cannot hold, so the trace needs its value.
    def f(x, n):
        return x + n, x < n

    x = np.arange(3, dtype=np.int32)
    compiled = dynamir.compile(f)
    for n in [1, 2, 3, 4]:
        for got, want in zip(compiled(x, n), f(x, n)):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(OverflowError):
        compiled(x, 2**40)
    wide = np.arange(3)
    for n in [1, 2, 2**40]:
        for got, want in zip(compiled(wide, n), f(wide, n)):
            assert got.dtype == want.dtype and np.array_equal(got, want)


def test_floats_convert_to_narrow_integers_through_int32():
    x = np.array([300.0, -300.7, 1e10, -1e10, np.nan, np.inf, 127.9, -128.9, 40000.0], np.float32)
    with np.errstate(invalid="ignore"):
        check(lambda x: (x.astype(np.int8), x.astype(np.int16), x.astype(np.int32)), x)
    t = torch.from_numpy(x)
    check(lambda x: (x.to(torch.int8), x.to(torch.int16)), t)


def test_a_numpy_float_scalar_stored_into_integers_runs_for_real():  # difftest 288600033:16
    """numpy converts a float scalar (np.float64, not a 0-d array) stored into an integer array
    as Python converts a float to int: NaN raises ValueError, an out-of-range value
    OverflowError. The store breaks and runs for real."""

    def f(x, d):
        x[:] = d.sum() / d.sum()  # a numpy scalar: NaN for zeros
        return x

    for dtype in [np.int8, np.int64]:
        check(f, np.zeros(3, dtype), np.zeros(2))  # ValueError, as eager
        check(f, np.zeros(3, dtype), np.ones(2), breaks=1)
