#!/usr/bin/env python3
"""Coordinator throughput and scaling (not a test): a CUDA campaign on the
scripted fake device, whose every evaluation takes a fixed service time
(R3_REPLAY_FAKE_DELAY_MS, default 5 ms) and compiles nothing (the recorded
cubin's launch level only), proposed by --strategy (default random, so that
the transport and the history are measured, not the search: what Bayesian
optimization's proposals cost is bench/Coordinator.cpp's measure), run

  - under MPI: mpirun -n R+1 r3 tune (rank 0 coordinates, R worker ranks),
  - over pipes: r3 tune --workers R (one coordinator, R local workers),

for each R of --ranks. Prints results committed per second (over the
campaign's evaluations, from the first evaluation's start to the last one's
end), and efficiency = rate(R) / (R x rate(1)) of each transport.

  run.py --r3 R3 --make-capture TOOL --out OUTDIR [--ranks 1,2,4,8]
         [--evaluations 400] [--delay-ms 5] [--strategy random|bo|...]

Oversubscribed on a small machine every rank, worker and server share the
same cores, so the efficiency measures the machine as much as r3: read it
with the core count beside it."""
import argparse
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time

CAMPAIGN = """database = "{db}"
backend = "cuda"
seed = 1
[[kernel]]
name = "jacobi2d"
capture = "k.h5"
grid_rule = "keep_threads"
[budget]
evaluations = {n}
[compiler]
strategy = "{strategy}"
[launch]
block_x = [{xs}]
block_y = [{ys}]
[evaluation]
warmup = 0
repetitions = 6
min_repetitions = 6
timeout = 10
baseline_interval = 1000
determinism_runs = 0
"""


def rate(db):
    con = sqlite3.connect(db)
    n, t0, t1 = con.execute("SELECT count(*), min(started), max(finished) "
                            "FROM evaluations").fetchone()
    con.close()
    return n / (t1 - t0) if n and t1 > t0 else None


def run(a, work, ranks, mode):
    db = os.path.join(work, "%s-%d.db" % (mode, ranks))
    toml = db[:-3] + ".toml"
    vals = ", ".join(str(v) for v in range(1, 33))
    with open(toml, "w") as f:
        f.write(CAMPAIGN.format(db=db, n=a.evaluations, xs=vals, ys=vals,
                                strategy=a.strategy))
    env = dict(os.environ, R3_REPLAY_FAKE_DEVICE="ok",
               R3_REPLAY_FAKE_DELAY_MS=str(a.delay_ms),
               R3_CACHE_DIR=os.path.join(work, "cache"))
    if mode == "mpi":
        cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-n",
               str(ranks + 1), "-x", "R3_REPLAY_FAKE_DEVICE", "-x",
               "R3_REPLAY_FAKE_DELAY_MS", a.r3, "tune", toml]
    else:
        cmd = [a.r3, "tune", toml, "--workers", str(ranks)]
    t = time.monotonic()
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                       timeout=900)
    wall = time.monotonic() - t
    if p.returncode:
        raise RuntimeError("%s %d: %s" % (mode, ranks, p.stderr[-300:]))
    return rate(db), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--r3", required=True)
    ap.add_argument("--make-capture", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--evaluations", type=int, default=400)
    ap.add_argument("--delay-ms", type=int, default=5)
    ap.add_argument("--strategy", default="random",
                    choices=["random", "grid", "tpe", "bo"])
    a = ap.parse_args()
    a.r3 = os.path.abspath(a.r3)
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="r3-scaling-")
    subprocess.run([a.make_capture, "cuda-kernel", os.path.join(work, "k.h5"),
                    "_Z8jacobi2dPKfPfii", "32,24,1", "16,16,1",
                    "ptr:0x7f0000200000", "ptr:0x7f0000400000", "i32:512",
                    "i32:384"], check=True)
    ranks = [int(r) for r in a.ranks.split(",")]
    rows, base = [], {}
    for r in ranks:
        cells = []
        for mode in ("mpi", "pipes"):
            try:
                rt, wall = run(a, work, r, mode)
            except Exception as e:  # a row's failure must not end the run
                cells.append("error: %s" % str(e)[:120])
                continue
            base.setdefault(mode, rt / r if r == 1 else None)
            eff = rt / (r * base[mode]) if base.get(mode) else None
            cells.append("%.1f/s (eff %s, %.0f s)" %
                         (rt, "%.2f" % eff if eff else "-", wall))
        rows.append("| %d | %s |" % (r, " | ".join(cells)))
    out = ["## Results committed per second, %d ms a candidate, %d evaluations, "
           "%s search, %d cores" % (a.delay_ms, a.evaluations, a.strategy,
                                    os.cpu_count()), "",
           "| worker ranks | MPI (mpirun -n R+1) | pipes (--workers R) |",
           "|---|---|---|"] + rows
    text = "\n".join(out)
    print(text)
    with open(os.path.join(a.out, "mpi-scaling.txt"), "w") as f:
        f.write(text + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
