#!/usr/bin/env bash
# Builds the libFuzzer target for tensor-opt's input (tools/dyn-fuzz) into build-fuzz/ with
# AddressSanitizer and UndefinedBehaviorSanitizer, and runs it for MINUTES minutes on one core.
# The corpus grows in build-fuzz/fuzz/corpus (kept between runs); crashing inputs land in
# build-fuzz/fuzz/artifacts. Extra arguments go to libFuzzer. See docs/testing.md.
#
#   scripts/fuzz.sh MINUTES [libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:?usage: scripts/fuzz.sh MINUTES [libFuzzer flags...]}
shift
BUILD_DIR=${BUILD_DIR:-build-fuzz}

# tensor-opt from the same build reproduces a crash with the sanitizers' reports.
BUILD_DIR=$BUILD_DIR CMAKE_BUILD_TYPE=Release \
  DYNAMIR_CMAKE_ARGS="-DDYNAMIR_BUILD_TESTS=OFF -DDYNAMIR_BUILD_FUZZERS=ON" \
  ./scripts/build.sh --target dyn-fuzz tensor-opt -j "${FUZZ_BUILD_JOBS:-2}"

# Seeds: every test input, one file per -split-input-file chunk (most are far below -max_len).
fuzz=$(cd "$BUILD_DIR" && pwd)/fuzz
rm -rf "$fuzz/seeds"
mkdir -p "$fuzz/seeds" "$fuzz/corpus" "$fuzz/artifacts"
find test -name '*.mlir' | sort | while read -r file; do
  awk -v out="$fuzz/seeds/$(echo "$file" | tr / _)" \
    '/^\/\/ -----/ { n++; next } { print > (out "." n+0) }' "$file"
done

# The dictionary: tools/dyn-fuzz/dyn.dict and every dyn op name.
{
  cat tools/dyn-fuzz/dyn.dict
  grep -o '^### `dyn\.[a-z_.]*`' docs/generated/DynDialect.md | sed 's/^### `\(.*\)`$/"\1 "/'
} >"$fuzz/dyn.dict"

# One job on one core; leaks are not what this looks for (and MLIR keeps some on purpose).
# libFuzzer writes a job's output to fuzz-0.log in the working directory: build-fuzz/fuzz.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
binary=$(cd "$BUILD_DIR" && pwd)/bin/dyn-fuzz
cd "$fuzz"
exec "$binary" -jobs=1 -max_len=4096 -timeout=10 -rss_limit_mb=4096 -detect_leaks=0 \
  -dict="$fuzz/dyn.dict" -max_total_time=$((minutes * 60)) -artifact_prefix="$fuzz/artifacts/" \
  "$@" corpus seeds
