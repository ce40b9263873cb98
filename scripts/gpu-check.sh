#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, for a machine that has one: the driver
# answers, a kernel compiled by NVRTC runs on it and computes the right
# numbers, generated CUDA programs are measured by the worker (and a kernel
# that loses its context, hangs or writes out of bounds is an error record),
# and the GPU baselines (cuBLAS, cuDNN) match a CPU reference and give times.
# There a missing driver or NVRTC fails instead of skipping (TESSEL_REQUIRE).
# Builds first if the build folder lacks the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSEL_BUILD_DIR:-$root/build}
[ -x "$build/bin/test_cuda_runner" ] && [ -x "$build/bin/test_cuda_baselines" ] || "$root/scripts/build.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
export TESSEL_REQUIRE=gpu,nvrtc
"$build/bin/test_cuda_driver"
"$build/bin/test_nvrtc"
"$build/bin/test_cuda_runner"
"$build/bin/test_cuda_baselines"
