#!/usr/bin/env bash
# Builds the wheel `pip install .` builds, installs it into a throw-away virtual environment, and
# imports and traces from outside the source tree: the packaging path users take, checked by
# ctest.
#
# The wheel is built by the project's .venv (which has the build requirements of pyproject.toml)
# without build isolation, in a fixed folder beside build/: then every compile command matches
# build/'s up to paths relative to the checkout, so ccache serves it (a cold `pip install .`
# compiled everything again: 6.5 of CI's minutes) and a rerun is an incremental Ninja build.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
"$repo/.venv/bin/python" -m pip wheel -q --no-build-isolation --no-deps -w "$venv/wheels" \
  -C build-dir="$repo/build-pip" "$repo"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q "$venv"/wheels/dynamir-*.whl
cd "$venv"
"$venv/bin/python" - <<'PY'
import numpy as np

import dynamir

assert dynamir.__file__.startswith(__import__("sys").prefix), dynamir.__file__
result = dynamir.trace(lambda x: x * 2, np.ones(3, dtype=np.float32))
assert "dyn.mul" in str(result) and result.kernel_count == 0
print("pip install . works:", dynamir.__file__)
PY
