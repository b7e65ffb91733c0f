#!/usr/bin/env bash
# Configures (once) and builds Dynamir into build/ with Ninja, clang-22, ccache and the
# project's .venv interpreter. Run scripts/setup.sh first (the Makefile does). BUILD_DIR,
# CMAKE_BUILD_TYPE, DYNAMIR_SANITIZE (see scripts/test-sanitized.sh) and DYNAMIR_CMAKE_ARGS
# (more -D options, see scripts/fuzz.sh) choose another build; arguments go to cmake --build.
#
# Other Pythons: DYNAMIR_VENV=.venv-3.12 builds for that venv (made by scripts/setup.sh with
# DYNAMIR_EXTRA_PYTHONS) into build-py3.12/ by default; DYNAMIR_EXTRA_PYTHONS="3.12 3.13" also
# builds build-py3.12/ and build-py3.13/ after the default build (ccache makes them cheap).
set -euo pipefail
cd "$(dirname "$0")/.."
# Paths under the checkout are hashed relative to the build folder, so that build/ and
# build-py3.12/ share the compiled code that does not depend on the interpreter.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
VENV=${DYNAMIR_VENV:-.venv}
case "$VENV" in
  .venv) default_build=build ;;
  .venv-*) default_build=build-py${VENV#.venv-} ;;
  *) echo "build: DYNAMIR_VENV must be .venv or .venv-X.Y, not $VENV" >&2; exit 2 ;;
esac
if [ ! -x "$VENV/bin/python" ]; then
  hint=""
  [ "$VENV" = .venv ] || hint=" with DYNAMIR_EXTRA_PYTHONS=${VENV#.venv-}"
  echo "build: no $VENV/bin/python: run scripts/setup.sh$hint first" >&2
  exit 1
fi
BUILD_DIR=${BUILD_DIR:-$default_build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release} \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DPython3_EXECUTABLE="$PWD/$VENV/bin/python" \
    -DPython_EXECUTABLE="$PWD/$VENV/bin/python" \
    -DDYNAMIR_SANITIZE="${DYNAMIR_SANITIZE:-}" ${DYNAMIR_CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$BUILD_DIR" "$@"

# Make `import dynamir` work in the venv: the pure-Python package from the source tree and the
# _dynamir extension from the build tree. Only for the venv's default build: a sanitized build's
# extension loads only into a Python with the sanitizer runtime preloaded (its ctest tests set
# that up), and the fuzzing build has no extension.
[ "$BUILD_DIR" = "$default_build" ] && [ -z "${DYNAMIR_SANITIZE:-}" ] || exit 0
site=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
printf '%s\n%s\n' "$PWD/python-bindings" "$(cd "$BUILD_DIR" && pwd)/python_packages" > "$site/dynamir-dev.pth"

# The same build for each extra Python, after the default one.
if [ "$VENV" = .venv ]; then
  for version in ${DYNAMIR_EXTRA_PYTHONS:-}; do
    env -u BUILD_DIR DYNAMIR_VENV=".venv-$version" DYNAMIR_EXTRA_PYTHONS= ./scripts/build.sh "$@"
  done
fi
