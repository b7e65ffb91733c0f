"""Builds the GPU check bundle: each workload traced with numpy, its graph compiled for CUDA
(cubin for sm_90 when ptxas is here, else PTX), reference outputs from numpy for the checked
sizes, the runner, the CUDA runtime and the torch peer script, all in one folder small enough
to carry to the GPU machine (64 MiB). The models of bench/model_zoo.py come too: each traced
from torch into one graph whose inputs (the model's input and its parameters and buffers) the
runner generates, with reference outputs from torch eager on the CPU with those values.

    python scripts/gpu-check/prepare.py build/gpu-check
"""

import copy
import inspect
import os
import re
import shutil
import sys

import numpy as np

import _dynamir
import dynamir

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from workloads import WORKLOADS, bytes_moved, model_slug, output_shape  # noqa: E402


def generated(shape, k, positive=False):
    """Input k of a workload, exactly as dynamir-gpu-run generates it: in [-1, 1), or in
    [0.5, 1.5] for a positive input (a variance)."""
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.uint64)
    h = (i * np.uint64(2654435761) + np.uint64((k + 1) * 40503)) % np.uint64(4294967296)
    x = (h.astype(np.float64) / 4294967296.0 * 2.0 - 1.0).astype(np.float32)
    if positive:
        x = np.abs(x) + np.float32(0.5)
    return x.reshape(shape)


def shape_text(shape):
    return "x".join(map(str, shape)) or "scalar"


def model_workloads(bundle, manifest):
    """The models as workloads; a model that does not compile into one graph of float32 inputs
    is reported and left out."""
    import torch
    from model_zoo import models

    for name, (module, inputs, options) in models().items():
        slug = model_slug(name)
        module.eval()
        with torch.no_grad():
            traced = dynamir.trace(module, *inputs,
                                   capture_control_flow=options.get("capture_control_flow", False))
        if traced.graph_breaks or traced.eager_reason:
            print(f"{slug}: left out (does not compile whole: "
                  f"{traced.eager_reason or traced.graph_breaks[0].reason})")
            continue
        traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
        text = str(traced.module)
        graphs = [f for f in traced.module.functions if "_graph" in f]
        call = re.search(r"(%\w+)(?::(\d+))? = call @" + (graphs[0] if graphs else "-") +
                         r"\(([^)]*)\)", text)
        returned = re.search(r"^\s*return ([^:]*) :", text, re.M)
        if len(graphs) != 1 or not call or not returned:
            print(f"{slug}: left out (not one graph called by the host: {graphs})")
            continue
        # Each graph input is a guarded tensor of the call: the model's input or a parameter.
        sources = dict((arg, src) for src, arg in
                       re.findall(r'dyn\.guard\.tensor_match "([^"]+)", (%arg\d+)', text))
        operands = [o.strip() for o in call.group(3).split(",")]
        if not all(o in sources for o in operands):
            print(f"{slug}: left out (a graph input is not a guarded tensor)")
            continue
        params = list(inspect.signature(module.forward).parameters)
        args = list(inputs)
        replica = copy.deepcopy(module)
        lines, supported = [], True
        for k, operand in enumerate(operands):
            # A guard's source is a Python expression over the frame's locals L, e.g.
            # L['x'] or L['self'].experts[0].fc1.weight.
            source = sources[operand]
            named = re.fullmatch(r"L\['(\w+)'\]", source)
            owner_source, _, leaf = source.rpartition(".")
            if not named and not owner_source.startswith("L['self']"):
                print(f"{slug}: left out (graph input {source} is neither an argument nor "
                      "a parameter or buffer)")
                supported = False
                break
            value = (args[params.index(named.group(1))] if named
                     else eval(source, {}, {"L": {"self": module}}))
            if value.dtype == torch.bool:  # a mask: its own values, carried in a file
                x = value
                data = f"{slug}.input{k}.bin"
                value.numpy().astype(np.uint8).tofile(os.path.join(bundle, data))
                lines += [f"input bool {shape_text(value.shape)}", f"data {data}"]
            elif value.dtype == torch.float32:
                positive = source.endswith("running_var")
                x = torch.from_numpy(generated(tuple(value.shape), k, positive))
                lines.append(f"input f32 {shape_text(value.shape)}")
                if positive:
                    lines.append("positive")
            else:
                print(f"{slug}: left out (input {source} is neither float32 nor bool)")
                supported = False
                break
            if named:
                args[params.index(named.group(1))] = x
            else:
                owner = eval(owner_source, {}, {"L": {"self": replica}})
                if leaf in owner._parameters:
                    owner._parameters[leaf] = torch.nn.Parameter(x, requires_grad=False)
                else:
                    owner._buffers[leaf] = x
        if not supported:
            continue
        with torch.no_grad():
            want = replica(*args)
        want = want if isinstance(want, tuple) else (want,)
        # The host returns the graph's results, perhaps reordered, and checks the others
        # (dyn.check: index bounds, ties in topk), which hold on these inputs: expected files
        # by result, ones for the checked flags.
        count = int(call.group(2) or 1)
        results = [r.strip() for r in returned.group(1).split(",")]
        checked = {int(i or 0) for i in
                   re.findall(r"dyn\.check " + call.group(1) + r"(?:#(\d+))?,", text)}
        types = re.search(re.escape(call.group(0)) + r" : \([^)]*\) -> \(?([^)\n]*)", text)
        types = [t.strip() for t in re.split(r",\s*(?=tensor<)", types.group(1))] if types else []
        by_result = {}
        for r, w in zip(results, want):
            base, _, index = r.partition("#")
            if base != call.group(1):
                break
            by_result[int(index or 0)] = w
        if (len(results) != len(want) or checked & set(by_result) or
                sorted(set(by_result) | checked) != list(range(count)) or
                len(types) != count or any(types[r] != "tensor<i1>" for r in checked)):
            print(f"{slug}: left out (the host does more than return or check the graph's "
                  "results)")
            continue
        try:
            library = _dynamir.compile_graph(traced.module._native, graphs[0], "cuda", "sm_90")
        except RuntimeError as refused:  # e.g. an op the GPU lowering does not take yet
            print(f"{slug}: left out (the GPU lowering refuses it: {refused})")
            continue
        shutil.copy(library, os.path.join(bundle, f"{slug}.so"))
        moved = 4 * (sum(int(np.prod(v.shape)) for v in module.state_dict().values()) +
                     sum(int(np.prod(w.shape)) for w in want) +
                     sum(int(np.prod(a.shape)) for a in inputs))
        manifest.append(f"workload {slug} {slug}.so {moved}")
        manifest.append("tolerance 0.01")
        manifest.extend(lines)
        for r in range(count):
            expected = f"{slug}.expected{r}.bin"
            if r in checked:
                np.ones(1, np.uint8).tofile(os.path.join(bundle, expected))
                manifest.append(f"output bool scalar {expected}")
                continue
            by_result[r].numpy().astype(np.float32).tofile(os.path.join(bundle, expected))
            manifest.append(f"output f32 {shape_text(by_result[r].shape)} {expected}")
        manifest.append("end")
        print(f"{slug}: {graphs[0]} -> {slug}.so")


def numpy_version(fn, name, arity):
    """fn(numpy, *xs) as a function of the arrays alone, named after the workload (kernel
    names follow). Written out, since Dynamir does not trace *args signatures."""
    params = ", ".join(f"x{i}" for i in range(arity))
    scope = {"fn": fn, "np": np}
    exec(f"def {name}({params}):\n    return fn(np, {params})\n", scope)  # our own text
    return scope[name]


def main():
    bundle = sys.argv[1] if len(sys.argv) > 1 else "build/gpu-check"
    build = os.path.join(HERE, "..", "..", "build")
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
    model_workloads(bundle, manifest)
    with open(os.path.join(bundle, "manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    shutil.copy(os.path.join(build, "bin", "dynamir-gpu-run"), bundle)
    shutil.copy(os.path.join(build, "python_packages", "libdynamir_cuda.so"), bundle)
    for script in ("run.sh", "torch_peer.py", "workloads.py"):
        shutil.copy(os.path.join(HERE, script), bundle)
    shutil.copy(os.path.join(HERE, "..", "..", "bench", "model_zoo.py"), bundle)
    size = sum(os.path.getsize(os.path.join(bundle, f)) for f in os.listdir(bundle))
    print(f"bundle {bundle}: {len(os.listdir(bundle))} files, {size / 2**20:.1f} MiB")
    if size > 60 * 2**20:
        sys.exit("the bundle is too large to carry (64 MiB)")


if __name__ == "__main__":
    main()
