# -*- Python -*-
# lit configuration for Dynamir's test suite.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DYNAMIR"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "Utils"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dynamir_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# %python imports the extension of this build tree (not the one .venv's .pth names). In a
# sanitized build it loads the sanitizer runtime first, as the instrumented extension needs;
# only Python: the instrumented tools carry their own copy of the runtime.
python_path = os.pathsep.join(
    [config.python_packages_dir, os.path.join(os.path.dirname(__file__), "..", "python-bindings")])
config.environment["PYTHONPATH"] = python_path
python_env = dict(os.environ, PYTHONPATH=python_path)
python = config.python_executable
if config.sanitizer_runtime:
    python_env["LD_PRELOAD"] = config.sanitizer_runtime
    python = f"env LD_PRELOAD={config.sanitizer_runtime} {python}"
config.substitutions.append(("%python", python))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.dynamir_tools_dir, config.llvm_tools_dir]
tools = ["tensor-opt", "dynamir-ptx"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Frontend tests that use torch need it importable by the project's interpreter.
import subprocess

if subprocess.call([config.python_executable, "-c", "import torch"], env=python_env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("torch")

# Integration tests execute lowered IR with upstream's mlir-runner and its runtime libraries.
mlir_runner = (os.path.join(config.llvm_tools_dir, "mlir-runner")
               + " -e main -entry-point-result=void -shared-libs="
               + os.path.join(config.llvm_tools_dir, "..", "lib", "libmlir_runner_utils.so") + ","
               + os.path.join(config.llvm_tools_dir, "..", "lib", "libmlir_c_runner_utils.so"))
config.substitutions.append(("%mlir_runner", mlir_runner))

# Graphs split over threads (dyn-lower-to-llvm threads=N) call the OpenMP runtime, which
# Debian's libomp-22-dev puts beside MLIR's libraries.
libomp = os.path.join(config.llvm_tools_dir, "..", "lib", "libomp.so")
if os.path.exists(libomp):
    config.available_features.add("openmp")
    config.substitutions.append(("%openmp_runner", f"{mlir_runner},{libomp}"))

# ptxas from the CUDA toolkit checks that generated PTX assembles (no GPU needed). The NVVM
# serializer finds libdevice through CUDA_HOME, which lit would otherwise not pass on.
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
if os.path.isdir(cuda_home):
    config.environment["CUDA_HOME"] = cuda_home
if os.path.exists(os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("libdevice")
ptxas = os.path.join(cuda_home, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(
        ("%ptxas_all", f"{config.python_executable} {config.test_source_root}/Utils/ptxas_all.py {ptxas}"))

# A GPU Dynamir can run on (driver and device): GPU execution tests are REQUIRES: cuda-device.
if subprocess.call([config.python_executable, "-c",
                    "import _dynamir, sys; sys.exit(0 if _dynamir.cuda_status()[0] else 1)"],
                   env=python_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("cuda-device")
