#!/usr/bin/env python3
"""The CUDA replay benchmark (not a test): for each CUDA recipe, on one GPU,
in one run,

  1. fidelity: the in-application duration of the recorded launch (from the
     capture) beside the replayed recorded cubin (median and 95% CI);
  2. the cost of one evaluation split into compile (front end, opt, codegen,
     PTX to cubin), module load, input restores and the timed runs;
  3. evaluations per second for launch-only, pipeline-only and source
     changes, each in one replay server as a campaign runs them;
  4. the slow way: rebuilding the application with nvcc and running it
     whole, beside one replay evaluation, and their ratio;
  5. the replay server's restart cost after a faulting candidate (stencil).

  run.py --r3 R3 --recipes DIR --out OUTDIR [--budget SECONDS]

DIR holds the recipe folders (recipes/ of the source tree); nvcc must be on
PATH or at /usr/local/cuda/bin/nvcc. Prints tables (Markdown) and writes
them to OUTDIR/cuda-replay.txt."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# recipe, binary, kernel, recorded launch, kernel source, blocks, grid rule
RECIPES = [
    ("stencil", "stencil", "jacobi2d", 3, "stencil.cu",
     ["32,8", "8,8", "64,4", "16,8"], "keep-threads"),
    ("spmv", "spmv", "spmv_csr", 3, "spmv_kernel.cu",
     ["128", "512", "64", "1024"], "x=ceil(arg5 / block_x)"),
    ("matmul", "matmul", "matmul_tiled", 2, "matmul_kernel.cu", [], None),
    ("xs", "xs", "xs_lookup", 2, "xs_kernel.cu",
     ["64", "256", "512", "32"], "keep-threads"),
    ("multi", "multi", "react", 2, "multi_kernels.cu",
     ["128", "512", "64", "1024"], "keep-threads"),
]
PIPELINES = ["default<O3>", "default<O2>", "default<O1>",
             "function(sroa,instcombine,gvn,simplifycfg)",
             "function(sroa,early-cse,instcombine,loop-unroll,simplifycfg)"]


def sh(cmd, cwd=None, env=None, timeout=300):
    t = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p, time.monotonic() - t


def replay(r3, cap, args):
    p, wall = sh([r3, "replay", cap, "--format", "json"] + args)
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if not rows:
        raise RuntimeError(f"r3 replay {' '.join(args)}: {p.stderr.strip()[:300]}")
    return rows, wall


def fmt(x, d=3):
    return "-" if x is None else f"{x:.{d}f}"


def per_second(rows):
    ms = [r["eval_ms"] for r in rows]
    return 1000.0 * len(ms) / sum(ms) if ms and sum(ms) > 0 else None


def bench_recipe(a, rec, work, tables):
    name, binary, kernel, launch, src, blocks, rule = rec
    d = os.path.join(work, "cuda-" + name)
    shutil.copytree(os.path.join(a.recipes, "cuda-" + name), d)
    env = dict(os.environ, BUILD_ONLY="1", NVCC=a.nvcc)
    # 4. the slow way: rebuild and run the whole application (median of 3).
    slow = []
    for _ in range(3):
        p, tb = sh(["./build.sh"], cwd=d, env=env)
        if p.returncode:
            raise RuntimeError("build.sh: " + p.stderr[-300:])
        p, tr = sh(["./" + binary], cwd=d)
        slow.append(tb + tr)
    cap = os.path.join(work, name + ".h5")
    p, _ = sh([a.r3, "record", "-k", kernel, "--launch", str(launch), "-o",
               cap, "--", "./" + binary], cwd=d)
    if p.returncode:
        raise RuntimeError("record: " + p.stderr.strip()[-300:])
    cache = os.path.join(work, "cache-" + name)
    source = os.path.join(d, src)
    ksel = ["--kernel", kernel] if name == "multi" else []
    # 1. fidelity
    orig, _ = replay(a.r3, cap, ["--repetitions", "100"])
    o = orig[0]
    inapp = o.get("in_app_ms")
    ratio = o["median_ms"] / inapp if inapp and o.get("median_ms") else None
    tables["fidelity"].append(
        f"| {name} | {fmt(inapp, 4)} | {fmt(o.get('median_ms'), 4)} | "
        f"[{fmt(o['ci95_ms'][0], 4)}, {fmt(o['ci95_ms'][1], 4)}] | "
        f"{fmt(ratio)} | {o['verified']} |")
    # 2./3. pipelines from a cold cache: the first compiles everything, the
    # others reuse the front end (pipeline-only changes).
    pipe_args = ["--cache-dir", cache, "--source", source] + ksel
    for pl in PIPELINES:
        pipe_args += ["--pipeline", pl]
    rows, _ = replay(a.r3, cap, pipe_args + ["--repetitions", "20"])
    first = rows[0]
    timed = sum(first["times_ms"])
    tables["cost"].append(
        f"| {name} | {fmt(first.get('frontend_ms'), 1)} | "
        f"{fmt(first.get('opt_ms'), 1)} | {fmt(first.get('codegen_ms'), 1)} | "
        f"{fmt(first.get('link_ms'), 1)} | {fmt(first.get('load_ms'), 2)} | "
        f"{fmt(first.get('restore_ms'), 2)} | {fmt(timed, 2)} | "
        f"{fmt(first['eval_ms'], 1)} | {sum(r['verified'] for r in rows)}/{len(rows)} |")
    pipeline_rate = per_second(rows[1:])
    # launch-only: the same source and pipeline (cached), other blocks.
    launch_rate = None
    if blocks:
        largs = ["--cache-dir", cache, "--source", source] + ksel
        for b in blocks:
            largs += ["--block", b]
        largs += ["--grid-rule", rule, "--repetitions", "20"]
        lrows, _ = replay(a.r3, cap, largs)
        launch_rate = per_second(lrows[1:])
    # source changes: three sources that differ (a comment), cold front end.
    sargs = ["--cache-dir", cache] + ksel + ["--repetitions", "20"]
    for i in range(3):
        v = os.path.join(d, f"variant{i}_" + src)
        with open(source) as f, open(v, "w") as g:
            g.write(f.read() + f"\n// variant {i}\n")
        sargs += ["--source", v]
    srows, _ = replay(a.r3, cap, sargs)
    source_rate = per_second(srows)
    replay_eval = statistics.median(r["eval_ms"] for r in rows[1:]) / 1000
    full = statistics.median(slow)
    tables["rates"].append(
        f"| {name} | {fmt(launch_rate, 1)} | {fmt(pipeline_rate, 1)} | "
        f"{fmt(source_rate, 2)} | {fmt(full, 2)} | {fmt(replay_eval, 3)} | "
        f"{fmt(full / replay_eval, 0)} |")


def restart_cost(a, work, tables):
    cap = os.path.join(work, "stencil.h5")
    inp = os.path.join(a.root, "tests", "cli", "Inputs", "cuda-variants")
    ok, fault = os.path.join(inp, "stencil-ok.cu"), os.path.join(inp, "stencil-fault.cu")
    rows, _ = replay(a.r3, cap, ["--cache-dir", os.path.join(work, "cache-r"),
                                 "--source", ok, "--source", ok, "--source", fault,
                                 "--source", ok, "--repetitions", "20"])
    tables["restart"].append(
        f"| {fmt(rows[1]['eval_ms'], 1)} | {fmt(rows[2]['eval_ms'], 1)} | "
        f"{rows[2]['failure']} | {fmt(rows[3]['eval_ms'], 1)} | "
        f"{fmt(rows[3]['eval_ms'] - rows[1]['eval_ms'], 1)} | "
        f"{rows[3].get('server_starts')} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--r3", required=True)
    ap.add_argument("--recipes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=480)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    a = ap.parse_args()
    a.r3 = os.path.abspath(a.r3)
    a.recipes = os.path.abspath(a.recipes)
    a.root = os.path.dirname(a.recipes)
    os.makedirs(a.out, exist_ok=True)
    tables = {k: [] for k in ("fidelity", "cost", "rates", "restart")}
    start = time.monotonic()
    work = tempfile.mkdtemp(prefix="r3-replay-bench-")
    for rec in RECIPES:
        if time.monotonic() - start > a.budget:
            tables["fidelity"].append(f"| {rec[0]} | skipped: budget spent |")
            continue
        try:
            bench_recipe(a, rec, work, tables)
        except Exception as e:  # one row's failure must not end the run
            tables["fidelity"].append(f"| {rec[0]} | error: {str(e)[:300]} |")
    try:
        restart_cost(a, work, tables)
    except Exception as e:
        tables["restart"].append(f"| error: {str(e)[:300]} |")
    out = ["## Fidelity: in-application duration vs replay of the recorded cubin (100 repetitions)", "",
           "| recipe | in-app ms | replay median ms | 95% CI ms | replay / in-app | verified |",
           "|---|---|---|---|---|---|"] + tables["fidelity"] + ["",
           "## Cost of one evaluation from a cold cache (default<O3>), ms", "",
           "| recipe | front end | opt | codegen | PTX to cubin | load | restores | timed runs (20) | whole evaluation | verified |",
           "|---|---|---|---|---|---|---|---|---|---|"] + tables["cost"] + ["",
           "## Evaluations per second, and the slow way (rebuild with nvcc + run the application)", "",
           "| recipe | launch-only /s | pipeline-only /s | source changes /s | rebuild + run s | one pipeline evaluation s | ratio |",
           "|---|---|---|---|---|---|---|"] + tables["rates"] + ["",
           "## Replay server restart after a faulting candidate (stencil), ms", "",
           "| ok candidate | faulting candidate | its result | next candidate | restart cost | server starts |",
           "|---|---|---|---|---|---|"] + tables["restart"] + ["",
           f"total {time.monotonic() - start:.0f} s"]
    text = "\n".join(out)
    print(text)
    with open(os.path.join(a.out, "cuda-replay.txt"), "w") as f:
        f.write(text + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
