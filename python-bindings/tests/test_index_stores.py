"""Stores through advanced indices inside the graph: `x[idx] = v` and `x[rows, cols] = v` are
dyn.scatter ops (numpy's order: the last of repeated indices wins), `x[mask] = v` a dyn.where,
and np.add.at / np.subtract.at a scatter that adds every repeated index again. Each test
compares with eager on copies of the inputs: the result, its type, the arguments after the call,
and the break count; where numpy or torch raise (an index out of bounds), they raise the same."""

import pathlib

import numpy as np
import pytest

import _dynamir
import dynamir
from test_stores import check, copies, same, torch

IDX = np.array([4, 0, -1, 4, 2])  # a repeat and a negative index


def x2(dtype=np.float64):
    return np.arange(30, dtype=dtype).reshape(6, 5)


def test_numpy_index_array_stores():
    def scalar(x, i):
        x[i] = -1.5
        return x

    def rows(x, i):
        x[i] = np.arange(5.0)  # one row broadcast to each index
        return x.sum()

    def values(x, i):
        x[i] = np.arange(25.0).reshape(5, 5) * 10  # the last of the repeated 4s wins
        return x

    def columns(x, i):
        x[:, i % 5] = np.arange(6.0)[:, None]
        return x

    def pairs(x, i):
        x[i, i % 5] = 7.0
        x[[0, 1], [1, 2]] = np.array([8.0, 9.0])
        return x

    def beside_an_int(x, i):
        x[i, 1] = i * 2.5
        x[1:4, [0, 2]] = 3.0  # the arrays' dimensions of a slice's view
        return x

    for fn in (scalar, rows, values, columns, pairs, beside_an_int):
        check(fn, x2(), IDX)
    def integers(x, i):
        x[i] = 300
        x[i[:2], 1] = np.array([1.9, -1.9])  # cast toward zero, as numpy casts
        return x

    check(integers, x2(np.int16), IDX.astype(np.int32))
    check(lambda x, i: scalar(x, i) * 2, np.arange(6.0), IDX)


def test_augmented_index_stores_add_once_per_index():
    # x[i] += v reads x[i], adds, and stores: a repeated index gets the value once (numpy's
    # buffered semantics), unlike np.add.at.
    def augmented(x, i):
        x[i] += 1
        x[i, 0] *= 2.5
        return x

    check(augmented, x2(), IDX)
    check(lambda x, i: augmented(x, i).sum(), x2(np.float32), IDX)


def test_np_add_at_adds_every_repeat():
    def add_at(x, i, v):
        np.add.at(x, i, v)
        np.subtract.at(x, i[:2], 0.25)
        return x

    check(add_at, np.zeros(6), IDX, np.arange(5.0))
    check(add_at, x2(), IDX, np.arange(5.0))  # each index's row gets the row of values

    def histogram(bins, data):
        np.add.at(bins, (data * 4).astype(np.int64), 1)
        return bins

    check(histogram, np.zeros(4, np.int64), np.random.default_rng(0).random(100))

    def masked(x):
        np.add.at(x, x > 10, 100.0)
        return x

    check(masked, x2())
    # numpy computes in float64 and casts back to float32: that runs for real.
    check(add_at, np.zeros(6, np.float32), IDX, np.arange(5.0), breaks=1)


def test_numpy_mask_stores():
    def clip_negative(x):
        x[x < 0] = 0
        return x

    def rows(x):
        x[x[:, 0] > 10] = np.arange(5.0)  # a mask of the rows, one row for each selected
        x[x.sum(axis=1) < 5] = 1.0
        return x

    def leading(x):
        m = x[..., 0] > 0
        x[m] = -2.0
        return x

    check(clip_negative, np.linspace(-3, 3, 13))
    check(clip_negative, np.arange(-6, 6, dtype=np.int8).reshape(3, 4))
    check(rows, x2())
    check(leading, np.random.default_rng(1).normal(size=(3, 4, 2)))


def test_mask_stores_of_another_arrays_values_at_the_same_mask():
    """`x[m] = y[m]` stores as many values as the mask selects by construction: where(m, y, x),
    with the mask computed once or twice (`x[x > 0] = y[x > 0]`), cast to x's dtype; so does
    a value computed elementwise from such selections and scalars (`y[m] * 2`, `x[m] += 1`):
    where(m, y * 2, x), computed at every position."""

    def named(x, y):
        m = x > 0
        x[m] = y[m]
        return x

    def twice(x, y):
        x[x > 0] = y[x > 0] * 2
        return x

    def recomputed(x, y):
        x[x > 0] = y[x > 0]
        return x

    def other_mask(x, y):
        x[x > 0] = y[y > 0]
        return x

    x, y = np.random.default_rng(2).normal(size=(2, 4, 5))
    check(named, x.copy(), y)
    check(recomputed, x.copy(), y.astype(np.float32))
    check(twice, x.copy(), y)
    with pytest.raises(ValueError):  # 13 values for 9 places: numpy raises, the store runs
        dynamir.compile(other_mask)(x.copy(), y)
    assert len(dynamir.trace(other_mask, x.copy(), y).graph_breaks) == 1


def test_mask_stores_of_as_many_values_as_selected():
    # A value whose length is the mask's count only by the values (not computed from
    # selections by the mask) is stored for real; `x[mask] += 1` and values computed
    # elementwise from selections by the mask are where(mask, ..., x); an integer division,
    # which may trap where the mask leaves out, stays a selection (and its store a break).
    def several(x):
        x[x > 3] = np.arange(8.0)[:4]
        return x

    def augmented(x):
        x[x > 3] += 1
        return x

    def mixed(x, y):
        m = x > 3
        x[m] = np.sqrt(y[m]) - x[m] * 0.5
        return x

    def divided(x, y):
        m = x > 3
        x[m] = y[m] // 2
        return x

    def rows(x, y):
        m = x[:, 0] > 0
        x[m] = y[m] * 3 + 1
        return x

    check(several, np.arange(8.0), breaks=1)
    check(augmented, np.arange(8.0))
    check(mixed, np.arange(8.0), np.arange(8.0) + 1)
    check(divided, np.arange(8), np.arange(8) - 4, breaks=1)
    check(rows, np.arange(12.0).reshape(4, 3) - 5, np.ones((4, 3)))


def test_torch_index_and_mask_stores():
    def f(x, i):
        x[i] = -1.0
        x[x > 20] = 0.5
        x[i % 3, 1] += torch.ones(5)
        return x

    check(f, torch.arange(30.0).reshape(6, 5), torch.from_numpy(IDX))

    def other_dtype(x, i):
        x[i] = torch.ones(5, 5, dtype=torch.float64)  # torch raises; numpy would cast
        return x

    with pytest.raises(RuntimeError):
        other_dtype(torch.zeros(6, 5), torch.from_numpy(IDX))
    with pytest.raises(RuntimeError):
        dynamir.compile(other_dtype)(torch.zeros(6, 5), torch.from_numpy(IDX))


def test_an_index_out_of_bounds_raises_and_leaves_the_argument():
    def f(x, i):
        x[0] = 5.0
        x[i] = 1.0
        return x

    want, got = x2(), x2()
    with pytest.raises(IndexError):
        f(want, np.array([0, 6]))
    with pytest.raises(IndexError):
        dynamir.compile(f)(got, np.array([0, 6]))
    same(got, want)
    compiled = dynamir.compile(f)
    for i in (np.array([1, -6]), np.array([-7, 0]), np.array([2, 3])):
        want, got = x2(), x2()
        try:
            f(want, i)
        except IndexError:
            with pytest.raises(IndexError):
                compiled(got, i)
        else:
            same(compiled(got, i), want)
        same(got, want)


def test_scatter_runs_on_the_eager_backend_and_lowers_for_the_gpu():
    def f(x, i, v):
        x[i] = v[: len(i)]
        np.add.at(x, i, 1.0)
        x[x > 100] = 0.0
        return x

    v = np.arange(25.0).reshape(5, 5) * 10
    check(f, x2(), IDX, v, backend="eager")
    traced = dynamir.trace(f, x2(), IDX, v)
    assert "dyn.scatter" in str(traced.module)
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graphs = [name for name in traced.module.functions if "_graph" in name]
    assert graphs
    for graph in graphs:
        assert pathlib.Path(_dynamir.compile_graph(traced.module._native, graph, "cuda")).exists()


def test_torch_index_functions():
    x = torch.arange(24.0).reshape(6, 4)
    i = torch.tensor([4, 0, 4, 2])
    src = torch.arange(16.0).reshape(4, 4) * 10
    check(lambda x: x.index_add(0, i, src), x)  # the repeated 4 adds twice
    check(lambda x: torch.index_add(x, 1, i[:3] % 4, torch.ones(6, 3), alpha=2.0), x)
    check(lambda x: (x.index_copy(0, torch.tensor([5, 1, 3, 0]), src),
                     x.index_fill(1, i % 4, -1.0)), x)

    def in_place(x):
        x.index_add_(0, i, src)
        x.index_fill_(1, torch.tensor([0]), 7.0)
        x.index_put_((i, i % 4), torch.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
        return x

    check(in_place, x.clone())
    check(lambda x: x.index_put((i,), torch.zeros(4)), x)
    check(lambda x: x.index_put((i % 4, i % 3), torch.tensor(9.0)), x)


def test_torch_scatter_and_numpy_put_along_axis():
    x = torch.zeros(3, 5)
    index = torch.tensor([[0, 1, 2, 0, 2], [2, 0, 0, 1, 1]])
    src = torch.arange(1.0, 11.0).reshape(2, 5)
    check(lambda x: (x.scatter(0, index, src), x.scatter_add(0, index, src),
                     torch.scatter(x, 1, index[:, :3], 2.5)), x)

    def in_place(x):
        x.scatter_(1, index, src)
        x.scatter_add_(0, index, torch.ones(2, 5))
        return x

    check(in_place, x.clone())

    def put(a, idx):
        np.put_along_axis(a, idx, 99, axis=1)
        np.put_along_axis(a, idx[:, :1], np.arange(3.0)[:, None] * -1, axis=1)
        return a

    check(put, np.zeros((3, 4)), np.array([[0, 3], [1, 1], [-1, 2]]))


def test_torch_index_functions_that_raise_still_raise():
    x = torch.zeros(4, 3)
    for fn in [lambda x: x.index_add(0, torch.tensor([0, 4]), torch.ones(2, 3)),
               lambda x: x.index_copy(0, torch.tensor([0]), torch.ones(1, 3, dtype=torch.float64)),
               lambda x: x.scatter(0, torch.tensor([[5, 0, 0]]), 1.0)]:
        with pytest.raises(Exception) as want:
            fn(x.clone())
        with pytest.raises(want.type):
            dynamir.compile(fn)(x.clone())
