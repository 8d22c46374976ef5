#!/usr/bin/env bash
# Builds what the record benchmark runs into DIR (default ./bin next to this
# script): the five CUDA recipe applications (each with its own build.sh,
# BUILD_ONLY=1, from a copy of its folder), snapshot_app and launch_app. NVCC and ARCH as
# in the recipes (default nvcc on PATH or /usr/local/cuda/bin/nvcc, sm_90).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/bin}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${ARCH:-sm_90}
export NVCC ARCH BUILD_ONLY=1
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for r in stencil spmv matmul xs multi; do
  cp -r "$here/../../recipes/cuda-$r" "$work/"
  "$work/cuda-$r/build.sh"
  cp "$work/cuda-$r/$r" "$out/$r"
done
"$NVCC" -O2 -arch="$ARCH" -o "$out/snapshot_app" "$here/snapshot_app.cu"
"$NVCC" -O2 -arch="$ARCH" -o "$out/launch_app" "$here/launch_app.cu"
echo "cuda-record: built stencil spmv matmul xs multi snapshot_app launch_app into $out"
