#!/usr/bin/env bash
# Runs the pytest suite under the other CPythons Dynamir is being ported to, 3.12 and 3.13 by
# default: sets up .venv-X.Y (scripts/setup.sh with DYNAMIR_EXTRA_PYTHONS, from pyenv or
# DYNAMIR_PYTHON3XY), builds build-pyX.Y/ for it (scripts/build.sh with DYNAMIR_VENV), runs
# python-bindings/tests there with that build's extension, as ctest's pytest test does, and
# prints the totals per version. Reports: build-pyX.Y/test-results/pytest.xml.
#
#   scripts/test-python-versions.sh [pytest args...]
#   DYNAMIR_TEST_PYTHONS=3.13 scripts/test-python-versions.sh -k resume
#
# A quick look at one test under the other versions; scripts/test.sh runs pytest and lit under
# all of them. Exit status 1 when a run has a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
versions=${DYNAMIR_TEST_PYTHONS:-3.12 3.13}
DYNAMIR_EXTRA_PYTHONS="$versions" ./scripts/setup.sh
status=0
results=()
for version in $versions; do
  build=build-py$version
  if ! log=$(DYNAMIR_VENV=.venv-$version ./scripts/build.sh 2>&1); then
    echo "$log" >&2
    echo "test-python-versions: the build for Python $version failed" >&2
    exit 1
  fi
  rm -rf "$build/test-results" && mkdir -p "$build/test-results"
  echo "== pytest under $(".venv-$version/bin/python" --version)"
  (cd python-bindings &&
    PYTHONPATH="$PWD/../$build/python_packages:$PWD" "../.venv-$version/bin/python" -m pytest -q \
      tests --junitxml="$PWD/../$build/test-results/pytest.xml" "$@") || status=1
  results+=("$version")
done
for version in "${results[@]}"; do
  .venv/bin/python scripts/summarize_tests.py "build-py$version/test-results" |
    sed -n "s/^Tests:/Python $version:/p"
done
exit $status
