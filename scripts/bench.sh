#!/usr/bin/env bash
# Installs the benchmark peers (numexpr, numba, jax), builds Dynamir, and runs the benchmark
# suite (under 10 minutes on 2 cores). Extra arguments go to bench/run.py (--quick,
# --no-torch-compile, --threads N); `--scientific` first runs bench/scientific.py instead.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
.venv/bin/python -m pip install -q -r requirements-bench.txt
./scripts/build.sh >/dev/null
if [ "${1:-}" = --scientific ]; then  # bench/scientific.py: numpy kernels vs numba and jax
  shift
  exec .venv/bin/python bench/scientific.py "$@"
fi
exec .venv/bin/python bench/run.py "$@"
