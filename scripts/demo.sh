#!/usr/bin/env bash
# The main job: set up, build, and run the seed program (traced into the dyn dialect) through
# canonicalization and guard optimization with tensor-opt.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh --target tensor-opt >/dev/null
echo "== examples/seed.mlir after -canonicalize -dyn-optimize-guards"
./build/bin/tensor-opt examples/seed.mlir -canonicalize -dyn-optimize-guards
