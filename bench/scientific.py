"""Scientific numpy kernels: numpy, numba (@njit), jax.jit and Dynamir side by side.

The kind of code numba and JAX exist for: a stencil with a time loop, a triangular solve, a
correlation matrix, an n-body step, a complex butterfly, a convolution written with slices, a
uint8 image blend, Jacobi sweeps until a tolerance (a while loop the data ends) and conjugate
gradients (a for loop the data leaves by `break`).
Each kernel is written once as plain numpy (what Dynamir compiles and what numba compiles where
it can); JAX gets the same computation in its functional style (`.at[].set` for stores). One
run measures every system on the same inputs: the first call (trace or JIT compile plus one
run, Dynamir from an empty disk cache), the median of warm calls, the speedup over numpy and
the geometric mean of the speedups. Dynamir's graph breaks and eager runs are reported, and
every result is checked against numpy's.

    scripts/bench.sh --scientific         # installs numba and jax first
    .venv/bin/python bench/scientific.py [--threads N] [--one-core] [--only heat corr]
"""

import argparse
import functools
import math
import os
import tempfile
import time

import numpy as np

import dynamir
from run import median_ms  # bench/run.py, beside this script

# --- the kernels, in numpy -------------------------------------------------------------------


def heat(u0, steps=20, alpha=0.1):
    """2-D explicit heat diffusion: a 5-point stencil updated in place, `steps` times."""
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1])
    return u


def forward_substitution(L, b):
    """x with L x = b for lower-triangular L, one row at a time."""
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = (b[i] - np.dot(L[i, :i], x[:i])) / L[i, i]
    return x


def correlation(X, xp=np):
    """Pearson correlation of the columns of X (`xp`: numpy, or jax.numpy for jax)."""
    centered = X - X.mean(axis=0)
    cov = centered.T @ centered / (X.shape[0] - 1)
    d = xp.sqrt(xp.diag(cov))
    return cov / xp.outer(d, d)


def nbody(p, v, m, dt=0.01, eps=1e-3):
    """One leapfrog step of n gravitating bodies (all pairs; operators only, so jax runs it
    as it is)."""
    dx = p[None, :, :] - p[:, None, :]
    r2 = (dx * dx).sum(axis=2) + eps
    inv = r2 ** -1.5
    acc = (dx * (m[None, :, None] * inv[:, :, None])).sum(axis=1)
    v = v + dt * acc
    return p + dt * v, v


def butterfly(x, w, xp=np):
    """One radix-2 decimation-in-time stage of a complex FFT."""
    even, odd = x[0::2], x[1::2]
    t = w * odd
    return xp.concatenate([even + t, even - t])


def conv_slices(img, k):
    """A 3x3 filter written with shifted slices (valid region)."""
    h, w = img.shape
    out = np.zeros((h - 2, w - 2), img.dtype)
    for i in range(3):
        for j in range(3):
            out += k[i, j] * img[i:i + h - 2, j:j + w - 2]
    return out


def image_blend(a, b, xp=np):
    """Two uint8 images blended 3:1 in uint16, brightened in float32 and saturated to uint8."""
    mix = (a.astype(np.uint16) * 3 + b.astype(np.uint16)) >> 2
    return xp.clip(mix.astype(np.float32) * np.float32(1.2) + np.float32(10), 0, 255).astype(
        np.uint8)


def jacobi(u0, tol=1e-3, max_iter=1000):
    """Jacobi sweeps of Laplace's equation with fixed edges until the largest change is under
    `tol` (or `max_iter` sweeps): a while loop whose trip count the data decides."""
    u = u0.copy()
    err = 1.0
    it = 0
    while err > tol and it < max_iter:
        new = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
        err = np.abs(new - u[1:-1, 1:-1]).max()
        u[1:-1, 1:-1] = new
        it += 1
    return u, it


def conjugate_gradient(A, b, tol=1e-8, max_iter=1000):
    """Conjugate gradients for a symmetric positive definite A until the residual's norm is
    under `tol`: a for loop that a `break` on the data leaves, a matrix-vector product each
    iteration."""
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = r @ r
    for i in range(max_iter):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        if np.sqrt(rs_new) < tol:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x  # not i: where the residual meets tol, rounding may decide one iteration more


# --- numba versions where numba cannot take the numpy code as it is --------------------------


def numba_forward_substitution(L, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]
    return x


def numba_correlation(X):
    centered = X - X.sum(axis=0) / X.shape[0]
    cov = np.ascontiguousarray(centered.T) @ centered / (X.shape[0] - 1)
    d = np.sqrt(np.diag(cov))
    return cov / np.outer(d, d)


NUMBA_SOURCE = {"forward_substitution": numba_forward_substitution,
                "correlation": numba_correlation}


# --- jax versions of the kernels that store (functional updates) ----------------------------


def jax_versions(jax):
    jnp = jax.numpy

    def j_heat(u, steps=20, alpha=0.1):
        for _ in range(steps):
            u = u.at[1:-1, 1:-1].set(u[1:-1, 1:-1] + alpha * (
                u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]))
        return u

    def j_forward_substitution(L, b):
        n = b.shape[0]

        def row(i, x):
            mask = jnp.arange(n) < i
            return x.at[i].set((b[i] - jnp.dot(jnp.where(mask, L[i], 0.0), x)) / L[i, i])

        return jax.lax.fori_loop(0, n, row, jnp.zeros_like(b))

    def j_jacobi(u0, tol=1e-3, max_iter=1000):  # a Python while on traced values fails
        def sweep(state):
            u, _, it = state
            new = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
            err = jnp.abs(new - u[1:-1, 1:-1]).max()
            return u.at[1:-1, 1:-1].set(new), err, it + 1

        u, _, it = jax.lax.while_loop(lambda s: (s[1] > tol) & (s[2] < max_iter), sweep,
                                      (u0, jnp.asarray(1.0, u0.dtype), 0))
        return u, it

    def j_conjugate_gradient(A, b, tol=1e-8, max_iter=1000):  # nor a Python break
        def step(state):
            x, r, p, rs, i, _ = state
            Ap = A @ p
            alpha = rs / (p @ Ap)
            r = r - alpha * Ap
            rs_new = r @ r
            done = jnp.sqrt(rs_new) < tol
            return (x + alpha * p, r, jnp.where(done, p, r + (rs_new / rs) * p),
                    jnp.where(done, rs, rs_new), i + 1, done)

        return jax.lax.while_loop(lambda s: ~s[5] & (s[4] < max_iter), step,
                                  (jnp.zeros_like(b), b, b, b @ b, 0, False))[0]

    def j_conv_slices(img, k):
        h, w = img.shape
        out = jnp.zeros((h - 2, w - 2), img.dtype)
        for i in range(3):
            for j in range(3):
                out = out + k[i, j] * img[i:i + h - 2, j:j + w - 2]
        return out

    return {"heat": j_heat, "forward_substitution": j_forward_substitution,
            "correlation": functools.partial(correlation, xp=jnp), "nbody": nbody,
            "butterfly": functools.partial(butterfly, xp=jnp), "conv_slices": j_conv_slices,
            "image_blend": functools.partial(image_blend, xp=jnp), "jacobi": j_jacobi,
            "conjugate_gradient": j_conjugate_gradient}


# --- inputs ----------------------------------------------------------------------------------


def spd_system(rng, n):
    """A symmetric positive definite n x n system whose eigenvalues run from 0.05 to about 4
    (for n = 512, conjugate gradients take about a hundred iterations to 1e-8)."""
    M = rng.standard_normal((n, n))
    return M.T @ M / n + 0.05 * np.eye(n), rng.standard_normal(n)


def kernels():
    """name -> (numpy function, inputs)."""
    rng = np.random.default_rng(0)
    n = 160
    L = np.tril(rng.standard_normal((n, n))) + n * np.eye(n)
    bodies = 384
    x = rng.standard_normal(1 << 16) + 1j * rng.standard_normal(1 << 16)
    w = np.exp(-2j * np.pi * np.arange(1 << 15) / (1 << 16))
    return {
        "heat": (heat, (rng.random((256, 256)),)),
        "forward_substitution": (forward_substitution, (L, rng.standard_normal(n))),
        "correlation": (correlation, (rng.standard_normal((4000, 64)),)),
        "nbody": (nbody, (rng.standard_normal((bodies, 3)), rng.standard_normal((bodies, 3)),
                          rng.random(bodies) + 0.5)),
        "butterfly": (butterfly, (x, w)),
        "conv_slices": (conv_slices, (rng.random((1024, 1024)).astype(np.float32),
                                      rng.random((3, 3)).astype(np.float32))),
        "image_blend": (image_blend, tuple(rng.integers(0, 256, (1080, 1920, 3), np.uint8)
                                           for _ in range(2))),
        "jacobi": (jacobi, (np.pad(np.ones((1, 254)), ((0, 255), (1, 1))),)),
        "conjugate_gradient": (conjugate_gradient, spd_system(rng, 512)),
    }


# --- the run ---------------------------------------------------------------------------------


def agrees(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    return all(np.allclose(np.asarray(g), w, rtol=1e-5, atol=1e-6) for g, w in zip(got, want))


def first_and_steady(fn, args, reps, ready=lambda r: r):
    t = time.perf_counter()
    out = ready(fn(*args))
    first = time.perf_counter() - t
    return out, first, median_ms(lambda: ready(fn(*args)), reps)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int,
                        help="Dynamir's threads (default: its own, every core, as jax.jit's "
                             "thread pool; numba's @njit and numpy run on one)")
    parser.add_argument("--one-core", action="store_true",
                        help="pin the process to one core: every system runs on one")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only", nargs="*", help="kernel names (prefixes)")
    args = parser.parse_args()
    os.environ["DYNAMIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="dynamir-scientific-cache-")
    if args.one_core:  # before jax starts its threads: they all share the one core
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        dynamir.set_num_threads(1)
    if args.threads:
        dynamir.set_num_threads(args.threads)
    try:
        import numba
    except ImportError:
        numba = None
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        jv = jax_versions(jax)
    except ImportError:
        jax, jv = None, {}
    cores = len(os.sched_getaffinity(0))
    print(f"# {cores} of {os.cpu_count()} cores, numpy {np.__version__}, Dynamir on "
          f"{dynamir.get_num_threads()} threads; steady times in ms (speedup over numpy), "
          f"first calls in s")
    print("| kernel | numpy | numba | jax.jit | Dynamir | first call: numba / jax / Dynamir "
          "| Dynamir breaks |")
    print("|---|---|---|---|---|---|---|")
    speedups = {"numba": [], "jax.jit": [], "Dynamir": []}
    for name, (fn, inputs) in kernels().items():
        if args.only and not any(name.startswith(p) for p in args.only):
            continue
        want = fn(*inputs)
        base = median_ms(lambda: fn(*inputs), args.reps)
        cells, firsts = {}, {}
        if numba:
            try:
                compiled = numba.njit(NUMBA_SOURCE.get(name, fn))
                got, firsts["numba"], cells["numba"] = first_and_steady(compiled, inputs, args.reps)
                if not agrees(got, want):
                    cells["numba"] = "wrong"
            except Exception as e:  # numba rejects the program: reported, not measured
                cells["numba"] = f"fails ({type(e).__name__})"
        if jax and name in jv:
            jf = jax.jit(jv[name])
            jinputs = [jax.numpy.asarray(a) for a in inputs]
            block = lambda r: jax.block_until_ready(r)
            got, firsts["jax.jit"], cells["jax.jit"] = first_and_steady(jf, jinputs, args.reps,
                                                                        block)
            if not agrees(got, want):
                cells["jax.jit"] = "wrong"
        dynamir.reset()
        ours = dynamir.compile(fn)
        got, firsts["Dynamir"], cells["Dynamir"] = first_and_steady(ours, inputs, args.reps)
        if not agrees(got, want):
            cells["Dynamir"] = "wrong"
        c = dynamir.counters()
        breaks = "eager" if c["eager_runs"] else str(c["graph_breaks_hit"])

        def cell(peer):
            v = cells.get(peer)
            if not isinstance(v, float):
                return v or "-"
            speedups[peer].append(base / v)
            return f"{v:.3f} ({base / v:.2f}x)"

        first = " / ".join(f"{firsts[p]:.2f}" if p in firsts else "-"
                           for p in ("numba", "jax.jit", "Dynamir"))
        print(f"| {name} | {base:.3f} | {cell('numba')} | {cell('jax.jit')} | "
              f"{cell('Dynamir')} | {first} | {breaks} |", flush=True)
    means = ", ".join(
        f"{peer} {math.exp(sum(map(math.log, s)) / len(s)):.2f}x over {len(s)}"
        for peer, s in speedups.items() if s)
    print(f"\ngeometric mean of the speedups over numpy: {means}")


if __name__ == "__main__":
    main()
