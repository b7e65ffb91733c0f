#!/bin/sh
# Builds Dynamir and the prepared GPU check bundle (build/gpu-check, < 64 MiB): compiled GPU
# graphs and models, numpy and torch reference outputs, dynamir-gpu-run, libdynamir_cuda.so and
# the torch peer.
# On the GPU machine: build/gpu-check/run.sh <results folder>  (docs/gpu.md).
set -e
cd "$(dirname "$0")/../.."
./scripts/build.sh >/dev/null
.venv/bin/python scripts/gpu-check/prepare.py build/gpu-check
