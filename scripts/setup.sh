#!/usr/bin/env bash
# Installs everything Dynamir needs on a fresh Debian 12 machine: the LLVM/MLIR 22 toolchain from
# Debian's packages and the project's Python virtual environment (.venv) from pinned requirements.
# Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  clang-22 lld-22 ninja-build ccache cmake libgtest-dev python3-venv
  libclang-rt-22-dev  # the sanitizer runtimes (scripts/test-sanitized.sh)
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The project's Python environment. DYNAMIR_PYTHON picks the interpreter the venv is made from.
PY=${DYNAMIR_PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv from $($PY --version 2>&1)"
  "$PY" -m venv .venv
fi
stamp=.venv/.requirements.sha
want=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d" " -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python requirements into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  # torch's CPU wheel comes from PyPI's default index; its CUDA libraries are not needed here.
  .venv/bin/python -m pip install -q -r requirements.txt -r requirements-dev.txt
  echo "$want" > "$stamp"
fi
