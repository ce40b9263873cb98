#!/usr/bin/env bash
# TenSet's evaluation: every model of a dataset held out in turn, each cost
# model trained on the others (`tessel costmodel eval --held-out M`) and
# scored on it, over several seeds. Prints one Markdown table (top-1, top-5,
# pairwise accuracy: mean over held-out models and seeds, with the range of
# the per-seed means) and one per held-out model. The knowledge base ships
# the model that wins it (scripts/build-knowledge.sh).
#
# usage: tests/bench/leave_one_model_out.sh [DATA] [EPOCHS]
#   DATA: default tests/data/cost-dataset-cpu-zen4.jsonl.gz; EPOCHS default 60
#   MODELS="xgb mlp gat atformer" (default), SEEDS="1 2 3" (default; xgb, which
#   does not depend on the seed, runs once), OUT=DIR keeps every JSON: a run
#   with OUT set goes on where an interrupted one stopped.
# Each learned model's run takes about five minutes on two cores: the whole
# table about four and a half hours.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
data=${1:-$root/tests/data/cost-dataset-cpu-zen4.jsonl.gz}
epochs=${2:-60}
models=${MODELS:-xgb mlp gat atformer}
seeds=${SEEDS:-1 2 3}
out=${OUT:-$(mktemp -d /tmp/lomo.XXXXXX)}
mkdir -p "$out"
held=$(python3 -c '
import gzip, json, sys
seen = []
for line in (gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rt"):
    m = json.loads(line)["model"]
    if m not in seen: seen.append(m)
print(" ".join(seen))' "$data")
for m in $models; do
  for s in $seeds; do
    [ "$m" = xgb ] && [ "$s" != "${seeds%% *}" ] && continue  # xgb: the seed changes nothing
    for h in $held; do
      f="$out/$m-$h-$s.json"
      [ -s "$f" ] && continue
      "$bin/tessel" costmodel eval --model "$m" --data "$data" --held-out "$h" --epochs "$epochs" --seed "$s" \
        --json --quiet >"$f.part"
      mv "$f.part" "$f"
    done
  done
done
python3 - "$out" "$models" "$held" <<'PY'
import glob, json, os, statistics, sys
out, models, held = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
runs = {}
for f in glob.glob(os.path.join(out, "*.json")):
    j = json.load(open(f))
    m, h, s = os.path.basename(f)[:-5].rsplit("-", 2)
    runs.setdefault(m, {}).setdefault(int(s), {})[h] = j
metrics = [("top1", "top-1"), ("top5", "top-5"), ("pairwise_accuracy", "pairwise")]
print(f"Leave one model out over {', '.join(held)}: mean over the held-out models, then over seeds (range of the seeds' means)")
print()
print("| model | seeds | " + " | ".join(n for _, n in metrics) + " |")
print("|---|---|" + "---|" * len(metrics))
for m in models:
    seeds = sorted(s for s, r in runs.get(m, {}).items() if all(h in r for h in held))
    if not seeds: continue
    cells = []
    for key, _ in metrics:
        means = [statistics.mean(runs[m][s][h][key] for h in held) for s in seeds]
        cells.append(f"{statistics.mean(means):.3f}" + (f" ({min(means):.3f}-{max(means):.3f})" if len(means) > 1 else ""))
    print(f"| {m} | {len(seeds)} | " + " | ".join(cells) + " |")
print()
print("Per held-out model, top-1 / pairwise (mean over seeds):")
print()
print("| model | " + " | ".join(held) + " |")
print("|---|" + "---|" * len(held))
for m in models:
    seeds = sorted(s for s, r in runs.get(m, {}).items() if all(h in r for h in held))
    if not seeds: continue
    cells = [f"{statistics.mean(runs[m][s][h]['top1'] for s in seeds):.3f} / "
             f"{statistics.mean(runs[m][s][h]['pairwise_accuracy'] for s in seeds):.3f}" for h in held]
    print(f"| {m} | " + " | ".join(cells) + " |")
PY
