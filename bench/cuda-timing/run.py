#!/usr/bin/env python3
"""The replay timing benchmark (not a test), on one GPU, in one run:

  1. fidelity: per CUDA recipe, a PyTorch kernel and a CuPy kernel, the
     in-application duration of the recorded launch (CUPTI, as r3 record
     measures it) beside the replayed recorded cubin timed the new way (the
     kernel's CUPTI activity) and the old way (CUDA events around each
     launch), with the ratios to the in-application time;
  2. evaluations per second on the same launch-only candidates with a fixed
     30 repetitions and with adaptive repetitions (at least 6, stop when the
     median's 95% CI is narrower than 1%), and the ratio.

  run.py --r3 R3 --recipes DIR --out OUTDIR [--budget SECONDS]

Prints Markdown tables and writes them to OUTDIR/cuda-timing.txt."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# name, folder or script, kernel regex, launch, launch-only blocks, rule
APPS = [
    ("stencil", "cuda-stencil", "stencil", "jacobi2d", 3,
     ["32,8", "8,8", "64,4", "16,8", "32,4", "16,16"], "keep-threads"),
    ("spmv", "cuda-spmv", "spmv", "spmv_csr", 3,
     ["128", "512", "64", "256", "1024", "32"], "x=ceil(arg5 / block_x)"),
    ("matmul", "cuda-matmul", "matmul", "matmul_tiled", 2, [], None),
    ("xs", "cuda-xs", "xs", "xs_lookup", 2,
     ["64", "256", "512", "32", "128", "1024"], "keep-threads"),
    ("multi", "cuda-multi", "multi", "react", 2,
     ["128", "512", "64", "1024", "256", "32"], "keep-threads"),
    ("torch softmax", None, "torch_softmax.py", "softmax_warp_forward", 2,
     [], None),
    ("cupy diffuse", None, "cupy_diffuse.py", "diffuse", 5,
     ["32,8", "8,8", "64,4", "32,4", "16,8", "32,16"], "keep-threads"),
]


def sh(cmd, cwd=None, env=None, timeout=300):
    t = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p, time.monotonic() - t


def replay(r3, cap, args):
    p, wall = sh([r3, "replay", cap, "--format", "json"] + args)
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if not rows:
        raise RuntimeError("r3 replay %s: %s" % (" ".join(args),
                                                 p.stderr.strip()[-300:]))
    return rows, wall


def fmt(x, d=4):
    return "-" if x is None else f"{x:.{d}f}"


def record(a, app, work):
    name, folder, prog, kernel, launch = app[:5]
    cap = os.path.join(work, name.replace(" ", "-") + ".h5")
    if folder:
        d = os.path.join(work, folder)
        shutil.copytree(os.path.join(a.recipes, folder), d)
        p, _ = sh(["./build.sh"], cwd=d,
                  env=dict(os.environ, BUILD_ONLY="1", NVCC=a.nvcc))
        if p.returncode:
            raise RuntimeError("build.sh: " + p.stderr[-300:])
        cmd = ["./" + prog]
    else:
        d = HERE
        cmd = [sys.executable, os.path.join(HERE, prog)]
    p, _ = sh([a.r3, "record", "-k", kernel, "--launch", str(launch), "-o",
               cap, "--"] + cmd, cwd=d)
    if p.returncode or not os.path.exists(cap):
        raise RuntimeError("record: " + (p.stderr or p.stdout).strip()[-300:])
    return cap


def fidelity(a, app, cap, rows):
    r, _ = replay(a.r3, cap, ["--repetitions", "100", "--min-repetitions",
                              "100", "--warmup", "5"])
    o = r[0]
    inapp = o.get("in_app_median_ms") or o.get("in_app_ms")
    k, e = o.get("median_ms"), o.get("event_median_ms")
    rows.append(f"| {app[0]} | {fmt(inapp)} | {fmt(k)} | {o.get('timer')} | "
                f"{fmt(k / inapp if k and inapp else None, 3)} | {fmt(e)} | "
                f"{fmt(e / inapp if e and inapp else None, 3)} | "
                f"{o['verified']} |")


def rates(a, app, cap, rows):
    blocks, rule = app[5], app[6]
    if not blocks:
        return
    base = []
    for b in blocks:
        base += ["--block", b]
    base += ["--grid-rule", rule, "--warmup", "2"]
    fixed, wf = replay(a.r3, cap, base + ["--repetitions", "30",
                                          "--min-repetitions", "30"])
    adapt, wa = replay(a.r3, cap, base + ["--repetitions", "30",
                                          "--min-repetitions", "6",
                                          "--target-ci", "1"])
    rf = 1000 * len(fixed) / sum(r["eval_ms"] for r in fixed)
    ra = 1000 * len(adapt) / sum(r["eval_ms"] for r in adapt)
    reps = sum(r["repetitions"] for r in adapt) / len(adapt)
    rows.append(f"| {app[0]} | {len(blocks)} | {fmt(rf, 1)} | {fmt(ra, 1)} | "
                f"{fmt(reps, 1)} | {fmt(ra / rf, 2)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--r3", required=True)
    ap.add_argument("--recipes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=300)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or
                    "/usr/local/cuda/bin/nvcc")
    a = ap.parse_args()
    a.r3, a.recipes = os.path.abspath(a.r3), os.path.abspath(a.recipes)
    os.makedirs(a.out, exist_ok=True)
    fid, rate = [], []
    start = time.monotonic()
    work = tempfile.mkdtemp(prefix="r3-timing-bench-")
    for app in APPS:
        if time.monotonic() - start > a.budget:
            fid.append(f"| {app[0]} | skipped: budget spent |")
            continue
        try:
            cap = record(a, app, work)
            fidelity(a, app, cap, fid)
            rates(a, app, cap, rate)
        except Exception as e:  # one row's failure must not end the run
            fid.append(f"| {app[0]} | error: {str(e)[:300]} |")
    out = ["## In-application duration vs the replayed recorded cubin (100 repetitions), ms", "",
           "| kernel | in-app (CUPTI) | replay, kernel time | timer | ratio | replay, events | ratio | verified |",
           "|---|---|---|---|---|---|---|---|"] + fid + ["",
           "## Evaluations per second, fixed 30 repetitions vs adaptive (6 to 30, CI under 1%)", "",
           "| kernel | candidates | fixed /s | adaptive /s | mean repetitions | ratio |",
           "|---|---|---|---|---|---|"] + rate + ["",
           f"total {time.monotonic() - start:.0f} s"]
    text = "\n".join(out)
    print(text)
    with open(os.path.join(a.out, "cuda-timing.txt"), "w") as f:
        f.write(text + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
