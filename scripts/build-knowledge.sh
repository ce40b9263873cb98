#!/usr/bin/env bash
# Rebuilds the knowledge bases Tessel ships (resources/knowledge/) from the
# committed datasets, each the same 21,008 programs labelled on one CPU: the
# cost model the leave-one-model-out table of docs/cost-models.md picks,
# trained on all six models, then every task's fastest programs with their
# decisions. About six minutes a base on two cores.
#   cpu-avx512.tkb           AMD EPYC Zen 4 (the class's default: any other AVX-512 CPU)
#   cpu-avx512-amd-zen5.tkb  AMD EPYC Zen 5
#
# usage: scripts/build-knowledge.sh [OUT_FOLDER]   (MODEL=xgb, SEED=2, EPOCHS=30 to vary)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
out=${1:-$root/resources/knowledge}
data=$root/tests/data
# Both sets were measured with two threads.
build() { # DATASET CPU OUT
  "$bin/tessel" knowledge build --data "$data/$1" --measured-on "cpu -arch=x86-64-v4 -threads=2" --cpu "$2" \
    --cost-model "${MODEL:-atformer}" --seed "${SEED:-1}" --epochs "${EPOCHS:-60}" --out "$out/$3"
}
build cost-dataset-cpu-zen4.jsonl.gz amd-zen4 cpu-avx512.tkb
build cost-dataset-cpu-zen5.jsonl.gz amd-zen5 cpu-avx512-amd-zen5.tkb
