#!/usr/bin/env bash
# Whose labels a cost model learns from, and whose it is scored on: the same
# programs measured on two machines (`tessel dataset remeasure`), a model
# trained on each labelling without the held-out models, each scored on the
# held-out models' programs under both labellings (TenSet's metrics). The
# diagonal is training and scoring on one machine, the rest is transfer.
# Prints a Markdown table.
#
# usage: tests/bench/label_sources_table.sh A.jsonl.gz B.jsonl.gz HELD_OUT [EPOCHS]
# MODELS="xgb mlp" runs a subset (default: xgb mlp gat atformer), SEED=2
# another seed. Both files should hold the same models' programs (the
# training sets then differ only in their labels). Run it on a quiet machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
a=$1
b=$2
held=$3
epochs=${4:-30}
models=${MODELS:-xgb mlp gat atformer}
seed=${SEED:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| model | trained on | scored on | top-1 | top-5 | pairwise accuracy | R² |"
echo "|---|---|---|---|---|---|---|"
for m in $models; do
  for train in "$a" "$b"; do
    file=$work/$m.tcm
    "$bin/tessel" costmodel train --model "$m" --data "$train" --held-out "$held" --epochs "$epochs" \
      --seed "$seed" --out "$file" --quiet >/dev/null
    for test in "$a" "$b"; do
      "$bin/tessel" costmodel eval --model "$file" --data "$train" --test-data "$test" --held-out "$held" --json |
        python3 -c '
import json, sys
j = json.load(sys.stdin)
print("| {} | {} | {} | {top1:.3f} | {top5:.3f} | {pairwise_accuracy:.3f} | {r2:.3f} |".format(
    sys.argv[1], sys.argv[2], sys.argv[3], **j))' "$m" "$(basename "$train")" "$(basename "$test")"
    done
  done
done
