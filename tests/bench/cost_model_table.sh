#!/usr/bin/env bash
# The cost models compared on one split of a dataset (TenSet's metrics): each
# model is trained on every model of the set but the held-out ones, then
# scores the held-out ones. Prints a Markdown table for docs/results.md.
#
# usage: tests/bench/cost_model_table.sh DATA.jsonl.gz HELD_OUT[,HELD_OUT] [EPOCHS]
# (MODELS="xgb mlp" runs a subset, SEED=2 another seed, ENSEMBLE=K ensembles
# of K seeds, OUT=DIR keeps each model's JSON, per-task picks included; run it
# on a quiet machine)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
data=$1
held=$2
epochs=${3:-30}
models=${MODELS:-random xgb mlp gat atformer}
seed=${SEED:-1}
ensemble=()
[ "${ENSEMBLE:-1}" -gt 1 ] && ensemble=(--ensemble "$ENSEMBLE")
echo "| model | top-1 | top-5 | pairwise accuracy | R² | predictions/s | training s |"
echo "|---|---|---|---|---|---|---|"
for m in $models; do
  "$bin/tessel" costmodel eval --model "$m" --data "$data" --held-out "$held" --epochs "$epochs" --seed "$seed" "${ensemble[@]}" --json |
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" && tee "$OUT/$m-$seed${ENSEMBLE:+x$ENSEMBLE}.json"; else cat; fi |
    python3 -c '
import json, sys
j = json.load(sys.stdin)
print("| {model} | {top1:.3f} | {top5:.3f} | {pairwise_accuracy:.3f} | {r2:.3f} | {predictions_per_second:,.0f} | {train_seconds:.1f} |".format(**j))'
done
