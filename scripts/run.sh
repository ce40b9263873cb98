#!/usr/bin/env bash
# Sets up, builds and runs Tessel's main job on its built-in default:
# tune a 256x256x256 matmul on the CPU (evolutionary search + XGBoost cost
# model, 64 programs) and print the best program.
# Arguments replace the default: scripts/run.sh tune-op conv2d --shape 1,64,56,56,64,3,3,1,1
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${TESSEL_BUILD_DIR:-$root/build}
if [ $# -eq 0 ]; then
  set -- tune-op matmul --shape 256,256,256 --trials 64
fi
exec "$build/bin/tessel" "$@"
