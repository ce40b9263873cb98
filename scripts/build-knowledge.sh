#!/usr/bin/env bash
# Rebuilds the knowledge base Tessel ships (resources/knowledge/cpu-avx512.tkb)
# from the committed Zen 4 dataset: the cost model the leave-one-model-out
# table of docs/cost-models.md picks, trained on all six models, then every
# task's fastest programs with their decisions. About six minutes on two cores.
#
# usage: scripts/build-knowledge.sh [OUT.tkb]   (MODEL=xgb, SEED=2, EPOCHS=30 to vary)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
out=${1:-$root/resources/knowledge/cpu-avx512.tkb}
data=$root/tests/data/cost-dataset-cpu-zen4.jsonl.gz
# The set was measured on an AMD EPYC (Zen 4, AVX-512) with two threads.
"$bin/tessel" knowledge build --data "$data" --measured-on "cpu -arch=x86-64-v4 -threads=2" \
  --cost-model "${MODEL:-atformer}" --seed "${SEED:-1}" --epochs "${EPOCHS:-60}" --out "$out"
