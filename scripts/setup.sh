#!/usr/bin/env bash
# Installs the Debian packages Tessel builds against (SPEC "Dependencies").
# redis-tools carries the Redis server binary the fleet's tests start on a
# loopback port; the redis-server package would also start a system daemon.
# Idempotent: asks apt only for what is missing, so it is quick when all is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev libqcustomplot-dev libqcustomplot2.1-qt6
  libgraphviz-dev libsqlite3-dev nlohmann-json3-dev
  libtorch-dev libxgboost-dev libseccomp-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libdnnl-dev libopenblas-dev libzip-dev zlib1g-dev
  xvfb xauth libonnx-testdata gnuplot-nox
  python3 bsdutils python3-torchvision
  clang libclang-rt-14-dev
  libhiredis-dev libssl-dev openssl redis-tools
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
