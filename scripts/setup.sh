#!/usr/bin/env bash
# Installs what ferry needs (Debian packages, a Python virtualenv) and builds it.
# Idempotent: re-running only installs what is missing and rebuilds what changed.
#   scripts/setup.sh --cli      what the demo needs (README command 1): the build packages
#                               and the `ferry` CLI in build/; no virtualenv, no Python package
#   scripts/setup.sh            the CLI and the Python package: build packages, .venv from
#                               requirements-core.txt, the CLI + the extension in build/
#   scripts/setup.sh --tests    everything the tests and benchmarks need as well: test and
#                               fuzzing packages, .venv from requirements.txt (reference
#                               frameworks), and every target in build/ (README command 2)
#   FERRY_SANITIZE=1 scripts/setup.sh --tests   also a gcc ASan+UBSan build of the CLI in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."

TESTS=0
CLI_ONLY=0
for arg in "$@"; do
  case "$arg" in
    --tests) TESTS=1 ;;
    --cli) CLI_ONLY=1 ;;
    *) echo "setup: unknown argument '$arg' (usage: scripts/setup.sh [--cli | --tests])" >&2; exit 1 ;;
  esac
done
if [ "$TESTS" = 1 ] && [ "$CLI_ONLY" = 1 ]; then
  echo "setup: --cli and --tests exclude each other (the tests need the Python package)" >&2; exit 1
fi

# Debian packages. Keep each block free of parentheses in comments: ../shared/tools/apt-audit
# reads the words between "APT_PACKAGES=(" and the first ")".
# ocl-icd-opencl-dev: libdnnl-dev's CMake config asks for OpenCL, but Debian only recommends it.
# libzip-dev and pkg-config: the PyTorch frontend reads .pt2 zip archives with libzip, found by pkg-config.
APT_PACKAGES=(
  build-essential cmake ninja-build g++ python3-venv python3-dev ccache
  libprotobuf-dev protobuf-compiler libonnx-dev
  libdnnl-dev ocl-icd-opencl-dev nlohmann-json3-dev libcli11-dev pybind11-dev libzip-dev pkg-config
)
# tests, benchmarks and fuzzing: GoogleTest, Google Benchmark, clang with its libFuzzer runtime
TEST_APT_PACKAGES=(
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
)

want=("${APT_PACKAGES[@]}")
[ "$TESTS" = 1 ] && want+=("${TEST_APT_PACKAGES[@]}")
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python: requirements-core.txt (build + demo) or requirements.txt (which includes it, plus the
# reference frameworks and test tools). Every package a script or test imports is pinned there
# (tests/test_requirements.py checks it).
REQS=requirements-core.txt
[ "$TESTS" = 1 ] && REQS=requirements.txt
PY=${PYTHON:-python3}
setup_python() {
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
if ! .venv/bin/python scripts/check_requirements.py "$REQS" 2>/dev/null; then
  echo "setup: installing Python packages into .venv ($REQS)"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r "$REQS"
  # tensorflow-cpu (requirements.txt) lives in the same .venv as the pinned numpy, protobuf and
  # onnx; check that they really import together, so a broken combination fails here.
  if [ "$TESTS" = 1 ]; then
    .venv/bin/python -c "import numpy, onnx, onnxruntime, tensorflow, torch" \
      || { echo "setup: the reference frameworks do not import together in .venv" >&2; exit 1; }
  fi
  .venv/bin/python scripts/check_requirements.py "$REQS"
fi
}
[ "$CLI_ONLY" = 1 ] || setup_python

# --- Python package `ferry` ------------------------------------------------------
# The extension is built by the ninja run below (build/python/ferry/); pip then
# packages it with python/ferry through scikit-build-core, which reuses build/
# (pyproject.toml), so nothing compiles twice. Skipped when the installed copy
# came from the same files (a hash of them, kept in .venv/ferry-package.stamp).
install_python_package() {
  local stamp=.venv/ferry-package.stamp so
  so=$(ls build/python/ferry/_ferry.*.so 2>/dev/null | head -n 1)
  if [ -z "$so" ]; then
    echo "setup: error: build/python/ferry/_ferry.*.so was not built (is pybind11 in .venv? see requirements-core.txt)" >&2
    exit 1
  fi
  local hash
  hash=$( (sha256sum pyproject.toml "$so"; find python/ferry -type f ! -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum) \
          | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && \
     .venv/bin/python -c "import importlib.util as u, sys; sys.exit(u.find_spec('ferry._ferry') is None)" 2>/dev/null; then
    return
  fi
  echo "setup: installing the Python package ferry into .venv"
  rm -f "$stamp"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
  echo "$hash" > "$stamp"
}

# Build: the CLI and the extension; with --tests every target (test binaries, benchmarks).
# A unity build (CMakeLists.txt: FERRY_UNITY_BUILD) compiles ~3x faster from scratch.
targets=(ferry _ferry)
config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_UNITY_BUILD=ON)
if [ "$CLI_ONLY" = 1 ]; then targets=(ferry); config+=(-DFERRY_BUILD_PYTHON=OFF)
else config+=(-DFERRY_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PWD/.venv/bin/python"); fi
if [ "$TESTS" = 1 ]; then targets=(all); config+=(-DFERRY_BUILD_TESTS=ON); fi
echo "setup: building ${targets[*]} (build/) [${SECONDS} s into set-up]"
cmake -S . -B build -G Ninja "${config[@]}" >/dev/null
ninja -C build "${targets[@]}"
[ "$CLI_ONLY" = 1 ] || install_python_package
if [ "${FERRY_SANITIZE:-0}" = "1" ]; then
  echo "setup: building with ASan+UBSan (build-asan/)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRY_SANITIZE=ON -DFERRY_BUILD_PYTHON=OFF >/dev/null
  ninja -C build-asan ferry
fi
echo "setup: done [${SECONDS} s]"
