"""Small real models in inference: Dynamir against torch eager and torch.compile (Inductor, CPU).

Each model runs under torch.no_grad() with batch 4, sequence 64 and width 256 unless its name
says otherwise. One run measures every system side by side, in turns (medians of rounds of 5
calls after a warm-up), the first call of each compiler (trace + compile, Dynamir from an empty
disk cache), the graph breaks each hit (Dynamir's counters; Dynamo's from
torch._dynamo.utils.counters), and the largest difference from torch eager.

    .venv/bin/python bench/models.py                   # every model, on every core
    .venv/bin/python bench/models.py --threads 1 --only mlp block
    .venv/bin/python bench/models.py --no-torch-compile
"""

import argparse
import os
import tempfile
import time

import torch
import torch._dynamo

import dynamir
from model_zoo import models, set_torch_threads  # bench/model_zoo.py, beside this script
from run import interleaved_ms  # bench/run.py, beside this script


def max_error(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    return max(float((g - w).abs().max()) for g, w in zip(got, want))


def timed_first_call(fn, args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=dynamir.get_num_threads(),
                        help="torch's intra-op threads and Dynamir's (default: every core)")
    parser.add_argument("--reps", type=int, default=20, help="rounds of 5 calls per system")
    parser.add_argument("--only", nargs="*", help="model names (prefixes)")
    parser.add_argument("--no-torch-compile", action="store_true",
                        help="skip torch.compile (its first compile takes 10-60 s per model)")
    args = parser.parse_args()
    os.environ["DYNAMIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="dynamir-models-cache-")
    torch.manual_seed(0)
    set_torch_threads(args.threads)
    dynamir.set_num_threads(args.threads)
    print(f"# {os.cpu_count()} cores, torch {torch.__version__} and Dynamir with {args.threads} "
          "threads; "
          "times in ms (first calls in s); breaks: Dynamir / Dynamo")
    print("| model | torch eager | torch.compile | Dynamir | vs eager | vs compile "
          "| first call: compile / Dynamir | breaks | max error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (module, inputs, options) in models().items():
        if args.only and not any(name.startswith(p) for p in args.only):
            continue
        module.eval()
        with torch.no_grad():
            want = module(*inputs)
            systems = {"eager": module}
            first_t, dynamo_breaks = None, "-"
            if not args.no_torch_compile:
                torch._dynamo.reset()
                torch._dynamo.utils.counters.clear()
                inductor = torch.compile(module)
                _, first_t = timed_first_call(inductor, inputs)
                dynamo_breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
                systems["compile"] = inductor
            dynamir.reset()
            ours = dynamir.compile(module, **options)
            got, first_d = timed_first_call(ours, inputs)
            error = max_error(got, want)
            counters = dynamir.counters()
            breaks = "eager" if counters["eager_runs"] else counters["graph_breaks_hit"]
            systems["dynamir"] = ours
            times = interleaved_ms(systems, inputs, args.reps)
        eager, compiled_t, ours_t = times["eager"], times.get("compile"), times["dynamir"]
        fmt = lambda v: "-" if v is None else f"{v:.2f}"
        ratio = lambda peer: "-" if peer is None else f"{peer / ours_t:.2f}x"
        print(f"| {name} | {eager:.2f} | {fmt(compiled_t)} | {ours_t:.2f} | {ratio(eager)} "
              f"| {ratio(compiled_t)} | {fmt(first_t)} / {first_d:.2f} | {breaks} / "
              f"{dynamo_breaks} | {error:.1e} |", flush=True)


if __name__ == "__main__":
    main()
