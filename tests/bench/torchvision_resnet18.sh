#!/usr/bin/env bash
# Issue #12's "resnet18 exported from torchvision" row: the model as a user
# brings it (torch.onnx.export of torchvision's resnet18, random weights: the
# machine cannot download pretrained ones), tuned and run as a file.
#
#   tests/bench/torchvision_resnet18.sh [TRIALS]     (default 3000)
#
# Installs Debian's python3-torchvision if it is missing (the tests do not
# need it, so scripts/setup.sh leaves it out). Writes the model, the database
# and the logs under ${OUT:-/tmp/tessel-torchvision}, then runs the tuned model
# twice. Takes about as long as tuning the zoo's resnet18 (half an hour for
# 3000 trials on two cores); run it on a quiet machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
out=${OUT:-/tmp/tessel-torchvision}
trials=${1:-3000}
mkdir -p "$out"

if ! /usr/bin/python3 -c 'import torchvision' 2>/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "installing python3-torchvision" >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-torchvision \
    >"$out/apt.log" 2>&1 || { tail -20 "$out/apt.log" >&2; exit 1; }
fi

model=$out/resnet18_torchvision.onnx
if [ ! -f "$model" ]; then
  # Opset 13 with the TorchScript exporter: what torch 1.13 (Debian 12) writes
  # by default for this model, Gemm head with transB=1 included.
  /usr/bin/python3 - "$model" <<'EOF'
import sys, torch, torchvision
torch.manual_seed(0)
net = torchvision.models.resnet18(weights=None).eval()
torch.onnx.export(net, torch.randn(1, 3, 224, 224), sys.argv[1], opset_version=13,
                  input_names=["input"], output_names=["logits"])
EOF
fi

db=$out/tessel.db
"$bin/tessel" inspect "$model" | head -5
start=$(date +%s)
"$bin/tessel" tune "$model" --trials "$trials" --db "$db" --json >"$out/tune.json" 2>"$out/tune.log" || {
  echo "tune failed (exit $?), see $out/tune.log" >&2
  tail -5 "$out/tune.log" >&2
  exit 1
}
echo "tuning: $trials trials in $(($(date +%s) - start)) s"
for i in 1 2; do
  echo "== run $i"
  "$bin/tessel" run "$model" --db "$db"
done
