#!/usr/bin/env bash
# Cold against warm in one run: a model tuned from nothing (--cold) and from
# the knowledge base, each run against LibTorch (`tessel run --json`, LibTorch
# timed in the same process) at every budget. The warm tuning's budget 0 is
# each task's first round of transferred programs alone. One session per
# side, resumed from one budget to the next (each budget's figure is the
# model as the session held it then); cold and warm alternate, so that both
# see the same state of the machine. Every model is run twice (`--repeats`
# REPEATS, default 30, each time): the table gives both medians. Prints a
# Markdown table; OUT=DIR keeps every JSON and database (default: a folder
# under /tmp).
#
# usage: tests/bench/warm_start_curve.sh MODEL [BUDGETS] [TUNE OPTIONS...]
#   BUDGETS: e.g. "0 100 300 1000 3000" (the default)
#   WARM_BUDGETS="0 300" tunes the warm side only to those (default: BUDGETS);
#   COLD_BUDGETS likewise, e.g. "300 3000"
#   e.g. tests/bench/warm_start_curve.sh resnet18 "0 300 3000"
#        tests/bench/warm_start_curve.sh squeezenet.onnx "0 600 3000" --seed 2
# Run it on a quiet machine: nothing else compiling or measuring.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
model=$1
budgets=${2:-0 100 300 1000 3000}
shift $(($# >= 2 ? 2 : 1))
extra=("$@")
out=${OUT:-$(mktemp -d /tmp/warm-start.XXXXXX)}
mkdir -p "$out"
name=$(basename "$model")
name=${name%.*}

# tune SIDE BUDGET: the side's session to BUDGET trials, then its run.
tune() {
  local side=$1 budget=$2 db="$out/$name-$1.db" flags=()
  [ "$side" = cold ] && flags+=(--cold)
  [ -f "$db" ] && flags+=(--resume)
  "$bin/tessel" tune "$model" --trials "$budget" --db "$db" --json --quiet "${flags[@]}" "${extra[@]}" \
    >"$out/$name-$side-$budget.tune.json"
  for k in 1 2; do
    "$bin/tessel" run "$model" --db "$db" --repeats "${REPEATS:-30}" --json >"$out/$name-$side-$budget.run$k.json"
  done
}

warm_budgets=" ${WARM_BUDGETS:-$budgets} "
cold_budgets=" ${COLD_BUDGETS:-$budgets} "
for b in $budgets; do
  [ "$b" -gt 0 ] && [[ "$cold_budgets" == *" $b "* ]] && tune cold "$b"
  [[ "$warm_budgets" == *" $b "* ]] && tune warm "$b"
done

echo "$name: cold and warm tuning run against LibTorch in the same process (tessel run, medians of ${REPEATS:-30}, two runs; files in $out)"
echo
echo "| budget | cold: trials | cold: estimate ms | cold: run ms | cold: speed vs LibTorch | warm: trials | warm: estimate ms | warm: run ms | warm: speed vs LibTorch | warm / cold (runs) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
python3 - "$out" "$name" $budgets <<'PY'
import json, os, sys
out, name, budgets = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(side, b):
    runs = [os.path.join(out, f"{name}-{side}-{b}.run{k}.json") for k in (1, 2)]
    if not all(os.path.exists(r) for r in runs):
        return None
    tune = json.load(open(os.path.join(out, f"{name}-{side}-{b}.tune.json")))
    return tune["trials"], [json.load(open(r)) for r in runs]
def cells(x):
    if x is None:
        return ["-"] * 4
    trials, runs = x
    mark = lambda r: "*" if r.get("disturbed") else ""
    ms = " / ".join(f"{r['tessel_ms']:.2f}{mark(r)}" for r in runs)
    speed = " / ".join(f"{r['libtorch_ms'] / r['tessel_ms']:.2f}x" for r in runs)
    return [str(trials), f"{runs[0]['estimate_ms']:.2f}", ms, speed]
for b in budgets:
    c, w = load("cold", b), load("warm", b)
    ratio = " / ".join(f"{wr['tessel_ms'] / cr['tessel_ms']:.3f}" for cr, wr in zip(c[1], w[1])) if c and w else "-"
    print(f"| {b} | " + " | ".join(cells(c)) + " | " + " | ".join(cells(w)) + f" | {ratio} |")
print()
print("(* : the run flagged itself disturbed)")
# For tests/bench/plot_warm_start.gp: one row per side and budget.
with open(os.path.join(out, f"{name}.csv"), "w") as f:
    f.write("side,budget,trials,estimate_ms,run1_ms,run2_ms,libtorch1_ms,libtorch2_ms\n")
    for side in ("cold", "warm"):
        for b in budgets:
            x = load(side, b)
            if x:
                r = x[1]
                f.write(f"{side},{b},{x[0]},{r[0]['estimate_ms']},{r[0]['tessel_ms']},{r[1]['tessel_ms']},"
                        f"{r[0]['libtorch_ms']},{r[1]['libtorch_ms']}\n")
PY
