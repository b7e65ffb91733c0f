"""dynamic=True: sizes are symbols, not values. What the trace combined (elementwise operands,
contracted dimensions) is guarded equal, sizes of 0 and 1 are traced as static sizes, and a
program that raises on its sizes raises compiled too (a graph once read out of bounds:
`a + b` of sizes 3 and 4 returned three values, `a @ b` of (2, 3) and (4, 2) a product)."""

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")


def same_outcome(f, *args):
    """The compiled call raises what eager raises, or returns eager's result."""
    compiled = dynamir.compile(f, dynamic=True)
    try:
        want = f(*args)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            compiled(*args)
        return None
    got = compiled(*args)
    assert type(got) is type(want) and got.shape == want.shape and got.dtype == want.dtype
    assert np.allclose(got, want)
    return got


def add(a, b):
    return a + b


@pytest.mark.parametrize("sizes", [((3,), (4,)), ((2, 5), (2, 4)), ((3, 4), (3,))])
def test_elementwise_operands_of_other_sizes_raise(sizes):
    a, b = (np.ones(s) for s in sizes)
    # Traced on equal sizes first: the guard relates them, and the new call retraces.
    compiled = dynamir.compile(add, dynamic=True)
    compiled(np.ones(sizes[0]), np.ones(sizes[0]))
    with pytest.raises(ValueError):
        compiled(a, b)
    with pytest.raises(ValueError):
        dynamir.compile(add, dynamic=True)(a, b)


def test_sizes_of_one_broadcast_as_numpy():
    compiled = dynamir.compile(add, dynamic=True)
    x = np.arange(6.0)
    assert np.array_equal(compiled(x, x), x + x)
    # A size of 1 is no `?`: the guard fails and the new trace broadcasts.
    assert np.array_equal(compiled(x, np.ones(1)), x + 1)
    assert np.array_equal(compiled(np.ones(1), x), x + 1)
    assert dynamir.counters()["guard_failures"][0] == (
        "L['b']: expected a size of at least 2 in dimension 0 (dynamic), got 1")


def test_equal_sizes_share_one_trace():
    compiled = dynamir.compile(lambda a, b: np.tanh(a) * b + a.sum(axis=0), dynamic=True)
    for n in (3, 8, 100):
        a, b = np.ones((n, 4)) * 0.5, np.full((n, 4), 2.0)
        assert np.allclose(compiled(a, b), np.tanh(a) * b + a.sum(axis=0))
    c = dynamir.counters()
    assert c["frames_traced"] == 1 and c["cache_hits"] == 2
    with pytest.raises(ValueError):
        compiled(np.ones((3, 4)), np.ones((5, 4)))


def test_guards_name_the_symbols():
    module = dynamir.trace(add, np.ones((3, 4)), np.ones((3, 4)), dynamic=True)
    text = str(module)
    assert "\"L['a']\", %arg0 type \"numpy.ndarray\" contiguous symbols [0, 1]" in text
    assert "\"L['b']\", %arg1 type \"numpy.ndarray\" contiguous symbols [0, 1]" in text


@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((2, 3), (4, 2)), ((5, 3), (3,)),
                                    ((3,), (4,))])
def test_contracted_sizes(shapes):
    same_outcome(lambda a, b: a @ b, *(np.ones(s) for s in shapes))


def test_a_size_the_graph_computes_is_not_guarded_equal():
    # The concatenation's size is 11, a's 5: numpy raises; the trace cannot relate them.
    def f(a, b):
        return np.concatenate([a, b]) + a

    same_outcome(f, np.ones(5), np.ones(6))
    same_outcome(f, np.ones(3), np.ones(3))


@pytest.mark.parametrize("shapes", [((4, 3), (5, 3), (5,)), ((4, 3), (5, 3), (6,)),
                                    ((4, 3), (5, 4), (5,))])
def test_torch_linear(shapes):
    x, w, b = (torch.ones(s) for s in shapes)
    f = lambda x, w, b: torch.nn.functional.linear(x, w, b).relu()  # noqa: E731
    compiled = dynamir.compile(f, dynamic=True)
    try:
        want = f(x, w, b)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            compiled(x, w, b)
        return
    assert torch.equal(compiled(x, w, b), want)


def test_a_view_of_the_callers_array_is_returned_as_a_view():
    x = np.ones((3, 4))
    got = dynamir.compile(lambda x: x.T, dynamic=True)(x)
    assert np.shares_memory(got, x) and got.shape == (4, 3)


def test_unstable_sorts_of_dynamic_sizes_keep_numpys_order_of_ties():
    # numpy's introsort orders the ties of 20 bools its own way (difftest 20261201:148).
    def f(x):
        return np.argsort(x > 0, axis=None)

    x = np.ones((4, 5))
    x[0, 0] = -1
    assert np.array_equal(dynamir.compile(f, dynamic=True)(x), f(x))


def test_a_batched_product_of_dynamic_sizes():
    # [?, ?, k] @ [k, n] is one product over collapsed rows, expanded back by a reshape:
    # upstream's expand-strided-metadata crashed on the expand_shape of two dynamic sizes
    # (difftest 294200045:95, SIGSEGV).
    rng = np.random.default_rng(0)
    f = dynamir.compile(lambda x, w: x @ w, dynamic=True)
    for b, t in ((2, 3), (4, 5)):
        x, w = rng.standard_normal((b, t, 6)), rng.standard_normal((6, 7))
        assert np.allclose(f(x, w), x @ w)


def test_results_of_one_allocation_are_arrays_of_their_own():
    # At the break (reading a dynamic size), xs[0] and np.stack(xs) leave the graph as one
    # buffer (the stack bufferized as a view): the host must get two arrays, or `v += 2`
    # after the break changes the caller's xs[0] (difftest 294300033:13).
    def f(x, xs):
        xs[0] = xs[0] * 2
        v = np.stack(xs)
        if x.shape[0] > 2:
            v += 2
        return v

    xs, want_xs = [np.ones((5, 2))], [np.ones((5, 2))]
    want = f(np.ones(3), want_xs)
    got = dynamir.compile(f, dynamic=True)(np.ones(3), xs)
    assert np.array_equal(got, want) and np.array_equal(xs[0], want_xs[0])
