#!/usr/bin/env bash
# Builds cuda-stencil with nvcc (default static cudart, ARCH code plus PTX)
# and, unless BUILD_ONLY=1, records its fourth time step (launch 3) into
# stencil.h5. Uses $R3 (or the r3 on PATH) and $NVCC (default nvcc on PATH or
# /usr/local/cuda/bin/nvcc); ARCH sets the GPU architecture (default: r3's
# own, else sm_90).
set -euo pipefail
cd "$(dirname "$0")"
R3=${R3:-r3}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# r3's own default: the architecture it was built for (`r3 --version`).
r3_arch=$({ "$R3" --version 2>/dev/null || true; } |
  sed -n 's/^default cuda arch: //p')
ARCH=${ARCH:-${r3_arch:-sm_90}}
"$NVCC" -O2 -arch="$ARCH" -o stencil stencil.cu
if [ "${BUILD_ONLY:-0}" = 1 ]; then
  exit 0
fi
if ! command -v "$R3" >/dev/null; then
  echo "build.sh: r3 not found; put it on PATH or set R3=/path/to/r3" >&2
  exit 1
fi
"$R3" record --kernel jacobi2d --launch 3 -o stencil.h5 -- ./stencil
