#!/usr/bin/env bash
# Builds Tessel with a sanitizer and runs tests under it (docs/reliability.md,
# "Sanitizers"):
#   scripts/sanitize.sh address [CTEST-ARGS...]  ASan + UBSan, build-asan
#   scripts/sanitize.sh thread  [CTEST-ARGS...]  TSan, build-tsan
# With a label (-L sanitize: the short subset CI runs; -L threads: the suites
# whose code runs on several threads) only the executables those tests need
# are built. Without CTest arguments: `address` builds and runs everything,
# `thread` the `threads` label. Any report fails the test that caused it.
# TESSEL_SANITIZE_BUILD_TYPE=Debug builds at -O0 (in build-asan-debug or
# build-tsan-debug): about six times faster to compile instrumented, slower to
# run; scripts/test.sh uses it for the short subset.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:?usage: scripts/sanitize.sh address|thread [ctest arguments]}
shift
type=${TESSEL_SANITIZE_BUILD_TYPE:-RelWithDebInfo}
suffix=
[ "$type" = Debug ] && suffix=-debug
case $kind in
  address) build=${TESSEL_BUILD_DIR:-$root/build-asan$suffix} ;;
  thread)
    build=${TESSEL_BUILD_DIR:-$root/build-tsan$suffix}
    # Debian's libgomp is not built with TSan: the barriers of a parallel region
    # are invisible to it, so OpenMP regions (kernels, feature extraction,
    # XGBoost) run on one thread here; Tessel's own threads are what is checked.
    export OMP_NUM_THREADS=1
    [ $# -eq 0 ] && set -- -L threads
    ;;
  *) echo "sanitize: '$kind' is not a sanitizer (address or thread)"; exit 2 ;;
esac
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE="$type" -DTESSEL_SANITIZE="$kind" >/dev/null

# The executables of the selected tests: a test is named after its executable,
# or after it without the test_ prefix (measure_runner runs test_measure_runner).
targets=()
if [ $# -gt 0 ]; then
  known=$(cmake --build "$build" --target help | sed -n 's/^\([A-Za-z0-9_.-]*\):.*/\1/p')
  while read -r name; do
    for t in "$name" "test_$name"; do
      if grep -qx "$t" <<<"$known"; then targets+=("$t"); break; fi
    done
  done < <(cd "$build" && ctest -N "$@" | sed -n 's/^ *Test *#[0-9]*: //p')
fi
cmake --build "$build" -j "$(nproc)" ${targets[@]:+--target "${targets[@]}"}

# halt_on_error makes a UBSan report fail its test; ASan and TSan fail it anyway.
# Qt and LibTorch are not instrumented; a suppressions file names what that
# leaves to hide, each entry with its reason.
supp() { [ -f "$root/scripts/$1" ] && echo ":suppressions=$root/scripts/$1"; true; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-print_suppressions=0$(supp lsan.supp)}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:handle_segv=0$(supp tsan.supp)}
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
