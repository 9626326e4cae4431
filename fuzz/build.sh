#!/usr/bin/env bash
# Builds the ASan+UBSan build with libFuzzer coverage in build-fuzz/ (clang): the fuzz
# targets (fuzz/*_fuzz.cc) and the `ferry` CLI, which the malformed-model corpus
# (tests/bad_inputs) runs on. One instrumented build serves both (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_FUZZ=ON \
  -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_PYTHON=OFF -DFERRY_UNITY_BUILD=ON >/dev/null
ninja -C "$BUILD" ferry ferry_fuzz_targets
