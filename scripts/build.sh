#!/usr/bin/env bash
# Configures (once) and builds Dynamir into build/ with Ninja, clang-22, ccache and the
# project's .venv interpreter. Run scripts/setup.sh first (the Makefile does). BUILD_DIR,
# CMAKE_BUILD_TYPE, DYNAMIR_SANITIZE (see scripts/test-sanitized.sh) and DYNAMIR_CMAKE_ARGS
# (more -D options, see scripts/fuzz.sh) choose another build; arguments go to cmake --build.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release} \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DPython3_EXECUTABLE="$PWD/.venv/bin/python" \
    -DPython_EXECUTABLE="$PWD/.venv/bin/python" \
    -DDYNAMIR_SANITIZE="${DYNAMIR_SANITIZE:-}" ${DYNAMIR_CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$BUILD_DIR" "$@"

# Make `import dynamir` work in .venv: the pure-Python package from the source tree and the
# _dynamir extension from the build tree. Only for the default build: a sanitized build's
# extension loads only into a Python with the sanitizer runtime preloaded (its ctest tests set
# that up), and the fuzzing build has no extension.
[ "$BUILD_DIR" = build ] && [ -z "${DYNAMIR_SANITIZE:-}" ] || exit 0
site=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
printf '%s\n%s\n' "$PWD/python-bindings" "$(cd "$BUILD_DIR" && pwd)/python_packages" > "$site/dynamir-dev.pth"
