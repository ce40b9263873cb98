#!/usr/bin/env bash
# Transfer between two targets (issue #15): a cost model pre-trained on the
# first target's dataset, then fine-tuned on a few hundred programs of the
# second, against the same model trained from scratch on those programs
# only, and xgb on them. Every row is scored on the second target's held-out
# model(s), with TenSet's metrics. Prints a Markdown table.
#
# usage: tests/bench/transfer_table.sh FIRST.jsonl.gz SECOND.jsonl.gz HELD_OUT [EPOCHS] [FINE_EPOCHS]
# The held-out models are left out of the pre-training too. MODELS="mlp"
# runs a subset (default: mlp gat atformer); KEEP=DIR keeps the pre-trained
# models there and reuses them on the next run (to try other fine-tuning
# epochs without pre-training again). SEED=S seeds the fine-tuning, the
# from-scratch training and xgb (default 1; the pre-training keeps seed 1,
# so KEEP reuses it across seeds). Run it on a quiet machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
first=$1
second=$2
held=$3
epochs=${4:-30}
fine=${5:-30}
models=${MODELS:-mlp gat atformer}
seed=${SEED:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keep=${KEEP:-$work}
mkdir -p "$keep"
row() {  # row LABEL TRAIN_SECONDS EVAL-ARGS... (TRAIN_SECONDS "": eval trains and times it)
  local label=$1 seconds=$2
  shift 2
  "$bin/tessel" costmodel eval "$@" --data "$second" --held-out "$held" --seed "$seed" --json |
    python3 -c '
import json, sys
j = json.load(sys.stdin)
s = float(sys.argv[2]) if sys.argv[2] else j["train_seconds"]
print("| " + sys.argv[1] + " | {top1:.3f} | {top5:.3f} | {pairwise_accuracy:.3f} | {r2:.3f} | ".format(**j) + "%.1f |" % s)' "$label" "$seconds"
}
train() {  # train MODEL DATA EPOCHS OUT [SEED]: prints the seconds it took
  "$bin/tessel" costmodel train --model "$1" --data "$2" --held-out "$held" --epochs "$3" --out "$4" --seed "${5:-1}" --quiet |
    sed -E 's/.* in ([0-9.]+) s:.*/\1/'
}
echo "| model | top-1 | top-5 | pairwise accuracy | R² | training s on the second target |"
echo "|---|---|---|---|---|---|"
row "random" "" --model random
row "xgb, from scratch" "" --model xgb
for m in $models; do
  pre=$keep/$(basename "$first")-$m-$epochs.pre
  [[ -f $pre ]] || train "$m" "$first" "$epochs" "$pre" >/dev/null
  row "$m, pre-trained on the first target only" 0 --model "$pre"
  seconds=$(train "$pre" "$second" "$fine" "$work/$m.fine" "$seed")
  row "$m, pre-trained + fine-tuned" "$seconds" --model "$work/$m.fine"
  row "$m, from scratch" "" --model "$m" --epochs "$fine"
done
