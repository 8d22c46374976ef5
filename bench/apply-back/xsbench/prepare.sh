#!/usr/bin/env bash
# XSBench (its CUDA version, from its public repository, copied into this
# folder beside this script): built with its own Makefile (nvcc; CUDA 13's
# Thrust needs -std=c++17, which its Makefile's CFLAGS take) and its
# event-based lookup kernel recorded, for bench/apply-back.
set -euo pipefail
cd "$(dirname "$0")"
R3=${R3:-r3}
grep -q 'std=c++17' Makefile || sed -i 's/^CFLAGS :=/CFLAGS := -std=c++17/' Makefile
make -j8
"$R3" record --max-bytes 8G -k xs_lookup_kernel_baseline -o xs.h5 -- ./XSBench -m event -s small
