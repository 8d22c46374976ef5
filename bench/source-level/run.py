#!/usr/bin/env python3
"""The source level on code nobody annotated: compiler and launch tuning
alone against the same with the rewrite operator, grid size and the kernel
alone, on the same capture and budget.

For each application (NAME=DIR::COMMAND, run in DIR, whose folder is the
source tree searched), `r3 tune --app --dry-run` profiles it, records its
kernels and writes the campaign; then three campaigns run on that capture:
  plain    [source] strategy = "none", no grid_per_sm, extract = false:
           compiler and launch settings only;
  rewrite  the campaign as r3 tune --app writes it: the rewrite operator,
           grid_per_sm for grid-stride kernels, the kernel alone;
  whole    the rewrite arm with extract = false and one inner evaluation a
           variant, only to time compiles (--whole-budget evaluations).
One row per kernel: its speedup over the application's cubin in each arm
(r3 report), the rewrite arm's over the plain arm's, what the rewrite arm's
best uses (its R3_RW_* knobs set, its grid_per_sm), and the mean compile
time of a candidate compiled from its source (the compile cache cold for
each new variant) with the kernel alone and with the whole file, with
their ratio. Then the geometric mean of the rewrite arm's gain
over kernels where a transformation applied (a rewrite knob or a grid was
offered), and over those whose best uses one.

  bench/source-level/run.py --r3 R3 --out DIR [--budget 60] [--cover 0.9]
                            [--whole-budget 16] NAME=DIR::COMMAND ...
"""
import argparse
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from app_runs import apps, run  # noqa: E402


def arm_campaign(text, capture, arm, budget):
    text = text.replace('capture = "app.h5"', 'capture = "%s"' % capture)
    text = re.sub(r"(?m)^evaluations = \d+", "evaluations = %d" % budget, text)
    if arm == "plain":
        text = re.sub(r"(?m)^operators = \{ rewrite = 1.0 \}",
                      'strategy = "none"', text)
        text = re.sub(r"(?m)^grid_per_sm = .*\n", "", text)
        text = re.sub(r"(?m)^extract = true", "extract = false", text)
    elif arm == "whole":
        # Source variants from the start: compile times are what it is for.
        text = re.sub(r"(?m)^extract = true", "extract = false", text)
        text = re.sub(r"(?m)^inner_evaluations = \d+", "inner_evaluations = 1",
                      text)
    return text


def speedups(r3, db):
    rep = json.loads(subprocess.check_output(
        [r3, "report", db, "--format", "json"]))
    out = {}
    for k in rep["kernels"]:
        best = k.get("best") or {}
        s = k.get("speedup")
        if isinstance(s, dict):
            s = s.get("value")
        out[k["name"]] = {"speedup": s, "settings": best.get("settings") or {},
                          "genome_key": (best.get("variant") or {})
                          .get("genome_key", "")}
    return out


def offered(db):
    """Per kernel: whether a rewrite knob or a grid applied (events)."""
    con = sqlite3.connect(db)
    out = {}
    for kind, msg in con.execute(
            "SELECT kind, message FROM events WHERE kind IN ('rewrite', "
            "'grid')"):
        name, _, what = msg.partition(": ")
        applies = (kind == "rewrite" and "R3_RW_" in what) or \
            (kind == "grid" and "grid-stride" in what)
        out[name] = out.get(name, False) or applies
    return out


def compile_ms(db):
    """Per kernel: the mean compile time of candidates compiled from its
    source (any variant but the recorded code)."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT k.name, avg(e.compile_ms) FROM evaluations e JOIN candidates "
        "c ON c.id = e.candidate_id JOIN kernels k ON k.id = c.kernel_id "
        "JOIN variants v ON v.id = c.variant_id WHERE v.genome_key != "
        "'recorded' AND e.compile_ms > 0 GROUP BY k.name")
    return {n: ms for n, ms in rows}


def uses(entry):
    key = entry["genome_key"]
    knobs = [p for p in key.split(",") if p.startswith("R3_RW_")
             and not p.endswith("=0")]
    grid = entry["settings"].get("grid_per_sm")
    if grid:
        knobs.append("grid_per_sm=%d" % grid)
    return " ".join(knobs) or "-"


def one_app(args, name, folder, command):
    out = os.path.join(args.out, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    prep = os.path.join(out, "prepare")
    rc, _ = run([args.r3, "tune", "--app", "--dry-run", "--budget",
                 str(args.budget), "--cover", str(args.cover), "--source-dir",
                 folder, "-o", prep, "--"] + command, folder,
                os.path.join(out, "prepare.log"))
    if rc != 0:
        return {"name": name, "error": "r3 tune --app --dry-run exited %d" % rc}
    text = open(os.path.join(prep, "campaign.toml")).read()
    capture = os.path.join(prep, "app.h5")
    arms = {}
    for arm, budget in (("plain", args.budget), ("rewrite", args.budget),
                        ("whole", args.whole_budget)):
        d = os.path.join(out, arm)
        os.makedirs(d)
        with open(os.path.join(d, "campaign.toml"), "w") as f:
            f.write(arm_campaign(text, capture, arm, budget))
        rc, wall = run([args.r3, "tune", "campaign.toml"], d,
                       os.path.join(out, arm + ".log"))
        db = os.path.join(d, "history.db")
        arms[arm] = {"rc": rc, "wall": wall,
                     "kernels": speedups(args.r3, db) if rc == 0 else {},
                     "compile_ms": compile_ms(db) if rc == 0 else {},
                     "offered": offered(db) if rc == 0 else {}}
    os.remove(capture)
    return {"name": name, "arms": arms}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--r3", default="r3")
    p.add_argument("--out", required=True)
    p.add_argument("--budget", type=int, default=60)
    p.add_argument("--whole-budget", type=int, default=16)
    p.add_argument("--cover", type=float, default=0.9)
    p.add_argument("apps", nargs="+", help="NAME=DIR::COMMAND")
    args = p.parse_args()
    rows, gains, used = [], [], []
    for name, folder, command in apps(args.apps):
        r = one_app(args, name, folder, command)
        rows.append(r)
        print(json.dumps(r), file=sys.stderr)
    json.dump(rows, open(os.path.join(args.out, "source-level.json"), "w"),
              indent=1)
    print("| app | kernel | plain | rewrite | gain | best uses | compile ms "
          "alone | whole | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print("| %s | %s |" % (r["name"], r["error"]))
            continue
        a = r["arms"]
        for k, e in sorted(a["rewrite"]["kernels"].items()):
            plain = a["plain"]["kernels"].get(k, {}).get("speedup")
            rw = e["speedup"]
            gain = rw / plain if rw and plain else None
            if gain and a["rewrite"]["offered"].get(k):
                gains.append(gain)
            if gain and uses(e) != "-":
                used.append(gain)
            alone = a["rewrite"]["compile_ms"].get(k)
            whole = a["whole"]["compile_ms"].get(k)

            def f(v, fmt="%.3f"):
                return "-" if v is None else fmt % v
            print("| %s | %s | %sx | %sx | %sx%s | %s | %s | %s | %s |" % (
                r["name"], k[:28], f(plain), f(rw), f(gain),
                "" if a["rewrite"]["offered"].get(k) else " (none offered)",
                uses(e), f(alone, "%.0f"), f(whole, "%.0f"),
                f(whole / alone if alone and whole else None, "%.2fx")))
    # Where one was offered, the gain also holds what the two arms' searches
    # found apart from it (another block size); where the best uses one, it
    # is the transformation's.
    for what, xs in (("a transformation applied", gains),
                     ("the best uses a transformation", used)):
        if xs:
            g = math.exp(sum(math.log(x) for x in xs) / len(xs))
            print("geomean gain of the source level where %s: %.3fx over %d "
                  "kernels" % (what, g, len(xs)))


if __name__ == "__main__":
    main()
