"""np.linalg.cholesky / solve and torch.linalg.cholesky / solve in the graph: dyn.cholesky and
dyn.solve, run through LAPACK (numpy's own OpenBLAS routines: potrf, getrf, getrs). Results
equal eager numpy and torch to a few ulps of the factorization, with numpy's dtypes (float32
stays float32, integers become float64); a matrix that is not positive definite, or singular,
raises numpy's and torch's own errors (the graph's check runs the frame eagerly)."""

import numpy as np
import pytest

import _dynamir
import dynamir
from test_library_breadth import check, torch

RNG = np.random.default_rng(7)


def spd(n, batch=(), dtype=np.float64):
    m = RNG.normal(size=batch + (n, n))
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cholesky(dtype):
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    check(lambda a: np.linalg.cholesky(a), spd(5, dtype=dtype), rtol=rtol, atol=rtol)
    check(lambda a: np.linalg.cholesky(a * 2) @ np.ones(7, dtype), spd(7, (3,), dtype), rtol=rtol,
          atol=rtol)
    check(lambda a: np.linalg.cholesky(a + a.T), spd(1, dtype=dtype), rtol=rtol)
    t = torch.from_numpy(spd(6, (2,), dtype))
    check(lambda a: torch.linalg.cholesky(a).sum(-1), t, rtol=rtol, atol=rtol)


def test_cholesky_reads_the_lower_triangle_and_converts_integers():
    a = spd(4)
    lower_only = np.tril(a) + np.triu(np.full((4, 4), 99.0), 1)
    check(lambda a: np.linalg.cholesky(a), lower_only, rtol=1e-12, atol=1e-12)
    check(lambda a: np.linalg.cholesky(a), np.array([[4, 2], [2, 3]]), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_solve(dtype):
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    a = (RNG.normal(size=(6, 6)) + 4 * np.eye(6)).astype(dtype)
    b, bs = RNG.normal(size=6).astype(dtype), RNG.normal(size=(6, 3)).astype(dtype)
    check(lambda a, b: np.linalg.solve(a, b), a, b, rtol=rtol, atol=rtol)
    check(lambda a, b: np.linalg.solve(a, b) * 2, a, bs, rtol=rtol, atol=rtol)
    batch = (RNG.normal(size=(4, 6, 6)) + 4 * np.eye(6)).astype(dtype)
    check(lambda a, b: np.linalg.solve(a, b), batch, np.stack([bs] * 4), rtol=rtol, atol=rtol)
    ta, tb = torch.from_numpy(batch), torch.from_numpy(RNG.normal(size=(4, 6)).astype(dtype))
    check(lambda a, b: torch.linalg.solve(a, b), ta, tb, rtol=rtol, atol=rtol)
    check(lambda a, b: torch.linalg.solve(a, b.unsqueeze(-1)), ta, tb, rtol=rtol, atol=rtol)


def test_least_squares_through_normal_equations():
    # A kernel as scientific code writes it: solve the normal equations by Cholesky.
    def fit(x, y):
        a = np.stack([np.ones_like(x), x, x * x], axis=1)
        g = a.T @ a
        l = np.linalg.cholesky(g)
        z = np.linalg.solve(l, a.T @ y)
        return np.linalg.solve(l.T, z)

    x = np.linspace(-1, 1, 40)
    check(fit, x, 1 + 2 * x - 3 * x * x + 0.01 * np.sin(40 * x), rtol=1e-9, atol=1e-12)


def test_mixed_dtypes_are_computed_as_numpy_does():
    a, b = spd(4, dtype=np.float32), np.arange(4.0)
    check(lambda a, b: np.linalg.solve(a, b), a, b, rtol=1e-6)  # float64: b is
    check(lambda a, b: np.linalg.solve(a, b.astype(np.int64)), a, b, rtol=1e-6)


def test_failures_raise_as_eagerly_and_leave_the_arguments():
    def f(a, b):
        b[0] = 1.0
        return np.linalg.cholesky(a) @ b, np.linalg.solve(a, b)

    singular = np.ones((3, 3))
    for a in (singular, -np.eye(3)):
        want, got = np.zeros(3), np.zeros(3)
        with pytest.raises(np.linalg.LinAlgError):
            f(a, want)
        with pytest.raises(np.linalg.LinAlgError):
            dynamir.compile(f)(a, got)
        np.testing.assert_array_equal(got, want)
    # the same compiled function on good values; NaNs raise nothing (LAPACK's tests are
    # comparisons, false for NaN), in numpy and in the graph
    check(f, spd(3), np.zeros(3), rtol=1e-12, atol=1e-12)
    check(f, np.full((3, 3), np.nan), np.zeros(3))
    check(lambda a: torch.linalg.cholesky(a), -torch.eye(3, dtype=torch.float64))


def test_what_is_not_modelled_breaks():
    a = spd(3)
    check(lambda a: np.linalg.cholesky(a, upper=True), a, rtol=1e-12, atol=1e-12, breaks=1)
    check(lambda a: np.linalg.solve(np.stack([a, a]), np.ones(3)), a, rtol=1e-12, breaks=1)
    check(lambda a: np.linalg.cholesky(a.astype(np.float16)), a, breaks=1)  # numpy raises


def test_eager_backend_and_the_gpu():
    def f(a, b):
        return np.linalg.solve(np.linalg.cholesky(a), b)

    a, b = spd(4), np.arange(4.0)
    check(f, a, b, rtol=1e-12, atol=1e-12, backends=("llvm", "eager"))
    traced = dynamir.trace(f, a, b)
    text = str(traced.module)
    assert "dyn.cholesky" in text and "dyn.solve" in text
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graph = next(name for name in traced.module.functions if "_graph" in name)
    # GPU graphs have no LAPACK: the compilation fails with the reason (the frame then runs
    # eagerly on a GPU machine).
    with pytest.raises(RuntimeError, match="LAPACK"):
        _dynamir.compile_graph(traced.module._native, graph, "cuda")
