#!/usr/bin/env bash
# Sets up, builds (release + ASan/UBSan) and runs every test: C++ unit tests
# (ctest), the Python suites (pytest), the malformed-model corpus under the
# sanitizers, and a one-minute smoke run of each fuzz target (fuzz/smoke.sh).
# Exit status is non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
FERRY_SANITIZE=1 scripts/setup.sh

echo "== C++ unit tests (ctest)"
ctest --test-dir build --output-on-failure -j2

echo "== Python tests (pytest)"
FERRY_BIN="$PWD/build/ferry" .venv/bin/python -m pytest -q

echo "== malformed-model corpus under ASan+UBSan"
FERRY_BIN="$PWD/build-asan/ferry" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  .venv/bin/python -m pytest -q tests/bad_inputs

echo "== fuzz targets: regressions + ${FUZZ_SECONDS:-60} s each (fuzz/smoke.sh)"
fuzz/smoke.sh
