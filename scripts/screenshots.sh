#!/usr/bin/env bash
# Takes the studio's screenshots of the README and the studio guide again,
# with the commands they show (xvfb-run -a build/bin/tessel-studio ...):
#   studio-resnet18.png      ResNet-18 opened, its graph laid out
#   studio-tuning.png        ResNet-18 tuning, grabbed at 1,400 of 3,000 trials
#   studio-session.png       that session reopened from its database
#   studio-compare.png       that session against a second, warm 4-minute one
#   studio-five-minutes.png  4 minutes of tuning, then the run against LibTorch
#   studio-inspector.png     a program of a tiny_cnn tuning against the task's fastest
# About 25 minutes on two cores (the tunings). Nothing else should run
# meanwhile: the five-minute figure is a measurement.
# Usage: scripts/screenshots.sh [OUT_DIR]   (default: docs/images)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TESSEL_BUILD_DIR:-$root/build}/bin
out=${1:-$root/docs/images}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The default layout and settings, not this user's.
export XDG_CONFIG_HOME="$work/config"

studio() {
  echo "+ tessel-studio $*" >&2
  xvfb-run -a "$bin/tessel-studio" "$@"
}

studio resnet18 --screenshot "$out/studio-resnet18.png"
studio resnet18 --db "$work/r18.db" --tune 3000 --grab-after 1400 --screenshot "$out/studio-tuning.png"
studio --db "$work/r18.db" --reopen 1 --screenshot "$out/studio-session.png"
studio resnet18 --db "$work/r18.db" --tune-minutes 4 --screenshot "$work/second.png"
studio resnet18 --db "$work/r18.db" --compare 1,2 --screenshot "$out/studio-compare.png"
studio resnet18 --db "$work/five.db" --tune-minutes 4 --screenshot "$out/studio-five-minutes.png"
studio tiny_cnn --db "$work/tiny.db" --tune 160 --screenshot "$work/tiny.png"
studio --db "$work/tiny.db" --reopen 1 --inspect 2:2 --screenshot "$out/studio-inspector.png"
echo "screenshots in $out" >&2
