"""Dynamir benchmarks against numpy, numexpr, torch eager, torch.compile, jax.jit and numba.

One run measures every system side by side on the same inputs (medians of rounds that call
each system in turns, warm inputs, fresh outputs as each library allocates them) and reports
ratios to numpy. It also
measures compile cost (first call; a second process with a warm Dynamir disk cache), per-call
overhead on a 3-element input, and guard-evaluation cost with 1, 10 and 100 guards.

    scripts/bench.sh            # installs the peers, builds, runs, writes bench/results/
    .venv/bin/python bench/run.py --quick
"""

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import dynamir

RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def median_ms(fn, reps, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def interleaved_ms(systems, inputs, rounds, calls=5):
    """Median ms per call of each system, timed in turns: each round runs `calls` calls of every
    system one after the other, so that the machine's drift (it is shared, and its speed moves
    by 1.5x within minutes) falls on all of them alike instead of on whichever ran last."""
    for fn in systems.values():
        for _ in range(3):
            fn(*inputs)
    times = {name: [] for name in systems}
    for _ in range(rounds):
        for name, fn in systems.items():
            t = time.perf_counter()
            for _ in range(calls):
                fn(*inputs)
            times[name].append((time.perf_counter() - t) / calls)
    return {name: statistics.median(ts) * 1e3 for name, ts in times.items()}


def first_call_s(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# ----------------------------------------------------------------------------------------------
# Workloads: numpy reference, and the same program for each peer.

def np_chain(x):
    return np.cos(np.sin(x * 2) + 1) * 3


def np_axpb(x):
    return x * 2 + 1


def np_chain_out(x, out):
    np.multiply(x, 2, out=out)
    np.sin(out, out=out)
    np.add(out, 1, out=out)
    np.cos(out, out=out)
    return np.multiply(out, 3, out=out)


def np_axpb_out(x, out):
    np.multiply(x, 2, out=out)
    return np.add(out, 1, out=out)


# numpy writing into one preallocated, already-touched output: the warm-output figure, without
# the page faults a fresh result costs (~10 us per 4 KiB page on these machines). Dynamir's
# own figure is warm as well once the caller drops its previous result (outputs recycled).
NUMPY_WARM_OUTPUT = dict(chain=np_chain_out, axpb=np_axpb_out)


def np_sumsq(x):
    return (x * x).sum()


def np_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_mlp(x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return h @ w3 + b3


def np_seed(x, w, b):
    x = x * 2
    if x.sum() > 0:
        x = np.sin(x)
    if x.mean() > 0:
        x = np.cos(x)
    return x @ w.T + b


def np_branch(x):
    y = x * 2
    if y.sum() > 0:
        y = np.sin(y)
    else:
        y = np.cos(y)
    return y * 3


NUMEXPR = {"chain": "cos(sin(x * 2) + 1) * 3", "axpb": "x * 2 + 1", "sumsq": "sum(x * x)"}


def torch_versions(torch):
    def chain(x):
        return torch.cos(torch.sin(x * 2) + 1) * 3

    def axpb(x):
        return x * 2 + 1

    def sumsq(x):
        return (x * x).sum()

    def softmax(x):
        return torch.softmax(x, dim=1)

    def mlp(x, w1, b1, w2, b2, w3, b3):
        h = torch.relu(x @ w1 + b1)
        h = torch.relu(h @ w2 + b2)
        return h @ w3 + b3

    def branch(x):
        y = x * 2
        if y.sum() > 0:
            y = torch.sin(y)
        else:
            y = torch.cos(y)
        return y * 3

    def seed(x, w, b):
        x = x * 2
        if x.sum() > 0:
            x = torch.sin(x)
        if x.mean() > 0:
            x = torch.cos(x)
        return torch.nn.functional.linear(x, w, b)

    return dict(chain=chain, axpb=axpb, sumsq=sumsq, softmax=softmax, mlp=mlp, branch=branch,
                seed=seed)


def jax_versions(jax):
    jnp = jax.numpy

    def chain(x):
        return jnp.cos(jnp.sin(x * 2) + 1) * 3

    def axpb(x):
        return x * 2 + 1

    def sumsq(x):
        return (x * x).sum()

    def softmax(x):
        return jax.nn.softmax(x, axis=1)

    def mlp(x, w1, b1, w2, b2, w3, b3):
        h = jnp.maximum(x @ w1 + b1, 0)
        h = jnp.maximum(h @ w2 + b2, 0)
        return h @ w3 + b3

    def branch(x):
        y = x * 2
        return jax.lax.cond(y.sum() > 0, jnp.sin, jnp.cos, y) * 3

    return {k: jax.jit(v) for k, v in dict(chain=chain, axpb=axpb, sumsq=sumsq, softmax=softmax,
                                            mlp=mlp, branch=branch).items()}


def numba_versions(numba):
    @numba.njit(fastmath=True)
    def chain(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = np.cos(np.sin(x[i] * 2) + 1) * 3
        return out

    @numba.njit(fastmath=True)
    def axpb(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = x[i] * 2 + 1
        return out

    @numba.njit(fastmath=True)
    def sumsq(x):
        s = np.float32(0)
        for i in range(x.size):
            s += x[i] * x[i]
        return s

    @numba.njit(fastmath=True)
    def softmax(x):
        out = np.empty_like(x)
        for r in range(x.shape[0]):
            m = x[r].max()
            e = np.exp(x[r] - m)
            out[r] = e / e.sum()
        return out

    return dict(chain=chain, axpb=axpb, sumsq=sumsq, softmax=softmax)


# ----------------------------------------------------------------------------------------------

def inputs_for(name, size, rng):
    if name == "seed":
        return (-np.ones(size, np.float32), rng.standard_normal((2, size)).astype(np.float32),
                rng.standard_normal(2).astype(np.float32))
    if name in ("chain", "axpb", "sumsq", "branch"):
        return (rng.standard_normal(size).astype(np.float32),)
    if name == "softmax":
        return (rng.standard_normal(size).astype(np.float32),)
    if name == "mlp":
        batch, width = size
        layer = lambda i, o: ((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32),
                              np.zeros(o, np.float32))
        w1, b1 = layer(width, width)
        w2, b2 = layer(width, width)
        w3, b3 = layer(width, 16)
        return (rng.standard_normal((batch, width)).astype(np.float32), w1, b1, w2, b2, w3, b3)
    raise ValueError(name)


NUMPY = dict(chain=np_chain, axpb=np_axpb, sumsq=np_sumsq, softmax=np_softmax, mlp=np_mlp,
             branch=np_branch, seed=np_seed)


first_calls = []


def run_throughput(args, peers):
    rng = np.random.default_rng(0)
    if args.quick:
        plan = [("chain", [10**3, 10**5, 10**6]), ("axpb", [10**3, 10**6]),
                ("sumsq", [10**3, 10**6]), ("softmax", [(256, 1024)]), ("mlp", [(64, 256)]),
                ("branch", [10**6]), ("seed", [3])]
    else:
        plan = [("chain", [10**3, 10**5, 10**7]), ("axpb", [10**3, 10**5, 10**7]),
                ("sumsq", [10**3, 10**5, 10**7]), ("softmax", [(4096, 1024)]),
                ("mlp", [(256, 1024)]), ("branch", [10**7]), ("seed", [3])]
    rows = []
    for name, sizes in plan:
        compiled = {"dynamir": dynamir.compile(NUMPY[name])}
        if name == "branch":
            compiled["dynamir (capture_control_flow)"] = dynamir.compile(
                NUMPY[name], capture_control_flow=True)
        for index, size in enumerate(sizes):
            data = inputs_for(name, size, rng)
            reps = 5 if np.prod(size) >= 10**6 else 50
            row = {"workload": name, "size": size if isinstance(size, int) else list(size)}
            expected = NUMPY[name](*data)
            systems = {"numpy": lambda: NUMPY[name](*data)}
            if name in NUMPY_WARM_OUTPUT:
                out = np.empty_like(expected)
                warm = NUMPY_WARM_OUTPUT[name]
                systems["numpy (warm output)"] = lambda: warm(*data, out)
            for label, fn in compiled.items():
                if index == 0:  # trace + compile, with the run's empty disk cache
                    first_calls.append((name, label, first_call_s(lambda: fn(*data))))
                got = fn(*data)
                if np.allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-4):
                    systems[label] = lambda fn=fn: fn(*data)
                else:
                    row[label] = "wrong"
            for label, fn in peers(name, data):
                try:
                    if index == 0 and label in ("torch.compile", "numba", "jax.jit"):
                        first_calls.append((name, label, first_call_s(fn)))
                    fn()
                    systems[label] = fn
                except Exception as e:  # a peer that cannot run this workload
                    row[label] = f"n/a ({type(e).__name__})"
            # In turns, one call of each system per round: the machine's drift falls on all.
            row.update(interleaved_ms(systems, (), rounds=reps, calls=1))
            rows.append(row)
            print_row(row)
    return rows


def make_peers(args):
    torch = jax = numba = numexpr = None
    try:
        import torch
        from model_zoo import set_torch_threads  # bench/model_zoo.py, beside this script
        set_torch_threads(args.threads)
        # Inference throughout: Dynamir's graphs compute no gradients (a model whose
        # parameters would record them runs eagerly), and torch is measured the same way.
        torch.set_grad_enabled(False)
    except ImportError:
        pass
    try:
        import numexpr
    except ImportError:
        pass
    try:
        import jax
    except ImportError:
        pass
    try:
        import numba
    except ImportError:
        pass
    tv = torch_versions(torch) if torch else {}
    tc = {}
    jv = jax_versions(jax) if jax else {}
    nv = numba_versions(numba) if numba else {}

    def peers(name, data):
        out = []
        if numexpr and name in NUMEXPR:
            expr = NUMEXPR[name]
            def ne(threads):
                def run():
                    numexpr.set_num_threads(threads)
                    return numexpr.evaluate(expr, local_dict={"x": data[0]})
                return run
            out.append(("numexpr 1 thread", ne(1)))
            out.append((f"numexpr {os.cpu_count()} threads", ne(os.cpu_count())))
        if torch:
            tdata = [torch.from_numpy(d) for d in data]
            fn = tv[name]
            out.append(("torch eager", lambda fn=fn: fn(*tdata)))
            if not args.no_torch_compile:
                if name not in tc:
                    tc[name] = torch.compile(fn)
                out.append(("torch.compile", lambda c=tc[name]: c(*tdata)))
        if jax and name in jv:
            jdata = [jax.numpy.asarray(d) for d in data]
            fn = jv[name]
            out.append(("jax.jit", lambda fn=fn: fn(*jdata).block_until_ready()))
        if numba and name in nv:
            fn = nv[name]
            out.append(("numba", lambda fn=fn: fn(*data)))
        return out

    return peers, torch, numba


def print_row(row):
    base = row["numpy"]
    cells = []
    for k, v in row.items():
        if k in ("workload", "size"):
            continue
        if isinstance(v, float):
            cells.append(f"{k} {v:.3f} ms ({base / v:.2f}x)")
        else:
            cells.append(f"{k} {v}")
    print(f"{row['workload']:8} {str(row['size']):>14}  " + " | ".join(cells), flush=True)


COLD_SCRIPT = """
import time, numpy as np
t = time.perf_counter()
import dynamir
f = dynamir.compile(lambda x: np.cos(np.sin(x * 2) + 1) * 3)
x = np.ones(1000, np.float32)
t1 = time.perf_counter(); f(x); t2 = time.perf_counter()
print(t2 - t1, t2 - t)
"""


def run_compile_costs(args, torch, numba):
    out = {}
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, DYNAMIR_CACHE_DIR=cache)
        cold = subprocess.run([sys.executable, "-c", COLD_SCRIPT], env=env, capture_output=True,
                              text=True, check=True).stdout.split()
        warm = subprocess.run([sys.executable, "-c", COLD_SCRIPT], env=env, capture_output=True,
                              text=True, check=True).stdout.split()
    out["dynamir chain first call, cold cache (s)"] = float(cold[0])
    out["dynamir chain first call, new process + warm cache (s)"] = float(warm[0])
    out["dynamir import + first call, warm cache (s)"] = float(warm[1])

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
    from seed_testnet import TestNet  # the main job's model, so both measure the same program

    net = TestNet()
    seed = dynamir.compile(net)
    out["dynamir seed TestNet first call x=+1, cold (s)"] = first_call_s(
        lambda: seed(torch.ones(3)))
    if torch and not args.no_torch_compile:
        torch._dynamo.reset()
        tnet = torch.compile(TestNet())
        out["torch.compile seed TestNet first call x=+1 (s)"] = first_call_s(
            lambda: tnet(torch.ones(3)))
    if numba:
        @numba.njit(fastmath=True)
        def chain(x):
            o = np.empty_like(x)
            for i in range(x.size):
                o[i] = np.cos(np.sin(x[i] * 2) + 1) * 3
            return o
        out["numba chain first call (s)"] = first_call_s(lambda: chain(x))
    return out


def run_overheads(torch):
    out = {}
    tiny = np.ones(3, np.float32)
    f = lambda x: x * 2
    compiled = dynamir.compile(f)
    out["numpy x*2 on 3 elements (us)"] = median_ms(lambda: f(tiny), 2000) * 1e3
    out["dynamir x*2 on 3 elements (us)"] = median_ms(lambda: compiled(tiny), 2000) * 1e3
    if torch:
        t = torch.ones(3)
        out["torch eager x*2 on 3 elements (us)"] = median_ms(lambda: f(t), 2000) * 1e3
    for n in (1, 10, 100):
        params = ", ".join(f"a{i}" for i in range(n))
        namespace = {}
        exec(f"def g(x, {params}):\n    return x * a0\n", namespace)
        g = dynamir.compile(namespace["g"])
        values = list(range(1, n + 1))
        g(tiny, *values)
        out[f"dynamir call with {n + 1} guards (us)"] = median_ms(lambda: g(tiny, *values),
                                                                  1000) * 1e3
    return out


RSS_SCRIPT = """
import sys, numpy as np

def peak_mib():
    # VmHWM belongs to this process's address space; ru_maxrss would carry over the parent's
    # peak across fork and exec.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

sys.path.insert(0, {bench!r})
import run
name, system = sys.argv[1], sys.argv[2]
data = run.inputs_for(name, {size!r}, np.random.default_rng(0))
before = peak_mib()
fn = run.NUMPY[name]
if system == "dynamir":
    import dynamir
    fn = dynamir.compile(fn)
for _ in range(3):
    fn(*data)
after = peak_mib()
print(before / 2**20, after / 2**20)
"""


def run_peak_rss():
    """Peak resident memory of the large workloads, each system in a process of its own (MiB:
    peak after setup and inputs, and peak after three calls)."""
    out = {}
    here = str(pathlib.Path(__file__).resolve().parent)
    for name, size in (("chain", 10**7), ("softmax", (4096, 1024)), ("mlp", (256, 1024))):
        for system in ("numpy", "dynamir"):
            script = RSS_SCRIPT.format(bench=here, size=size)
            done = subprocess.run([sys.executable, "-c", script, name, system],
                                  capture_output=True, text=True)
            if done.returncode:
                out[f"{name} {system}"] = "failed"
                continue
            before, after = map(float, done.stdout.split())
            out[f"{name} {system} peak RSS MiB (after setup -> after 3 calls)"] = (
                f"{before:.0f} -> {after:.0f}")
    return out


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, name in zip(axes, ("chain", "axpb", "sumsq")):
        series = [r for r in rows if r["workload"] == name]
        sizes = [r["size"] for r in series]
        for system in ("dynamir", "torch eager", "torch.compile", "jax.jit", "numba",
                       "numexpr 1 thread"):
            ys = [r["numpy"] / r[system] if isinstance(r.get(system), float) else None
                  for r in series]
            if any(y is not None for y in ys):
                ax.plot(sizes, [y if y is not None else np.nan for y in ys], marker="o",
                        label=system)
        ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("elements (float32)")
        ax.set_ylabel("speedup over numpy")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a minute or two")
    parser.add_argument("--no-torch-compile", action="store_true",
                        help="skip torch.compile (its first compile takes ~20 s per workload)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for Dynamir's graphs and torch (default 1: one core each)")
    args = parser.parse_args()
    dynamir.set_num_threads(args.threads)
    RESULTS.mkdir(exist_ok=True)
    # Compile costs are measured from an empty Dynamir disk cache.
    cache = tempfile.TemporaryDirectory(prefix="dynamir-bench-cache-")
    os.environ["DYNAMIR_CACHE_DIR"] = cache.name
    peers, torch, numba = make_peers(args)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numpy {np.__version__}, Dynamir and torch on {args.threads} threads, "
          "times in ms (speedup over numpy)")
    rows = run_throughput(args, peers)
    compile_costs = run_compile_costs(args, torch, numba)
    overheads = run_overheads(torch)
    rss = run_peak_rss()
    print("\n# first call (trace + compile) per workload, seconds")
    for name, label, seconds in first_calls:
        print(f"{name:10} {label:32} {seconds:.3f}")
    print("\n# compile cost")
    for k, v in compile_costs.items():
        print(f"{k:60} {v:.3f}")
    print("\n# per-call overhead")
    for k, v in overheads.items():
        print(f"{k:60} {v:.1f}")
    print("\n# peak memory")
    for k, v in rss.items():
        print(f"{k:60} {v}")
    result = {"throughput": rows, "first_calls": first_calls, "compile": compile_costs, "overhead": overheads, "rss": rss,
              "numpy": np.__version__, "cores": os.cpu_count(), "threads": args.threads}
    (RESULTS / "results.json").write_text(json.dumps(result, indent=1))
    if plot(rows, RESULTS / "speedup.png"):
        print(f"\nwrote {RESULTS / 'results.json'} and {RESULTS / 'speedup.png'}")


if __name__ == "__main__":
    main()
