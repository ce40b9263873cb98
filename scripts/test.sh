#!/usr/bin/env bash
# Sets up, builds and runs every test (CTest running the Qt Test suites), then,
# when called without CTest arguments, the short sanitizer subset: the label
# `sanitize` under ASan + UBSan, built at -O0 in build-asan-debug
# (scripts/sanitize.sh; TESSEL_TEST_SANITIZE=0 leaves it out).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${TESSEL_BUILD_DIR:-$root/build}
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
(cd "$build" && ctest --output-on-failure -j "$(nproc)" "$@")
if [ $# -eq 0 ] && [ "${TESSEL_TEST_SANITIZE:-1}" != 0 ]; then
  env -u TESSEL_BUILD_DIR TESSEL_SANITIZE_BUILD_TYPE=Debug "$root/scripts/sanitize.sh" address -L sanitize
fi
