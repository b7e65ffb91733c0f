#!/usr/bin/env bash
# Sets up, builds, and runs every test (lit suite, C++ unit tests, docs check) through ctest,
# then prints the totals over all suites.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
rm -rf build/test-results && mkdir -p build/test-results
status=0
(cd build && ctest --output-on-failure) || status=$?
.venv/bin/python scripts/summarize_tests.py build/test-results
exit $status
