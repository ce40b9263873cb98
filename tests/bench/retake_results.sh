#!/usr/bin/env bash
# Takes docs/results.md's figures again, each twice, with the commands that page
# names, into one folder: the machine first (machine.txt), then one file per
# figure and run (NAME.1.txt, NAME.2.txt, ... or .json). Two tiers:
#   quick (about 20 minutes on two cores): executor dispatch, pipeline
#     throughput, cost-model speed, graph layout, plot replot, and the 64-trial
#     kernels against the libraries (dense, depthwise convolution, max-pool);
#   long (hours): the 500-trial kernels (ResNet-18's 3x3 convolutions, matmul
#     1024^3) and the search-efficiency curves. The 3,000-trial model tunings
#     and the warm start have their own scripts (warm_start_curve.sh), named in
#     results.md beside their tables.
# usage: tests/bench/retake_results.sh quick|long|all [OUT]
# Run it on a quiet machine: nothing else compiling or measuring (a run whose
# repeats spread says `disturbed` in its JSON).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
tier=${1:?usage: retake_results.sh quick|long|all [OUT]}
out=${2:-$(mktemp -d /tmp/results.XXXXXX)}
mkdir -p "$out"
case $tier in quick | long | all) ;; *) echo "unknown tier '$tier' (quick, long, all)" >&2 && exit 2 ;; esac

"$root/tests/bench/machine_info.sh" >"$out/machine.txt"
cat "$out/machine.txt" >&2

# Runs "$@" twice, into NAME.1.EXT and NAME.2.EXT (stderr beside, .err).
twice() {
  local name=$1 ext=$2
  shift 2
  for run in 1 2; do
    echo "== $name, run $run: $*" >&2
    "$@" >"$out/$name.$run.$ext" 2>"$out/$name.$run.err"
  done
}

if [ "$tier" = quick ] || [ "$tier" = all ]; then
  twice executor txt "$bin/bench_executor" 200 200
  twice pipeline txt "$bin/bench_pipeline" 256 256 256 64
  twice cost_model_speed txt "$bin/bench_cost_models" conv2d 1,64,56,56,64,3,3,1,1 1024
  twice graph_layout txt env QT_QPA_PLATFORM=offscreen "$bin/bench_graph_layout"
  twice plots_replot txt env QT_QPA_PLATFORM=offscreen "$bin/bench_plots_replot"
  twice dense json "$bin/tessel" tune-op dense --shape 128,512,128 --trials 64 --compare --json --no-db
  twice depthwise json "$bin/tessel" tune-op depthwise_conv2d --shape 1,144,56,56,3,3,1,1 --trials 64 --compare \
    --json --no-db
  twice max_pool json "$bin/tessel" tune-op max_pool2d --shape 1,64,112,112,3,2,1 --trials 64 --compare --json --no-db
fi

if [ "$tier" = long ] || [ "$tier" = all ]; then
  for shape in 1,64,56,56,64,3,3,1,1 1,128,28,28,128,3,3,1,1 1,256,14,14,256,3,3,1,1 1,512,7,7,512,3,3,1,1; do
    twice "conv_${shape//,/_}" json "$bin/tessel" tune-op conv2d --shape "$shape" --trials 500 --compare --json --no-db
  done
  twice matmul_1024 json "$bin/tessel" tune-op matmul --shape 1024,1024,1024 --trials 500 --compare --json --no-db
  TESSEL_BUILD_DIR=${TESSEL_BUILD_DIR:-$root/build} "$root/tests/bench/run_search_benchmarks.sh" >"$out/search.txt" 2>&1
fi
echo "figures in $out" >&2
