"""Python float and int inputs whose values change between calls become graph inputs
(Dynamo's automatic dynamic): after the first change, new values reuse the trace instead of
recompiling, until the trace needs a value (a branch, a shape, an index), which then stays a
constant guarded by value. Every call is compared with eager Python: values, types, dtypes."""

import math

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")


def same(a, b):
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return type(a) is type(b) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(a, np.generic):
        return type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and \
            np.array_equal(a, b, equal_nan=True)
    if isinstance(a, torch.Tensor):
        return type(b) is torch.Tensor and a.dtype == b.dtype and a.shape == b.shape and \
            bool(torch.equal(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def run(f, calls):
    compiled = dynamir.compile(f)
    for args in calls:
        want, got = f(*args), compiled(*args)
        assert same(want, got), (args, want, got)
    return dynamir.counters()


X32 = np.linspace(-2, 2, 5, dtype=np.float32)
T32 = torch.linspace(-2, 2, 5)
FLOATS = [0.5, 1.25, -3.0, 7.75, 0.1]


def test_float_argument_is_traced_once_changed():
    c = run(lambda x, a: x * a + a * 2 - a, [(X32, a) for a in FLOATS])
    assert c["recompiles"] == 1 and c["cache_hits"] == len(FLOATS) - 2


@pytest.mark.parametrize("f", [
    lambda x, a: (x * a, a * 3, a + 1, a - 0.5, a / 4, -a, abs(a), float(a)),
    lambda x, a: torch.clamp(x, min=-1.0) * a + torch.relu(x) / 2,
    lambda x, a: [x + a, {"k": a * a}],
    lambda x, a: (isinstance(a, float), type(a).__name__, a),
])
def test_arithmetic_stays_in_the_graph(f):
    x = T32 if "torch" in f.__code__.co_names else X32
    run(f, [(x, a) for a in FLOATS])


@pytest.mark.parametrize("f", [
    lambda x, a: x * 2 if a > 1 else x - 1,                  # a branch
    lambda x, a: x / a if a else x,                          # truth
    lambda x, a: x * math.sqrt(abs(a)),                      # math
    lambda x, a: x ** a,                                     # power fast paths
    lambda x, a: (x, a // 2, a % 2, a ** 2, 1 / a),          # Python semantics of // % ** /
    lambda x, a: x * round(a),                               # builtins
    lambda x, a: (x * 2, f"{a:.2f}", str(a)),                # text (breaks, runs for real)
])
def test_uses_that_need_the_value_stay_exact(f):
    run(f, [(X32, a) for a in FLOATS])


def test_int_argument():
    def f(x, n):
        return x * n + n, x[: n % 3], [x] * (n % 2 + 1)
    c = run(f, [(X32, n) for n in [2, 3, 4, 5, 6]])
    assert c["frames_traced"] >= 2


def test_int_arithmetic_is_exact_beyond_int64():
    def f(x, n):
        return x * 1, n * n * n
    run(f, [(X32, 2 ** 40), (X32, 2 ** 41 + 1), (X32, 2 ** 62)])


def test_int_used_as_loop_count_and_shape():
    def f(x, n):
        for i in range(n):
            x = x + i
        return x.reshape(n, -1) if n in (1, 5) else x
    run(f, [(X32, n) for n in [1, 5, 1, 5, 2]])


def test_value_read_at_a_break_is_an_input_of_the_continuation(capsys):
    def f(x):
        y = x * 2
        mean = float(y.mean())
        dynamir.graph_break()
        print("mean", mean)
        return y + mean
    c = run(f, [(np.full(3, float(i)),) for i in range(12)])
    assert c["eager_runs"] == 0 and c["recompiles"] <= 2


def test_numpy_promotion_of_a_dynamic_float_is_weak():
    def f(x, a):
        return x * a, x + a, a - x
    run(f, [(X32, a) for a in FLOATS])
    run(f, [(np.arange(5), a) for a in FLOATS])   # int array with a float: float64


def test_float_stored_into_an_array():
    def f(x, a):
        y = x.copy()
        y[1] = a
        return y
    run(f, [(X32, a) for a in FLOATS])
    run(f, [(np.arange(5), a) for a in FLOATS])   # float into an int array: numpy truncates


# A Python bool the graph computes from a tensor (bool(t), np.allclose): branches, `not`, the
# frame's result, comparisons with numbers, text (the host formats it) and weak-typed
# arithmetic take it without a break; what needs its value (`is`, sum()) breaks, and the host
# hands the continuation a bool.
A = np.linspace(0, 1, 6)
TRUTHS = {
    "returned": lambda a, b: (np.allclose(a, b), np.isclose(a, b)),
    "branch": lambda a, b: a + 1 if np.allclose(a, b) else a - 1,
    "not": lambda a, b: (not np.allclose(a, b, atol=1e-3), a),
    "all": lambda a, b: bool((a > b).all()),
    "torch": lambda a, b: bool(torch.from_numpy(a).sum() > 1),
    "int_float": lambda a, b: (int(np.allclose(a, b)), float(np.allclose(a, b))),
    "weak_bool": lambda a, b: (a > 0.5) * np.allclose(a, b) + np.arange(6, dtype=np.int8) * True,
    "type": lambda a, b: (type(np.allclose(a, b)), isinstance(np.allclose(a, b), bool)),
    "is": lambda a, b: np.allclose(a, b) is True,
    "equal": lambda a, b: np.allclose(a, b) == 1,
    "text": lambda a, b: f"{np.allclose(a, b)}",
    "sum": lambda a, b: sum([np.allclose(a, b), np.allclose(a, a)]) + 1,
}
BREAKS = {"is", "sum"}


@pytest.mark.parametrize("case", TRUTHS)
def test_bools_the_graph_computes(case):
    f = TRUTHS[case]
    for b in (A + 1e-9, A + 1):
        want = f(A, b)
        for mode in [{}, {"capture_control_flow": True}, {"backend": "eager"}]:
            assert same(dynamir.compile(f, **mode)(A, b), want), (mode, want)
    breaks = dynamir.explain(f, A, A + 1).graph_break_count
    assert (breaks > 0) == (case in BREAKS), breaks


# Numbers read from a tensor (t.item(), float(t), int(t), t.tolist()) are Python numbers the
# graph computes, as torch.compile's capture_scalar_outputs makes them: returned, used in float
# arithmetic, in tensor arithmetic, compared and formatted (text the host formats) without a
# break; where the host needs one (an index, a range) the graph breaks there, and the
# continuation gets the number.
T4 = torch.tensor([1.5, -2.25, 3.0, 0.5])
NUMBERS = {
    "item": lambda x: (x.sum().item(), x.argmax().item(), (x > 0).all().item()),
    "float_int": lambda x: (float(x.max()), int(x.argmin()), int(x.sum()), int(-x.sum())),
    "tolist": lambda x: (x.tolist(), x.reshape(2, 2).tolist(), x[0].tolist(), x.int().tolist()),
    "numpy": lambda x: (x.numpy().sum().item(), float(x.numpy()[1]), x.numpy()[:2].tolist()),
    "arithmetic": lambda x: x.sum().item() * 2.5 - 1.0,
    "int_arithmetic": lambda x: (int(x.argmax()) + 1, int((x > 0).sum()) * 3 - True, 7 - int(x[1])),
    "tensor_operand": lambda x: x * x.sum().item() + float(x[0]),
    "compare": lambda x: (x.sum().item() > 2, float(x[0]) == 1.5, int(x.argmax()) != 2),
    "branch": lambda x: x * 2 if x.sum().item() > 2.5 else x - 1,
    "index": lambda x: x[int(x.argmax())],
    "text": lambda x: (f"{x.sum().item():.2f}", str(int(x.argmax())), "%.1f" % float(x[0])),
    "text_used": lambda x: f"{x.sum().item():.2f}".rjust(8),
    "max_min": lambda x: (max(x.sum().item(), 0.0), min(x.tolist()), max(int(x.argmax()), 1),
                          max(float("nan"), x[0].item()), min(x[0].item(), x[1].item(), key=abs)),
    "sum": lambda x: sum(x.tolist()),  # CPython's own float summation: the builtin, for real
}
NUMBER_BREAKS = {"index", "text_used", "sum"}


@pytest.mark.parametrize("case", NUMBERS)
def test_numbers_read_from_a_tensor(case):
    f = NUMBERS[case]
    for x in (T4, T4 * -3, T4 + 0.25):
        want = f(x)
        for mode in [{}, {"capture_control_flow": True}, {"backend": "eager"}]:
            assert same(dynamir.compile(f, **mode)(x), want), (mode, want)
    breaks = dynamir.explain(f, T4).graph_break_count
    assert (breaks > 0) == (case in NUMBER_BREAKS), breaks


def test_int_of_a_tensor_beyond_int64_runs_eagerly():
    """int() of a float tensor is checked: NaN and infinities raise as in Python, and a value
    beyond int64 is Python's exact big integer."""
    f = dynamir.compile(lambda x: int(x.sum()))
    assert f(torch.tensor([1e30], dtype=torch.float64)) == int(1e30)
    assert f(torch.tensor([2.75], dtype=torch.float64)) == 2
    with pytest.raises(ValueError):
        f(torch.tensor([float("nan")], dtype=torch.float64))
    with pytest.raises(OverflowError):
        f(torch.tensor([float("inf")], dtype=torch.float64))
    # Integer arithmetic beyond int64 is Python's, exact.
    g = dynamir.compile(lambda x: int(x.sum()) * int(x.sum()) + int(x[0]))
    for big in (3, 2**40, 2**62):
        x = torch.tensor([big, 0], dtype=torch.int64)
        assert g(x) == big * big + big


def test_an_assertion_of_allclose_raises_as_eager():
    def f(a, b):
        assert np.allclose(a, b), "differ"
        return a + b

    assert same(dynamir.compile(f)(A, A + 1e-9), f(A, A + 1e-9))
    with pytest.raises(AssertionError, match="differ"):
        dynamir.compile(f)(A, A + 1)


def test_numbers_joined_at_a_data_dependent_branch():
    """A Python number on one side of a branch on a tensor and another number of its type (or a
    number read from a tensor) on the other is a number the graph computes: the branch stays
    one (a host branch, or a device one with capture_control_flow) instead of breaking."""
    def f(x):
        total, flag = 0.0, False
        for v in x.tolist():
            if v > 0:
                total += v
                flag = True
        k = 1 if x.sum() > 0 else 2
        return total, flag, k, x * total

    def mixed(x):
        k = 1 if x.sum() > 0 else 2.5  # an int on one side, a float on the other
        return k

    for x in (T4, -T4, torch.zeros(4)):
        for fn in (f, mixed):
            want = fn(x)
            for mode in [{}, {"capture_control_flow": True}]:
                assert same(dynamir.compile(fn, **mode)(x), want), (fn, mode)
    # The branches of numbers alone stay in the graph (dyn-split-graphs): one graph, no sync.
    e = dynamir.explain(f, T4)
    assert e.graph_break_count == 0 and e.host_syncs == 0 and e.graph_count == 1, e
