# -*- Python -*-
# lit configuration for Dynamir's test suite.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DYNAMIR"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dynamir_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.dynamir_tools_dir, config.llvm_tools_dir]
tools = ["tensor-opt"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Frontend tests that use torch need it importable by the project's interpreter.
import subprocess

if subprocess.call([config.python_executable, "-c", "import torch"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("torch")

# Integration tests execute lowered IR with upstream's mlir-runner and its runtime libraries.
config.substitutions.append(
    ("%mlir_runner",
     os.path.join(config.llvm_tools_dir, "mlir-runner")
     + " -e main -entry-point-result=void -shared-libs="
     + os.path.join(config.llvm_tools_dir, "..", "lib", "libmlir_runner_utils.so") + ","
     + os.path.join(config.llvm_tools_dir, "..", "lib", "libmlir_c_runner_utils.so")))
