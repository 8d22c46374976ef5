#!/usr/bin/env python3
"""The CUDA campaign benchmark (not a test): per CUDA recipe, on one GPU,

  1. a campaign of --evaluations (default 200) evaluations with the recipe's
     campaign.toml: the best's speedup over the application's own cubin with
     its 95% CI, evaluations per second, the GPU busy fraction of each
     worker, and the share of the speedup by level (the lineage of the best:
     launch, compiler, source);
  2. the cost of an evaluation by level (median wall time of its compile and
     runs in the worker) beside rebuilding the application with nvcc and
     running it (median of --rebuilds, default 3), which is what a user
     without r3 pays for each
     candidate, and the ratio; and the whole campaign's wall time beside
     --evaluations rebuild-and-runs;
  3. with --transports pipes,mpi, the same campaign again with its worker
     on an MPI rank (mpirun -n 2 --bind-to none: rank 0 coordinates, rank 1
     works, on the node's cores as the local worker does) beside the local
     worker over pipes: evaluations per second over the evaluations (first
     start to last end, which leaves out mpirun's start) and the wall time
     of each, so the MPI transport's cost shows on a real GPU.

  run.py --r3 R3 --recipes DIR --out OUTDIR [--budget SECONDS]
         [--evaluations N] [--only NAME,...] [--rebuilds N]
         [--transports pipes[,mpi]] [--mpirun MPIRUN]

Prints Markdown tables and writes them to OUTDIR/cuda-tune.txt, with each
campaign's history (OUTDIR/NAME.db) for later reports."""
import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import tempfile
import time

RECIPES = ["stencil", "spmv", "matmul", "xs", "multi"]


def sh(cmd, cwd=None, env=None, timeout=600):
    t = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p, time.monotonic() - t


def fmt(x, d=3):
    return "-" if x is None else f"{x:.{d}f}"


def rebuild_and_run(d, env, times):
    """What one candidate costs without r3: nvcc rebuild, then the app."""
    walls = []
    binary = next(l.split("./", 1)[1].split()[0]
                  for l in open(os.path.join(d, "build.sh"))
                  if "record" in l and "-- ./" in l)
    for _ in range(times):
        p, tb = sh(["./build.sh"], cwd=d, env=dict(env, BUILD_ONLY="1"))
        if p.returncode:
            raise RuntimeError("build.sh: " + p.stderr[-300:])
        p, tr = sh(["./" + binary], cwd=d)
        walls.append(tb + tr)
    return statistics.median(walls)


def tune(a, d, name, left, launcher=()):
    db = os.path.join(d, "history.db")
    cmd = list(launcher) + [a.r3, "tune", "campaign.toml", "--budget",
                            str(a.evaluations)]
    t = time.monotonic()
    p = subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=max(30, left))
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)  # checkpoint and stop: exit 75
        out, _ = p.communicate(timeout=120)
    wall = time.monotonic() - t
    shutil.copy(db, os.path.join(a.out, name + ".db"))
    with open(os.path.join(a.out, name + ".tune.log"), "w") as f:
        f.write(out)
    return db, wall, p.returncode


def level_costs(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT c.level, e.eval_ms FROM evaluations e JOIN "
                       "candidates c ON c.id = e.candidate_id").fetchall()
    con.close()
    by = {}
    for level, ms in rows:
        key = "source" if level in ("source", "baseline") else (
            "launch" if level == "launch" else "compiler")
        by.setdefault(key, []).append(ms / 1000)
    return {k: statistics.median(v) for k, v in by.items()}


def transport_row(a, d, name, pipes, left):
    """The campaign of d again, its worker on MPI rank 1: a table row of
    both transports. pipes: (evaluations, wall) of the local-worker run."""
    m = d + "-mpi"
    shutil.copytree(d, m, ignore=shutil.ignore_patterns("history.db*"))
    launcher = [a.mpirun, "-n", "2", "--bind-to", "none", "--oversubscribe",
                "--allow-run-as-root"]
    db, wall, rc = tune(a, m, name + "-mpi", left, launcher)
    n, span = evaluation_span(db)
    con = sqlite3.connect(db)
    dev, = con.execute("SELECT device FROM evaluations ORDER BY id DESC "
                       "LIMIT 1").fetchone() or ("-",)
    con.close()
    pn, pspan, pw = pipes
    per_p = pspan / pn if pn and pspan else None
    per_m = span / n if n and span else None
    ratio = (per_m / per_p - 1) * 100 if per_p and per_m else None
    return (f"| {name} | {pn} / {fmt(pspan, 1)} s / {fmt(pw, 1)} s | "
            f"{n} / {fmt(span, 1)} s / {fmt(wall, 1)} s | "
            f"{'-' if ratio is None else f'{ratio:+.1f}%'} | {dev} | exit {rc} |")


def evaluation_span(db):
    """Evaluations in db and the seconds from the first one's start to the
    last one's end."""
    con = sqlite3.connect(db)
    n, t0, t1 = con.execute("SELECT count(*), min(started), max(finished) "
                            "FROM evaluations").fetchone()
    con.close()
    return n, (t1 - t0) if n else None


def bench(a, name, work, rows, costs, left, transports):
    d = os.path.join(work, "cuda-" + name)
    shutil.copytree(os.path.join(a.recipes, "cuda-" + name), d)
    env = dict(os.environ, NVCC=a.nvcc, R3=a.r3)
    p, _ = sh(["./build.sh"], cwd=d, env=env)  # builds and records
    if p.returncode:
        raise RuntimeError("build.sh: " + (p.stderr or p.stdout)[-300:])
    full = rebuild_and_run(d, env, a.rebuilds)
    if "mpi" in a.transports.split(","):
        left /= 2  # the campaign runs twice
    db, wall, rc = tune(a, d, name, left)
    rep = json.loads(sh([a.r3, "report", db, "--format", "json"])[0].stdout)
    n = rep["evaluations"]
    busy = ", ".join(fmt(w["busy_fraction"], 2) for w in rep["workers"])
    for k in rep["kernels"]:
        ci = k.get("speedup_ci") or [None, None]
        lv = k.get("lineage", {}).get("by_level", {})
        share = ", ".join(f"{l} {fmt(v, 2)}x" for l, v in lv.items()) or "-"
        rows.append(f"| {name} | {k['name']} | {n} | {fmt(k.get('speedup'))} | "
                    f"[{fmt(ci[0])}, {fmt(ci[1])}] | {k['verified']} | "
                    f"{fmt(n / wall, 2)} | {busy} | {share} | exit {rc} |")
    lc = level_costs(db)
    cells = [fmt(lc.get(l), 3) + (f" ({full / lc[l]:.0f}x)" if lc.get(l) else "")
             for l in ("launch", "compiler", "source")]
    costs.append(f"| {name} | {fmt(full, 2)} | " + " | ".join(cells) +
                 f" | {fmt(wall, 0)} | {fmt(n * full, 0)} | "
                 f"{fmt(n * full / wall, 1)}x |")
    if "mpi" in a.transports.split(","):
        transports.append(transport_row(
            a, d, name, evaluation_span(db) + (wall,), left))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--r3", required=True)
    ap.add_argument("--recipes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=600)
    ap.add_argument("--evaluations", type=int, default=200)
    ap.add_argument("--only", default=",".join(RECIPES))
    ap.add_argument("--rebuilds", type=int, default=3,
                    help="rebuild-and-runs timed per recipe (their median)")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or
                    "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--transports", default="pipes",
                    help="pipes, or pipes,mpi to run each campaign under "
                    "mpirun too")
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    a = ap.parse_args()
    a.r3, a.recipes = os.path.abspath(a.r3), os.path.abspath(a.recipes)
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    names = [n for n in a.only.split(",") if n]
    rows, costs, transports = [], [], []
    start = time.monotonic()
    work = tempfile.mkdtemp(prefix="r3-tune-bench-")
    for i, name in enumerate(names):
        left = (a.budget - (time.monotonic() - start)) / (len(names) - i)
        if left < 30:
            rows.append(f"| {name} | skipped: budget spent |")
            continue
        try:
            bench(a, name, work, rows, costs, left - 20, transports)
        except Exception as e:  # one recipe's failure must not end the run
            rows.append(f"| {name} | error: {str(e)[:300]} |")
    out = [f"## Campaigns of {a.evaluations} evaluations on the recipes (baseline: the application's cubin)", "",
           "| recipe | kernel | evaluations | best speedup | 95% CI | verified | evaluations/s | GPU busy (per worker) | speedup by level | r3 tune |",
           "|---|---|---|---|---|---|---|---|---|---|"] + rows + ["",
           "## One evaluation by level (median s, ratio to rebuild + run) and the whole campaign", "",
           "| recipe | rebuild + run s | launch | compiler | source | campaign wall s | rebuild + run x evaluations s | ratio |",
           "|---|---|---|---|---|---|---|---|"] + costs
    if transports:
        out += ["", "## The same campaign with its worker on an MPI rank", "",
                "| recipe | pipes: evaluations / their span / wall | MPI: evaluations / their span / wall | MPI span per evaluation vs pipes | MPI worker's device | mpirun |",
                "|---|---|---|---|---|---|"] + transports
    out += ["", f"total {time.monotonic() - start:.0f} s"]
    text = "\n".join(out)
    print(text)
    with open(os.path.join(a.out, "cuda-tune.txt"), "w") as f:
        f.write(text + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
