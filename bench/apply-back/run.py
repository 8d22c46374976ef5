#!/usr/bin/env python3
"""The apply-back benchmark (not a test): what a campaign's result does to the
whole application when r3 run --use puts the tuned kernels into the unmodified
binary. Per CUDA recipe (and per proxy application given with --app), on one
GPU:

  1. build and record (the recipe's build.sh, or the app's prepare.sh), then a
     campaign of --evaluations evaluations (its campaign.toml);
  2. --runs pairs of runs, alternating: the application under r3 run
     --keep-original (the planned kernels matched, counted and timed with
     CUPTI, their own code run) and under r3 run --use (the tuned code), both
     with --time-kernels, so that both arms carry the same injection library;
  3. a table: the campaign's predicted speedup of each kernel (its CI), the
     measured one inside the application (median kernel time a launch, plain
     over tuned), their ratio, and the application's wall time plain and
     tuned (medians) with the end-to-end ratio.

  run.py --r3 R3 --recipes DIR --out OUTDIR [--budget SECONDS]
         [--evaluations N] [--runs N] [--only NAME,...]
         [--app NAME=DIR ...] [--tuned DIR]

--tuned DIR takes recipes already built, recorded and tuned from
DIR/cuda-NAME (a folder with its history.db, as the run-cuda-recipes test
leaves them) instead of preparing them again; an --app folder that holds a
history.db is used as it is too.

An --app folder holds prepare.sh (builds the application and records the
capture its campaign.toml names, with $R3), campaign.toml and command (the
application's command line, one line, run in the folder). Prints a Markdown
table and writes it to OUTDIR/apply-back.txt, with each run's JSON summary."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

RECIPES = {"stencil": "./stencil", "spmv": "./spmv", "matmul": "./matmul",
           "xs": "./xs"}


def sh(cmd, cwd, env, log, timeout):
    with open(log, "a") as f:
        f.write("$ %s\n" % " ".join(cmd))
        f.flush()
        return subprocess.run(cmd, cwd=cwd, env=env, stdout=f, stderr=f,
                              timeout=timeout).returncode


def prepare(name, folder, args, env, deadline):
    log = os.path.join(folder, "bench.log")
    script = "./build.sh" if os.path.exists(os.path.join(folder, "build.sh")) \
        else "./prepare.sh"
    if sh(["bash", script], folder, env, log, max(10, deadline - time.time())):
        return "build/record failed (%s)" % log
    if sh([args.r3, "tune", "campaign.toml", "--budget",
           str(args.evaluations)], folder, env, log,
          max(10, deadline - time.time())):
        return "the campaign failed (%s)" % log
    return None


def one_run(args, folder, command, keep, index, env, out):
    tag = "plain" if keep else "tuned"
    summary = os.path.join(out, "%s-%s-%d.json" % (os.path.basename(folder),
                                                   tag, index))
    cmd = [args.r3, "run", "--use", "history.db", "--min-speedup", "0.01",
           "--time-kernels", "--json", summary]
    if keep:
        cmd.append("--keep-original")
    cmd += ["--"] + command
    code = sh(cmd, folder, env, os.path.join(folder, "bench.log"), 600)
    if code != 0 or not os.path.exists(summary):
        return None
    return json.load(open(summary))


def median(xs):
    return statistics.median(xs) if xs else None


def fmt(x, spec="%.4g"):
    return "-" if x is None else spec % x


def measure(name, folder, command, args, env, out):
    runs = {"plain": [], "tuned": []}
    for i in range(args.runs):
        for keep in (True, False):  # alternating, plain first
            j = one_run(args, folder, command, keep, i, env, out)
            if j is None:
                return ["| %s | run %d failed (see %s/bench.log) |" %
                        (name, i, folder)]
            runs["plain" if keep else "tuned"].append(j)
    rows = []
    wall_p = median([j["wall_s"] for j in runs["plain"]])
    wall_t = median([j["wall_s"] for j in runs["tuned"]])
    for k in runs["tuned"][0]["kernels"]:
        def per_launch(arm):
            xs = []
            for j in runs[arm]:
                for kk in j["kernels"]:
                    if kk["kernel"] == k["kernel"] and kk.get("kernel_ms") \
                            and kk["timed_launches"]:
                        xs.append(kk["kernel_ms"] / kk["timed_launches"])
            return median(xs)
        p, t = per_launch("plain"), per_launch("tuned")
        measured = p / t if p and t else None
        predicted = k["speedup"]
        ci = k["speedup_ci"]
        rows.append("| %s | %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, k["kernel"], k["outcome"], fmt(predicted, "%.3fx"),
            " [%.3f, %.3f]" % tuple(ci) if ci else "",
            fmt(p, "%.4g ms"), fmt(t, "%.4g ms"), fmt(measured, "%.3fx"),
            fmt(measured / predicted if measured and predicted else None,
                "%.3f"),
            fmt(wall_p, "%.3f s"), fmt(wall_t, "%.3f s"),
            fmt(wall_p / wall_t if wall_p and wall_t else None, "%.3fx")))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--r3", required=True)
    ap.add_argument("--recipes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=1800)
    ap.add_argument("--evaluations", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--app", action="append", default=[])
    ap.add_argument("--tuned", default="")
    args = ap.parse_args()
    deadline = time.time() + args.budget
    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "work")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, R3=args.r3)
    apps = []
    only = [x for x in args.only.split(",") if x]
    for r, cmd in RECIPES.items():
        if only and r not in only:
            continue
        tuned = os.path.join(args.tuned, "cuda-" + r) if args.tuned else ""
        if tuned and os.path.exists(os.path.join(tuned, "history.db")):
            apps.append((r, os.path.abspath(tuned), [cmd]))
            continue
        dst = os.path.join(work, "cuda-" + r)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(os.path.join(args.recipes, "cuda-" + r), dst)
        apps.append((r, dst, [cmd]))
    for spec in args.app:
        name, _, folder = spec.partition("=")
        if not os.path.isdir(folder):
            sys.exit("run.py: --app %s: no folder '%s'" % (spec, folder))
        command = open(os.path.join(folder, "command")).read().split()
        apps.append((name, os.path.abspath(folder), command))
    header = ["| app | kernel | outcome | campaign speedup [CI] | in-app "
              "plain a launch | in-app tuned a launch | measured speedup | "
              "measured / predicted | app wall plain | app wall tuned | "
              "end to end |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for name, folder, command in apps:
        if time.time() > deadline - 30:
            rows.append("| %s | skipped: the time budget is spent |" % name)
            continue
        ready = os.path.exists(os.path.join(folder, "history.db"))
        problem = None if ready else prepare(name, folder, args, env, deadline)
        if problem:
            rows.append("| %s | %s |" % (name, problem))
            continue
        rows += measure(name, folder, command, args, env, args.out)
        print("\n".join(header + rows), flush=True)
    text = "\n".join(
        ["apply-back: %d runs each, alternating; %d-evaluation campaigns" %
         (args.runs, args.evaluations), ""] + header + rows) + "\n"
    open(os.path.join(args.out, "apply-back.txt"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
