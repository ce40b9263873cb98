#!/usr/bin/env bash
# Prints what a benchmark's figures were taken on: the time, the commit, the
# CPU (name, family, model, AVX-512 or not) and its cores. The bench scripts
# write it first into their output folder (machine.txt).
root=$(cd "$(dirname "$0")/../.." && pwd)
date -u +%Y-%m-%dT%H:%M:%SZ
git -C "$root" rev-parse --short HEAD
grep -m1 "model name" /proc/cpuinfo
grep -m1 "cpu family" /proc/cpuinfo
grep -m1 "^model\s" /proc/cpuinfo
grep -m1 -o "avx512f" /proc/cpuinfo || echo "no avx512f"
nproc
