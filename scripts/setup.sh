#!/usr/bin/env bash
# Installs everything ferry needs (Debian packages, a Python virtualenv) and builds it.
# Idempotent: re-running only installs what is missing and rebuilds what changed.
#   scripts/setup.sh            release build in build/
#   FERRY_SANITIZE=1 scripts/setup.sh   also an ASan+UBSan build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build g++ python3-venv python3-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  libdnnl-dev ocl-icd-opencl-dev nlohmann-json3-dev libcli11-dev pybind11-dev
  libgtest-dev libgmock-dev libbenchmark-dev ccache
  # fuzzing (fuzz/, docs/fuzzing.md): clang and its libFuzzer runtime (libclang_rt.fuzzer)
  clang libclang-rt-14-dev
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
if ! .venv/bin/python - <<'PYEOF' 2>/dev/null
import importlib.metadata as m, sys
want = {}
for line in open("requirements.txt"):
    line = line.split("#")[0].strip()
    if "==" in line:
        name, ver = line.split("==")
        want[name.strip()] = ver.strip()
bad = [n for n, v in want.items() if (lambda: m.version(n))() != v]
sys.exit(1 if bad else 0)
PYEOF
then
  echo "setup: installing Python packages into .venv"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements.txt
  # --- TensorFlow frontend ---------------------------------------------------------
  # tensorflow-cpu (requirements.txt) lives in this same .venv: with the pinned numpy,
  # protobuf (pulled in by onnx) and onnx it resolves without changing any of them.
  # Check that they really import together, so a broken combination fails here.
  .venv/bin/python -c "import numpy, onnx, onnxruntime, tensorflow" \
    || { echo "setup: tensorflow-cpu does not import next to numpy/onnx/onnxruntime" >&2; exit 1; }
  # --- end TensorFlow frontend ---
fi

# --- Python package `ferry` (issue 3) ----------------------------------------
# The extension is built by the ninja run below (build/python/ferry/); pip then
# packages it with python/ferry through scikit-build-core, which reuses build/
# (pyproject.toml), so nothing compiles twice. Skipped when the installed copy
# came from the same files (a hash of them, kept in .venv/ferry-package.stamp).
install_python_package() {
  local stamp=.venv/ferry-package.stamp so
  so=$(ls build/python/ferry/_ferry.*.so 2>/dev/null | head -n 1)
  if [ -z "$so" ]; then
    echo "setup: error: build/python/ferry/_ferry.*.so was not built (is pybind11 in .venv? see requirements.txt)" >&2
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
  .venv/bin/python -m pip install -q --no-build-isolation --no-deps .
  echo "$hash" > "$stamp"
}

echo "setup: building (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$PWD/.venv/bin/python" >/dev/null
ninja -C build
install_python_package
if [ "${FERRY_SANITIZE:-0}" = "1" ]; then
  echo "setup: building with ASan+UBSan (build-asan/)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRY_SANITIZE=ON -DFERRY_BUILD_PYTHON=OFF >/dev/null
  ninja -C build-asan ferry
fi
echo "setup: done"
