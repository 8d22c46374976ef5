#!/usr/bin/env python3
"""elapsed.py LIMIT COMMAND...: runs COMMAND with its output passed through,
then prints "elapsed: under LIMIT s" when it took less than LIMIT seconds,
else "elapsed: N s, more than LIMIT s". Exits with COMMAND's status."""
import subprocess
import sys
import time

limit = float(sys.argv[1])
start = time.monotonic()
rc = subprocess.call(sys.argv[2:])
took = time.monotonic() - start
sys.stdout.flush()
if took < limit:
    print("elapsed: under %g s" % limit)
else:
    print("elapsed: %.1f s, more than %g s" % (took, limit))
sys.exit(rc)
