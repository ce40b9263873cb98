#!/usr/bin/env bash
# Issue #3's figures: evolutionary search + xgb against random search and the
# vendor libraries, on matmul 1024 and the conv2d layers of ResNet-18.
# Writes docs/bench/<case>.txt (summary) and .csv (curves), then the plot.
# Takes about an hour on the 2-core build machine; run it on a quiet machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
out=$root/docs/bench
mkdir -p "$out"
trials=${TRIALS:-500}
# CASES="conv_64_56 ..." runs a subset.
cases=${CASES:-matmul_1024 conv_128_28 conv_64_56 conv_256_14 conv_512_7}
run() {  # name op shape random-trials
  [[ " $cases " == *" $1 "* ]] || return 0
  echo "== $1" >&2
  "$bin/bench_tuning" "$2" "$3" "$trials" "$out/$1" "$4" | tee "$out/$1.txt"
}
run matmul_1024 matmul 1024,1024,1024 "$trials"
run conv_128_28 conv2d 1,128,28,28,128,3,3,1,1 "$trials"
run conv_64_56 conv2d 1,64,56,56,64,3,3,1,1 0
run conv_256_14 conv2d 1,256,14,14,256,3,3,1,1 0
run conv_512_7 conv2d 1,512,7,7,512,3,3,1,1 0
if command -v gnuplot >/dev/null; then
  gnuplot "$root/tests/bench/plot_curves.gp"
fi
