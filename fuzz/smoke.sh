#!/usr/bin/env bash
# CI smoke run of ferry's libFuzzer targets (docs/fuzzing.md):
#   1. builds them in build-fuzz/ (fuzz/build.sh: clang, -fsanitize=fuzzer,address,undefined);
#   2. replays the regression corpus fuzz/regressions/<target>/ (every input that
#      once crashed ferry) through each target;
#   3. fuzzes each target for FUZZ_SECONDS (default 60) from the seed corpus
#      (fuzz/make_seeds.py), FUZZ_JOBS targets at a time (default: one per core). Six targets
#      (onnx_load, text_ir, npy, npz, tf_load, pt2_load): about 6 x FUZZ_SECONDS / cores in all,
#      plus the build and the seeds.
# Exit status is non-zero on a build failure, a regression that fails again, or
# a new crash; new crashes are left in build-fuzz/findings/<target>/.
#   FUZZ_SECONDS=600 fuzz/smoke.sh    a longer run
#   FUZZ_TARGETS="npy_fuzz" fuzz/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
PY=${PYTHON:-.venv/bin/python}

echo "fuzz: building the targets ($BUILD)"
FUZZ_BUILD_DIR="$BUILD" fuzz/build.sh

targets=${FUZZ_TARGETS:-$(cd "$BUILD/fuzz" && ls -1 *_fuzz 2>/dev/null | sort)}
[ -n "$targets" ] || { echo "fuzz: no targets built" >&2; exit 1; }

seeds="$BUILD/seeds"
echo "fuzz: writing the seed corpora ($seeds)"
"$PY" fuzz/make_seeds.py "$seeds" >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One target: replay its regressions, then fuzz it; prints what it found, returns non-zero on a failure.
fuzz_one() {
  local t=$1 bin="$BUILD/fuzz/$1" reg="fuzz/regressions/$1"
  if [ -d "$reg" ] && [ -n "$(ls "$reg")" ]; then
    echo "fuzz: $t: replaying $(ls -1 "$reg" | wc -l) regression inputs"
    if ! "$bin" -rss_limit_mb=2048 "$reg"/* >"$BUILD/$t.regressions.log" 2>&1; then
      echo "fuzz: $t: a regression input fails again:" >&2
      tail -40 "$BUILD/$t.regressions.log" >&2
      return 1
    fi
  fi
  local corpus="$BUILD/corpus/$t" findings="$BUILD/findings/$t"
  mkdir -p "$corpus" "$findings"
  local dict=()
  [ -f "$seeds/$t.dict" ] && dict=(-dict="$seeds/$t.dict")
  echo "fuzz: $t: fuzzing for ${FUZZ_SECONDS}s"
  if ! "$bin" "$corpus" "$seeds/$t" "${dict[@]}" -max_total_time="$FUZZ_SECONDS" \
      -max_len=65536 -timeout=25 -rss_limit_mb=2048 -artifact_prefix="$findings/" -print_final_stats=1 \
      >"$BUILD/$t.log" 2>&1; then
    echo "fuzz: $t: found a crash (inputs in $findings/):" >&2
    # The first report in full (its stack names the function), then the summary lines.
    grep -m1 -n -E "runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$BUILD/$t.log" | cut -d: -f1 |
      while read -r first; do sed -n "${first},$((first + 40))p" "$BUILD/$t.log" | grep -E "runtime error|ERROR|^ +#[0-9]+ " | head -30; done >&2
    grep -E "SUMMARY|Test unit written" "$BUILD/$t.log" | head -6 >&2
    local unit
    for unit in "$findings"/*; do [ -f "$unit" ] && echo "fuzz: $t: input (base64): $(head -c 4096 "$unit" | base64 -w0)" >&2; done
    return 1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$BUILD/$t.log" | sed "s/^/fuzz: $t: /" || true
}

# FUZZ_JOBS targets at a time (default: one per core), each single-threaded.
jobs=${FUZZ_JOBS:-$(nproc)}
status=0
running=0
for t in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
