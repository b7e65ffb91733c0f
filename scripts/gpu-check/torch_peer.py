"""On the GPU machine: the check's workloads and the models of model_zoo.py in torch eager and
torch.compile (Inductor), on the GPU, timed with CUDA events; the peer figures beside
dynamir-gpu-run's.

    python3 torch_peer.py results.json
"""

import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import WORKLOADS, bytes_moved, model_slug  # noqa: E402


def time_per_call(fn, args, repeats=20):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def time_systems(row, eager, args):
    """Times `eager` and its torch.compile on `args` into `row`, reporting failures."""
    name = row["name"]
    for system, f in (("torch_eager", eager), ("torch_compile", torch.compile(eager))):
        try:
            t = time_per_call(f, args)
            row[system] = {"seconds_per_call": t,
                           "bandwidth_gbs": row["bytes_moved"] / t / 1e9,
                           "percent_of_peak": 100 * row["bytes_moved"] / t / 4.8e12}
            print(f"{name:28s} {system:14s} {t * 1e6:9.1f} us "
                  f"{row[system]['bandwidth_gbs']:7.0f} GB/s "
                  f"{row[system]['percent_of_peak']:5.1f}% of 4.8 TB/s")
        except Exception as failure:  # report, do not stop the check
            row[system] = {"error": repr(failure)}
            print(f"{name:28s} {system:14s} failed: {failure!r}")


def main():
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "workloads": []}
    torch.backends.cuda.matmul.allow_tf32 = False  # f32 products, as Dynamir's
    torch.backends.cudnn.allow_tf32 = False
    for name, fn, shapes, _ in WORKLOADS:
        args = [torch.rand(s, device="cuda", dtype=torch.float32) * 2 - 1 for s in shapes]

        def eager(*xs, fn=fn):
            return fn(torch, *xs)

        row = {"name": name, "bytes_moved": bytes_moved(name, shapes)}
        time_systems(row, eager, args)
        results["workloads"].append(row)
    from model_zoo import models  # the same definitions prepare.py traced

    with torch.no_grad():
        for name, (module, inputs, _) in models().items():
            module = module.eval().cuda()
            args = [x.cuda() for x in inputs]
            want = module(*args)
            outputs = want if isinstance(want, tuple) else (want,)
            moved = 4 * (sum(v.numel() for v in module.state_dict().values()) +
                         sum(o.numel() for o in outputs) + sum(a.numel() for a in args))
            row = {"name": model_slug(name), "bytes_moved": moved}
            time_systems(row, module, args)
            results["workloads"].append(row)
    with open(sys.argv[1], "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
