#!/usr/bin/env bash
# A model tuned end to end with two cost models: xgb from nothing (Ansor)
# against a learned model started from a pre-trained file (tessel costmodel
# train), at the same trial budget, and xgb again at twice the budget (does
# the pre-trained model reach xgb's estimate in half the trials?). Same
# seeds, nothing stored. Prints a Markdown table for docs/results.md.
#
# usage: tests/bench/tune_cost_model_table.sh MODEL TRIALS PRETRAINED.tcm [SEEDS]
# e.g.   tests/bench/tune_cost_model_table.sh resnet18 300 at.tcm "1 2"
# The learned model is the one the file names. Run it on a quiet machine:
# the estimates are measured latencies. OUT=DIR keeps each run's JSON.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
model=$1
trials=$2
file=$3
seeds=${4:-1}
learned=$(head -1 "$file" | awk '{print $3}')
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

tune() {  # NAME TRIALS SEED [options...]: prints the estimate in ms and the wall seconds
  local name=$1 n=$2 seed=$3
  shift 3
  local start end
  start=$(date +%s.%N)
  "$bin/tessel" tune "$model" --trials "$n" --seed "$seed" --no-db --json --quiet "$@" >"$out/$name-$n-$seed.json"
  end=$(date +%s.%N)
  python3 -c 'import json,sys; print("%.4f %.0f" % (json.load(open(sys.argv[1]))["estimated_ms"], float(sys.argv[3]) - float(sys.argv[2])))' \
    "$out/$name-$n-$seed.json" "$start" "$end"
}

echo "| seed | xgb, $trials trials | $learned pre-trained, $trials trials | xgb / $learned | xgb, $((2 * trials)) trials | xgb $((2 * trials)) / $learned $trials |"
echo "|---|---|---|---|---|---|"
for s in $seeds; do
  read -r x xs < <(tune xgb "$trials" "$s" --cost-model xgb)
  read -r l ls < <(tune "$learned" "$trials" "$s" --cost-model "$learned" --cost-model-file "$file")
  read -r x2 x2s < <(tune xgb "$((2 * trials))" "$s" --cost-model xgb)
  python3 -c 'import sys
s, x, xs, l, ls, x2, x2s = sys.argv[1:]
print("| %s | %.3f ms (%s s) | %.3f ms (%s s) | %.2f | %.3f ms (%s s) | %.2f |" % (s, float(x), xs, float(l), ls, float(x) / float(l), float(x2), x2s, float(x2) / float(l)))' \
    "$s" "$x" "$xs" "$l" "$ls" "$x2" "$x2s"
done
