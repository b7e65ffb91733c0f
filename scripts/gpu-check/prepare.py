"""Builds the GPU check bundle: each workload traced with numpy, its graph compiled for CUDA
(cubin for sm_90 when ptxas is here, else PTX), reference outputs from numpy for the checked
sizes, the runner, the CUDA runtime and the torch peer script, all in one folder small enough
to carry to the GPU machine (64 MiB).

    python scripts/gpu-check/prepare.py build/gpu-check
"""

import os
import shutil
import sys

import numpy as np

import _dynamir
import dynamir

sys.path.insert(0, os.path.dirname(__file__))
from workloads import WORKLOADS, bytes_moved, output_shape  # noqa: E402


def generated(shape, k):
    """Input k of a workload, exactly as dynamir-gpu-run generates it."""
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.uint64)
    h = (i * np.uint64(2654435761) + np.uint64((k + 1) * 40503)) % np.uint64(4294967296)
    return (h.astype(np.float64) / 4294967296.0 * 2.0 - 1.0).astype(np.float32).reshape(shape)


def numpy_version(fn, name, arity):
    """fn(numpy, *xs) as a function of the arrays alone, named after the workload (kernel
    names follow). Written out, since Dynamir does not trace *args signatures."""
    params = ", ".join(f"x{i}" for i in range(arity))
    scope = {"fn": fn, "np": np}
    exec(f"def {name}({params}):\n    return fn(np, {params})\n", scope)  # our own text
    return scope[name]


def main():
    bundle = sys.argv[1] if len(sys.argv) > 1 else "build/gpu-check"
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(here, "..", "..", "build")
    shutil.rmtree(bundle, ignore_errors=True)
    os.makedirs(bundle)
    manifest = []
    for name, fn, shapes, checked in WORKLOADS:
        numpy_fn = numpy_version(fn, name, len(shapes))
        examples = [np.zeros(s, np.float32) for s in shapes]
        traced = dynamir.trace(numpy_fn, *examples)
        traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
        graphs = [f for f in traced.module.functions if "_graph" in f]
        if len(graphs) != 1:
            sys.exit(f"{name}: expected one graph, got {graphs}")
        library = _dynamir.compile_graph(traced.module._native, graphs[0], "cuda", "sm_90")
        shutil.copy(library, os.path.join(bundle, f"{name}.so"))
        manifest.append(f"workload {name} {name}.so {bytes_moved(name, shapes)}")
        for s in shapes:
            manifest.append("input f32 " + "x".join(map(str, s)))
        expected = "-"
        if checked:
            want = numpy_fn(*[generated(s, k) for k, s in enumerate(shapes)]).astype(np.float32)
            expected = f"{name}.expected.bin"
            want.tofile(os.path.join(bundle, expected))
        manifest.append("output f32 " + "x".join(map(str, output_shape(name, shapes))) +
                        f" {expected}")
        manifest.append("end")
        print(f"{name}: {graphs[0]} -> {name}.so")
    with open(os.path.join(bundle, "manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    shutil.copy(os.path.join(build, "bin", "dynamir-gpu-run"), bundle)
    shutil.copy(os.path.join(build, "python_packages", "libdynamir_cuda.so"), bundle)
    for script in ("run.sh", "torch_peer.py", "workloads.py"):
        shutil.copy(os.path.join(here, script), bundle)
    size = sum(os.path.getsize(os.path.join(bundle, f)) for f in os.listdir(bundle))
    print(f"bundle {bundle}: {len(os.listdir(bundle))} files, {size / 2**20:.1f} MiB")
    if size > 60 * 2**20:
        sys.exit("the bundle is too large to carry (64 MiB)")


if __name__ == "__main__":
    main()
