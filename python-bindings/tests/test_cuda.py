"""The CUDA backend without a GPU: what must hold on every machine (a clear BackendUnavailable,
graph libraries for the GPU that build), and the runtime's plumbing against a fake driver
(build/test/fake-cuda/libcuda.so.1: host memory, kernels logged instead of run), which checks
module loading, symbol resolution, launches and copies end to end. Results on a real GPU are
the lit tests marked REQUIRES: cuda-device and the prepared GPU check (docs/gpu.md)."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import _dynamir
import dynamir

HAS_GPU = _dynamir.cuda_status()[0]
BUILD = pathlib.Path(_dynamir.__file__).resolve().parent.parent
FAKE_DRIVER = BUILD / "test" / "fake-cuda"
REPO = pathlib.Path(__file__).resolve().parents[2]
needs_fake_driver = pytest.mark.skipif(not (FAKE_DRIVER / "libcuda.so.1").exists(),
                                       reason="the fake CUDA driver is built with the tests")


def chain(x):
    return np.cos(np.sin(x * 2) + 1) * 3


@pytest.mark.skipif(HAS_GPU, reason="a GPU is available here")
def test_cuda_backend_unavailable_says_why():
    with pytest.raises(dynamir.BackendUnavailable, match="libcuda.so.1|cuInit|device"):
        dynamir.compile(chain, backend="cuda")
    # The CPU backend is unaffected.
    x = np.ones(8, np.float32)
    assert np.allclose(dynamir.compile(chain)(x), chain(x))


def test_gpu_graph_library_embeds_named_kernels_and_calls_the_runtime():
    traced = dynamir.trace(chain, np.zeros(1 << 16, np.float32))
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
    graph = [f for f in traced.module.functions if "_graph" in f][0]
    library = pathlib.Path(_dynamir.compile_graph(traced.module._native, graph, "cuda"))
    # llvm-nm comes with Debian's LLVM 22 (binutils may not be installed).
    symbols = subprocess.run(["/usr/lib/llvm-22/bin/llvm-nm", "-D", str(library)],
                             capture_output=True, text=True).stdout
    assert "T dynamir_graph_packed" in symbols
    assert "U mgpuLaunchKernel" in symbols and "U mgpuModuleLoad" in symbols
    # Kernels are named after graph, kind and the source line they compute.
    line = chain.__code__.co_firstlineno + 1
    assert f"chain_graph0_map0_line{line}".encode() in library.read_bytes()


def test_cuda_runtime_exports_only_its_c_api():
    """libdynamir_cuda.so is loaded RTLD_GLOBAL and links the C++ runtime statically: when it
    exported that runtime, its __gxx_personality_v0 preempted the process's own, and a C++
    exception rethrown across torch's pybind11 translator (a graph the GPU lowering refuses,
    after test_cuda, test_contractions and test_models in one process) aborted Python."""
    library = pathlib.Path(_dynamir.__file__).parent / "libdynamir_cuda.so"
    listing = subprocess.run(["/usr/lib/llvm-22/bin/llvm-nm", "-D", "--defined-only", str(library)],
                             capture_output=True, text=True, check=True).stdout
    exported = [line.split()[-1] for line in listing.splitlines() if line.strip()]
    assert "mgpuLaunchKernel" in exported and "dynamir_cuda_sgemm" in exported
    assert all(name.startswith(("dynamir_cuda_", "mgpu")) for name in exported), exported


def run_with_fake_driver(code, tmp_path):
    log = tmp_path / "driver.log"
    env = dict(os.environ, LD_LIBRARY_PATH=str(FAKE_DRIVER), FAKE_CUDA_LOG=str(log))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout, log.read_text()


@needs_fake_driver
def test_cuda_backend_plumbing_on_a_fake_driver(tmp_path):
    out, log = run_with_fake_driver(
        "import numpy as np, dynamir\n"
        "def f(x):\n"
        "    return np.exp(x - x.max(1, keepdims=True)).sum(1)\n"
        "r = dynamir.compile(f, backend='cuda')(np.ones((64, 256), np.float32))\n"
        "print(type(r).__name__, r.shape, r.dtype)\n", tmp_path)
    # The fake driver computes nothing: what is checked is that the graph library loaded its
    # kernels through the runtime, launched one block per row, and the result came back.
    assert out.strip() == "ndarray (64,) float32"
    launches = [line.split() for line in log.splitlines() if line.startswith("launch")]
    assert [l[1].split("_")[-2] for l in launches] == ["reduce0", "reduce1"]
    assert all(l[3:6] == ["64", "1", "1"] and l[7:10] == ["256", "1", "1"] for l in launches)
    assert "load cubin" in log or "load ptx" in log


@needs_fake_driver
def test_prepared_gpu_check_runs_its_plumbing_on_a_fake_driver(tmp_path):
    bundle = tmp_path / "bundle"
    subprocess.run([sys.executable, str(REPO / "scripts" / "gpu-check" / "prepare.py"),
                    str(bundle)], check=True, capture_output=True)
    log = tmp_path / "driver.log"
    env = dict(os.environ, LD_LIBRARY_PATH=str(FAKE_DRIVER), FAKE_CUDA_LOG=str(log))
    done = subprocess.run([str(bundle / "dynamir-gpu-run"), str(bundle),
                           str(tmp_path / "results.json")], env=env, capture_output=True,
                          text=True)
    assert "device: Fake GPU" in done.stdout
    # Every model comes whole, the causal mask of the transformer blocks as its own values,
    # batch norm variances positive, and the MoE's flags that the host checks (its indices in
    # bounds, no ties in its topk) as outputs expected true.
    manifest = (bundle / "manifest.txt").read_text()
    for model in ("mlp", "swiglu_width_512", "block", "block_width_768_seq_512_batch_1",
                  "lenet_batch_64", "resblock_32x32x32", "lstm_cell", "moe_top_2", "early_exit"):
        assert f"workload {model} {model}.so" in manifest
    assert manifest.count("output bool scalar moe_top_2.expected") == 9
    assert "input bool 64x64\ndata block.input" in manifest
    assert manifest.count("positive") == 2  # the residual block's two running variances
    # Every workload loaded and launched (outputs differ: the fake driver runs no kernel),
    # except those with matrix products: cuBLAS cannot start on the fake driver, and says so.
    for line in done.stdout.splitlines()[1:]:
        if not line.startswith(("chain", "rowsum", "softmax")):
            assert "first call: matrix product on the GPU: cublas" in line, line
            continue
        for stage in ("dlopen", "loading the kernels", "first call", "timed calls"):
            assert stage not in line, done.stdout
    launches = log.read_text()
    assert "launch chain_64M_graph0_map0_line" in launches
    assert " grid 65536 1 1 block 256 1 1" in launches  # 2^26 floats, 16 bytes per thread
    # The timed loop launches the kernel many times but looks it up in the module once.
    lines = launches.splitlines()
    assert sum(l.startswith("launch chain_64M") for l in lines) > 10
    assert sum(l.startswith("lookup chain_64M") for l in lines) == 1


@pytest.mark.skipif(HAS_GPU, reason="a GPU is available here")
def test_device_arrays_need_a_gpu():
    assert not dynamir.cuda.is_available()
    with pytest.raises(dynamir.BackendUnavailable):
        dynamir.cuda.to_device(np.ones(3, np.float32))


@needs_fake_driver
def test_device_arrays_stay_on_the_device_on_a_fake_driver(tmp_path):
    out, log = run_with_fake_driver(
        "import numpy as np, dynamir\n"
        "x = dynamir.cuda.to_device(np.arange(8, dtype=np.float32).reshape(2, 4))\n"
        "i = x.__cuda_array_interface__\n"
        "print(i['shape'], i['typestr'], i['version'], i['data'][0] != 0)\n"
        "print(np.array_equal(np.asarray(x), np.arange(8).reshape(2, 4)), x.numpy().dtype)\n"
        "f = dynamir.compile(lambda a: (a * 2, a.sum(1)), backend='cuda')\n"
        "print([type(r).__name__ for r in f(x)])\n"
        "print([type(r).__name__ for r in f(np.ones((2, 4), np.float32))])\n", tmp_path)
    assert out.splitlines() == ["(2, 4) <f4 3 True", "True float32",
                                "['DeviceArray', 'DeviceArray']", "['ndarray', 'ndarray']"]


def test_every_differential_program_compiles_for_the_gpu():
    """Each graph of the CPU differential tests lowers to GPU kernels, ptxas included: shape
    ops, integer ops, argmin of a whole array, dot products, branches."""
    from test_backends import CASES

    for fn, args in CASES:
        traced = dynamir.trace(fn, *args)
        traced.module.run_pipeline("dyn-optimize,dyn-split-graphs")
        graphs = [f for f in traced.module.functions if "_graph" in f]
        assert graphs, fn.__name__
        for graph in graphs:
            library = _dynamir.compile_graph(traced.module._native, graph, "cuda")
            assert pathlib.Path(library).exists(), (fn.__name__, graph)
