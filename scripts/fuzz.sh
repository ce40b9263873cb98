#!/usr/bin/env bash
# Coverage-guided fuzzing with clang's libFuzzer, AddressSanitizer and UBSan
# (docs/reliability.md, "Fuzzing"): builds the fuzz targets of tests/fuzz/ in
# build-fuzz (everything instrumented) and runs each for SECONDS on a working
# copy of its seed corpus, two at a time. Findings (crash-*, leak-*, timeout-*,
# oom-*) stay in build-fuzz/fuzz-work/TARGET/, with each target's log.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 60 s, all six targets)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] &&
  targets=(fuzz_steps fuzz_worker_protocol fuzz_database fuzz_numpy fuzz_onnx fuzz_torchscript)
build=${TESSEL_FUZZ_BUILD_DIR:-$root/build-fuzz}
parallel=${TESSEL_FUZZ_PARALLEL:-2}

command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (scripts/setup.sh installs clang)"; exit 1; }
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTESSEL_FUZZ=ON -DTESSEL_BUILD_UI=OFF >/dev/null
# Targets that do not build are reported and the others run: clang 14 cannot
# compile LibTorch 1.13's headers as C++20, which fuzz_onnx (through the model
# loader) and fuzz_torchscript need; the GCC driver still runs those in CTest.
cmake --build "$build" --target "${targets[@]}" -- -k 0 >"$build/fuzz-build.log" 2>&1 || true
built=()
for t in "${targets[@]}"; do
  if [ -x "$build/bin/$t" ]; then built+=("$t"); else echo "$t: not built with clang (see $build/fuzz-build.log)"; fi
done
[ ${#built[@]} -eq 0 ] && exit 1
targets=("${built[@]}")

run_one() {
  local t=$1 work=$build/fuzz-work/$1
  mkdir -p "$work/corpus"
  cd "$work"
  local start=$SECONDS
  # libFuzzer adds what it finds to the first folder; the seeds stay as they are.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/bin/$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 \
    corpus "$root/tests/fuzz/corpus/${t#fuzz_}" >"$work/log" 2>&1 || true
  local execs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || echo '?')
  local found
  found=$(ls "$work" | grep -cE '^(crash|leak|timeout|oom|slow-unit)-' || true)
  echo "$t: $execs executions in $((SECONDS - start)) s, $(ls "$work/corpus" | wc -l) inputs in its corpus, $found findings"
}
export -f run_one
export build root seconds
printf '%s\n' "${targets[@]}" | xargs -P "$parallel" -I{} bash -c 'run_one {}'
