#!/usr/bin/env bash
# `pip install .` into a throw-away virtual environment, then import and trace from outside the
# source tree: the packaging path users take, checked by ctest.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q "$repo"
cd "$venv"
"$venv/bin/python" - <<'PY'
import numpy as np

import dynamir

assert dynamir.__file__.startswith(__import__("sys").prefix), dynamir.__file__
result = dynamir.trace(lambda x: x * 2, np.ones(3, dtype=np.float32))
assert "dyn.mul" in str(result) and result.kernel_count == 0
print("pip install . works:", dynamir.__file__)
PY
