#!/usr/bin/env bash
# Builds Dynamir's own code with AddressSanitizer and UndefinedBehaviorSanitizer into build-asan/
# (DYNAMIR_SANITIZE, see the top-level CMakeLists.txt) and runs the lit suite, the unit tests
# and the pytest suite there; reports go to build-asan/test-results/. The ctest tests of that
# build preload the sanitizer runtime into Python and set ASAN_OPTIONS and UBSAN_OPTIONS. Any
# sanitizer report aborts its process, so it fails the suite. scripts/test.sh runs this on CI.
set -euo pipefail
cd "$(dirname "$0")/.."
export DYNAMIR_SANITIZE=${DYNAMIR_SANITIZE:-address,undefined}
BUILD_DIR=build-asan CMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Debug} ./scripts/build.sh
rm -rf build-asan/test-results && mkdir -p build-asan/test-results
# The docs checks and `pip install .` build nothing of their own to sanitize.
cd build-asan
exec ctest --output-on-failure --output-junit test-results/ctest.xml -E '^(docs-|pip-install$)'
