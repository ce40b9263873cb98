#!/usr/bin/env bash
# Whole models against both peers: each model tuned (warm, from the shipped
# knowledge base; --cold in TUNE_FLAGS for a cold start) to TRIALS programs,
# then `tessel run MODEL --compare onednn --repeats 30 --json` twice: Tessel,
# LibTorch and the oneDNN executor timed in one process, one after another.
# Prints one markdown table: per model and run, the three medians, Tessel's
# speed over each peer, and whether the run flagged itself disturbed.
# usage: tests/bench/models_against_peers.sh [TRIALS] [OUT] [MODEL...]
#   (default 3000 trials; resnet18 mobilenet_v2 bert_tiny)
# Run it on a quiet machine: nothing else compiling or measuring.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
trials=${1:-3000}
out=${2:-$(mktemp -d /tmp/peers.XXXXXX)}
shift $(($# > 2 ? 2 : $#))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 mobilenet_v2 bert_tiny)
mkdir -p "$out"
"$root/tests/bench/machine_info.sh" >"$out/machine.txt"
cat "$out/machine.txt" >&2

for m in "${models[@]}"; do
  start=$(date +%s)
  # shellcheck disable=SC2086 # TUNE_FLAGS is a list of flags
  "$bin/tessel" tune "$m" --trials "$trials" --db "$out/$m.db" --json ${TUNE_FLAGS:-} >"$out/$m.tune.json" \
    2>"$out/$m.tune.err"
  echo "== $m: tuned $trials trials in $(($(date +%s) - start)) s" >&2
  for run in 1 2; do
    "$bin/tessel" run "$m" --db "$out/$m.db" --repeats 30 --compare onednn --json >"$out/$m.run$run.json" \
      2>"$out/$m.run$run.err"
  done
done

python3 - "$out" "${models[@]}" <<'EOF'
import json, sys
out, models = sys.argv[1], sys.argv[2:]
print("| model | run | Tessel ms | LibTorch ms | oneDNN ms | vs LibTorch | vs oneDNN | correct | disturbed |")
print("|---|---|---|---|---|---|---|---|---|")
for m in models:
    for run in (1, 2):
        j = json.loads(open(f"{out}/{m}.run{run}.json").read().strip().splitlines()[-1])
        onednn = j.get("onednn_ms")
        vs = f"{onednn / j['tessel_ms']:.2f}x" if onednn else "-"
        print(f"| {m} | {run} | {j['tessel_ms']:.3f} | {j['libtorch_ms']:.3f} | "
              f"{onednn if onednn is None else format(onednn, '.3f')} | {j['speedup']:.2f}x | {vs} | "
              f"{j['correct'] and j.get('onednn_correct', False)} | {j['disturbed']} |")
EOF
echo "files: $out" >&2
