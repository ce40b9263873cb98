#!/usr/bin/env bash
# Sets up, builds and runs Tessel's main job on its built-in default:
# - with a display (X11 or Wayland): opens the studio on the zoo's ResNet-18,
#   tunes it for four minutes into build/quickstart.db and, as the tuning
#   ends, runs it against LibTorch (the studio's Run view): the figure is on
#   screen about five minutes after the start;
# - without one: tunes the zoo's ResNet-18 from the command line for five
#   minutes (into build/quickstart.db) and runs it against LibTorch.
# Both start warm, from the knowledge base of this machine's class.
# Arguments replace the default: scripts/run.sh tune-op conv2d --shape 1,64,56,56,64,3,3,1,1
# (TESSEL_RUN=cli forces the command-line job even with a display.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${TESSEL_BUILD_DIR:-$root/build}
if [ $# -gt 0 ]; then
  exec "$build/bin/tessel" "$@"
fi
db="$build/quickstart.db"
if [ "${TESSEL_RUN:-}" != cli ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; } &&
  [ -x "$build/bin/tessel-studio" ]; then
  exec "$build/bin/tessel-studio" resnet18 --db "$db" --tune-minutes 4
fi
# A fresh session each time; earlier ones stay in the database (tessel db sessions).
"$build/bin/tessel" tune resnet18 --minutes 5 --db "$db"
exec "$build/bin/tessel" run resnet18 --db "$db"
