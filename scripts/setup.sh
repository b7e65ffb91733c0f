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
  libomp-22-dev       # the OpenMP runtime CPU graphs run their loop nests on all cores with
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

# The project's Python environments, all from the same pinned requirements:
#   .venv          DYNAMIR_PYTHON (default python3, 3.11): the one every script and test uses;
#   .venv-3.12 ... one per version in DYNAMIR_EXTRA_PYTHONS (e.g. "3.12 3.13"; default none), for
#                  scripts/test.sh and scripts/test-python-versions.sh. Interpreters come from DYNAMIR_PYTHON312,
#                  DYNAMIR_PYTHON313, ... or else pyenv ($(pyenv root)/versions/3.12.*/bin/python3.12).
# Each venv keeps a stamp of the requirements it was installed from, so a rerun installs nothing.
# torch's wheels are large: each venv is ~4.9 GB, and took 3-4 minutes to install here (download).
install_requirements() {  # VENV_DIR
  local venv=$1 stamp=$1/.requirements.sha want
  want=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d" " -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setup: installing Python requirements into $venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
    # torch comes from PyPI's default index, whose Linux wheel pulls in CUDA's libraries
    # (nvidia-* and triton, ~3.3 of a venv's 4.9 GB) although nothing here uses them.
    "$venv/bin/python" -m pip install -q -r requirements.txt -r requirements-dev.txt
    echo "$want" > "$stamp"
  fi
}

PY=${DYNAMIR_PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv from $($PY --version 2>&1)"
  "$PY" -m venv .venv
fi
venvs=(.venv)

# The interpreter for VERSION (3.12): $DYNAMIR_PYTHON312, else pyenv's newest 3.12.x.
find_python() {  # VERSION
  local version=$1 var py="" root
  var=DYNAMIR_PYTHON${version//./}
  if [ -n "${!var:-}" ]; then
    py=${!var}
  elif command -v pyenv >/dev/null 2>&1 && root=$(pyenv root 2>/dev/null); then
    py=$(ls -d "$root"/versions/"$version".*/bin/python"$version" 2>/dev/null | sort -V | tail -n 1)
  fi
  if [ -z "$py" ] || ! "$py" -c 'import sys; assert "%d.%d" % sys.version_info[:2] == sys.argv[1]' \
      "$version" 2>/dev/null; then
    echo "setup: no Python $version interpreter for .venv-$version${py:+ ($py is not one)}:" \
      "install it with pyenv (pyenv install $version) or set $var to its path" >&2
    return 1
  fi
  echo "$py"
}

for version in ${DYNAMIR_EXTRA_PYTHONS:-}; do
  venv=.venv-$version
  if [ -x "$venv/bin/python" ]; then
    # A venv made from another interpreter than the one asked for is not used silently.
    if ! "$venv/bin/python" -c 'import sys; assert "%d.%d" % sys.version_info[:2] == sys.argv[1]' \
        "$version" 2>/dev/null; then
      echo "setup: $venv is not a Python $version environment: remove it and rerun" >&2
      exit 1
    fi
  else
    py=$(find_python "$version") || exit 1
    echo "setup: creating $venv from $("$py" --version 2>&1) ($py)"
    "$py" -m venv "$venv"
  fi
  venvs+=("$venv")
done

# The venvs install side by side: mostly download and unpacking, it takes about half as long
# as one after the other.
pids=()
for venv in "${venvs[@]}"; do
  install_requirements "$venv" &
  pids+=($!)
done
for pid in "${pids[@]}"; do
  wait "$pid" || { echo "setup: installing the requirements failed" >&2; exit 1; }
done
