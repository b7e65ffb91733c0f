#!/usr/bin/env bash
# Sets up, builds, and runs every test (lit suite, C++ unit tests, pytest, docs check) through
# ctest under CPython 3.11, then the suites that run Python (pytest, with the differential
# tester's slice, and lit) under 3.12 and 3.13; on CI also under sanitizers. Prints the totals
# over all suites. DYNAMIR_TEST_PYTHONS picks the other versions ("3.13", or "" for 3.11 only).
set -euo pipefail
cd "$(dirname "$0")/.."
versions=${DYNAMIR_TEST_PYTHONS-3.12 3.13}
DYNAMIR_EXTRA_PYTHONS=$versions ./scripts/setup.sh
DYNAMIR_EXTRA_PYTHONS=$versions ./scripts/build.sh
status=0
results=()
run_ctest() {  # BUILD_DIR LABEL [ctest args...]
  local build=$1 label=$2
  shift 2
  rm -rf "$build/test-results" && mkdir -p "$build/test-results"
  (cd "$build" && ctest --output-on-failure --output-junit test-results/ctest.xml "$@") || status=1
  results+=("${label:+$label=}$build/test-results")
}
run_ctest build ""
# The other versions run what depends on the interpreter; the C++ unit tests, the docs check
# and the packaging check (a wheel built and installed into a fresh venv, ~3 minutes) are the
# same for every version and run once, above.
for version in $versions; do
  echo "== the Python suites under $(".venv-$version/bin/python" --version)"
  run_ctest "build-py$version" "py$version" -E '^(unittests|pip-install|docs-.*)$'
done
# Then the same suites under ASan and UBSan (scripts/test-sanitized.sh): on CI (CI=true) unless
# DYNAMIR_SANITIZE_TESTS=0, elsewhere only with DYNAMIR_SANITIZE_TESTS=1.
if [ "${DYNAMIR_SANITIZE_TESTS:-$([ "${CI:-}" = true ] && echo 1 || echo 0)}" = 1 ]; then
  ./scripts/test-sanitized.sh || status=1
  results+=(sanitized=build-asan/test-results)
fi
.venv/bin/python scripts/summarize_tests.py "${results[@]}"
exit $status
