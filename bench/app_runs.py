"""What the whole-application benchmarks (bench/app-tune, bench/source-level)
share: their NAME=DIR::COMMAND arguments and a logged, timed child run."""
import os
import subprocess
import time


def run(cmd, cwd, log):
    """Runs cmd in cwd with its output in log: (exit status, wall seconds)."""
    t = time.time()
    with open(log, "w") as f:
        rc = subprocess.call(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
    return rc, time.time() - t


def apps(specs):
    """NAME=DIR::COMMAND arguments as (name, absolute folder, argv)."""
    out = []
    for spec in specs:
        name, rest = spec.split("=", 1)
        folder, command = rest.split("::", 1)
        out.append((name, os.path.abspath(folder), command.split()))
    return out
