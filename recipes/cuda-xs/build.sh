#!/usr/bin/env bash
# Builds cuda-xs with nvcc: the kernel (xs_kernel.cu) into a cubin for ARCH,
# embedded as a byte array (xs_cubin.h, by the toolkit's bin2c) into a host
# program that uses the driver API only (-cudart none -lcuda). Unless
# BUILD_ONLY=1, records its third batch (launch 2) into xs.h5. Uses $R3 (or
# the r3 on PATH) and $NVCC (default nvcc on PATH or
# /usr/local/cuda/bin/nvcc); ARCH sets the GPU architecture (default: r3's
# own, else sm_90; a cubin runs on that architecture only).
set -euo pipefail
cd "$(dirname "$0")"
R3=${R3:-r3}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# r3's own default: the architecture it was built for (`r3 --version`).
r3_arch=$({ "$R3" --version 2>/dev/null || true; } |
  sed -n 's/^default cuda arch: //p')
ARCH=${ARCH:-${r3_arch:-sm_90}}
BIN2C=${BIN2C:-$(dirname "$NVCC")/bin2c}
"$NVCC" -O2 -arch="$ARCH" -cubin -o xs_kernel.cubin xs_kernel.cu
"$BIN2C" --const --name xs_cubin xs_kernel.cubin > xs_cubin.h
"$NVCC" -O2 -cudart none -o xs xs.cpp -lcuda
if [ "${BUILD_ONLY:-0}" = 1 ]; then
  exit 0
fi
if ! command -v "$R3" >/dev/null; then
  echo "build.sh: r3 not found; put it on PATH or set R3=/path/to/r3" >&2
  exit 1
fi
"$R3" record --kernel xs_lookup --launch 2 -o xs.h5 -- ./xs
