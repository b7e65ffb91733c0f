#!/usr/bin/env bash
# Sets up, builds, and runs every test (lit suite, C++ unit tests, pytest, docs check) through
# ctest, on CI also under sanitizers, then prints the totals over all suites.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
rm -rf build/test-results && mkdir -p build/test-results
status=0
(cd build && ctest --output-on-failure --output-junit test-results/ctest.xml) || status=$?
results=(build/test-results)
# Then the same suites under ASan and UBSan (scripts/test-sanitized.sh): on CI (CI=true) unless
# DYNAMIR_SANITIZE_TESTS=0, elsewhere only with DYNAMIR_SANITIZE_TESTS=1.
if [ "${DYNAMIR_SANITIZE_TESTS:-$([ "${CI:-}" = true ] && echo 1 || echo 0)}" = 1 ]; then
  ./scripts/test-sanitized.sh || status=1
  results+=(sanitized=build-asan/test-results)
fi
.venv/bin/python scripts/summarize_tests.py "${results[@]}"
exit $status
