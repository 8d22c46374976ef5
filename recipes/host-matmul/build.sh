#!/usr/bin/env bash
# Builds host-matmul with r3's host instrumentation (the pass plugin selects
# the kernel by name) and records the first launch of its kernel into
# matmul.h5, the capture its campaign names. Self-contained: uses $R3 (or the
# r3 on PATH) and $CC (default clang-19); OPT sets the optimization level
# (default -O2).
set -euo pipefail
cd "$(dirname "$0")"
R3=${R3:-r3}
CC=${CC:-clang-19}
OPT=${OPT:--O2}
if ! command -v "$R3" >/dev/null; then
  echo "build.sh: r3 not found; put it on PATH or set R3=/path/to/r3" >&2
  exit 1
fi
"$CC" $OPT $("$R3" host-flags --kernel '^matmul$') -c matmul.c -o matmul.o
"$CC" matmul.o -o matmul $("$R3" host-flags --libs)
"$R3" record --kernel '^matmul$' -o matmul.h5 -- ./matmul
