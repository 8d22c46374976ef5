#!/usr/bin/env python3
"""r3 tune --app on whole applications, and its Amdahl-led budget against an
even split.

For each application (NAME=DIR::COMMAND: its folder, which is also the
source tree searched, and its command line, run in DIR):
  1. `r3 tune --app --budget N` (profile, choose by --cover, record, write,
     tune with the Amdahl-led budget, measure end to end): its wall time;
  2. the same campaign with the kernels' shares removed, so that kernels
     take turns (the even split), on the same capture and budget;
then one table row per application and arm: the share of the kernels' time
the chosen kernels cover, the ceiling, each kernel's speedup, the predicted
end-to-end speedup, the measured one with its spread (the Amdahl arm, from
r3 report), the evaluations, and the evaluations the Amdahl arm needed to
reach the even split's final predicted speedup (its ratio to the even
split's budget: the aim is at most 1/2).

The predicted speedup after each evaluation is recomputed here from the
history (per kernel: its first verified baseline-level median over the best
verified median so far, Amdahl over the campaign's shares); `r3 report`'s
rule also weighs confidence intervals and several devices, so the final
figures can differ from the report's by a little.

  bench/app-tune/run.py --r3 R3 --out DIR [--budget 60] [--cover 0.9]
                        [--measure-runs 3] NAME=DIR::COMMAND ...
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from app_runs import apps, run  # noqa: E402


def amdahl(parts):
    left = 1.0
    for share, speedup in parts:
        left -= share - share / speedup
    return 1 / left if left > 0 else float("inf")


def shares_of(campaign):
    out, name = {}, None
    for line in open(campaign):
        m = re.match(r'name = "(.*)"', line)
        if m:
            name = m.group(1)
        m = re.match(r"share = ([0-9.e-]+)", line)
        if m and name:
            out[name] = float(m.group(1))
    return out


def predicted_trace(db, shares):
    """The predicted end-to-end speedup after each evaluation, in commit order."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT k.name, c.level, e.verified, e.median_ms FROM evaluations e "
        "JOIN candidates c ON c.id = e.candidate_id "
        "JOIN kernels k ON k.id = c.kernel_id ORDER BY e.id").fetchall()
    base, best, trace = {}, {}, []
    for name, level, ok, ms in rows:
        if ok and ms and ms > 0:
            if level == "baseline" and name not in base:
                base[name] = ms
            best[name] = min(best.get(name, ms), ms)
        parts = [(s, base[n] / best[n]) for n, s in shares.items()
                 if n in base and n in best]
        trace.append(amdahl(parts))
    return trace, {n: base[n] / best[n] for n in base if n in best}


def one_app(args, name, folder, command):
    out = os.path.join(args.out, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    amd = os.path.join(out, "amdahl")
    rc, wall = run([args.r3, "tune", "--app", "--budget", str(args.budget),
                    "--cover", str(args.cover), "--measure-runs",
                    str(args.measure_runs), "--source-dir", folder, "-o", amd,
                    "--"] + command, folder, os.path.join(out, "amdahl.log"))
    if rc != 0:
        return {"name": name, "error": "r3 tune --app exited %d (see %s)"
                % (rc, os.path.join(out, "amdahl.log"))}
    campaign = os.path.join(amd, "campaign.toml")
    shares = shares_of(campaign)
    even = os.path.join(out, "even")
    os.makedirs(even)
    text = open(campaign).read()
    text = re.sub(r"(?m)^share = .*\n", "", text)
    text = text.replace('capture = "app.h5"',
                        'capture = "%s"' % os.path.join(amd, "app.h5"))
    open(os.path.join(even, "campaign.toml"), "w").write(text)
    rc2, wall2 = run([args.r3, "tune", os.path.join(even, "campaign.toml")],
                     even, os.path.join(out, "even.log"))
    a_trace, a_speed = predicted_trace(os.path.join(amd, "history.db"), shares)
    e_trace, e_speed = predicted_trace(os.path.join(even, "history.db"), shares)
    report = json.loads(subprocess.check_output(
        [args.r3, "report", os.path.join(amd, "history.db"), "--format",
         "json"]))["end_to_end"] or {}
    profile = json.load(open(os.path.join(amd, "profile.json")))
    covered = sum(k["share_of_kernel_time"] for k in profile["kernels"]
                  if k["name"] in shares)
    target = e_trace[-1] if e_trace else 1
    reach = next((i + 1 for i, v in enumerate(a_trace) if v >= target - 1e-9),
                 None)
    for arm in (amd, even):  # the captures are large and not results
        for f in os.listdir(arm):
            if f.endswith(".h5"):
                os.remove(os.path.join(arm, f))
    return {"name": name, "covered": covered,
            "ceiling": profile["ceiling"]["if_free"],
            "amdahl": {"wall": wall, "evaluations": len(a_trace),
                       "predicted": a_trace[-1] if a_trace else 1,
                       "speedups": a_speed, "report": report},
            "even": {"wall": wall2, "evaluations": len(e_trace),
                     "predicted": target, "speedups": e_speed,
                     "rc": rc2},
            "reach": reach}


def fmt(v, f="%.3f"):
    return "-" if v is None else f % v


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--r3", default="r3")
    p.add_argument("--out", required=True)
    p.add_argument("--budget", type=int, default=60)
    p.add_argument("--cover", type=float, default=0.9)
    p.add_argument("--measure-runs", type=int, default=3)
    p.add_argument("apps", nargs="+", help="NAME=DIR::COMMAND")
    args = p.parse_args()
    rows = []
    for name, folder, command in apps(args.apps):
        r = one_app(args, name, folder, command)
        rows.append(r)
        print(json.dumps(r), file=sys.stderr)
    json.dump(rows, open(os.path.join(args.out, "app-tune.json"), "w"),
              indent=1)
    print("| app | covered | ceiling | arm | evaluations | kernels' speedups "
          "| predicted e2e | measured e2e (spread) | wall s | Amdahl evals "
          "to even's final (ratio) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print("| %s | %s |" % (r["name"], r["error"]))
            continue
        for arm in ("amdahl", "even"):
            a = r[arm]
            sp = ", ".join("%s %.2fx" % (n[:24], s)
                           for n, s in sorted(a["speedups"].items()))
            rep = a.get("report") or {}
            meas = "-"
            if rep.get("measured"):
                meas = "%.3fx (%.3f-%.3f)" % (rep["measured"],
                                              rep["measured_lo"],
                                              rep["measured_hi"])
            reach = "-"
            if arm == "amdahl":
                reach = "%s (%s)" % (fmt(r["reach"], "%d"),
                                     fmt(r["reach"] / r["even"]["evaluations"]
                                         if r["reach"] else None, "%.2f"))
            print("| %s | %.1f%% | %s | %s | %d | %s | %.3fx | %s | %.0f | %s |"
                  % (r["name"], 100 * r["covered"], fmt(r["ceiling"], "%.2fx"),
                     arm, a["evaluations"], sp, a["predicted"], meas,
                     a["wall"], reach))


if __name__ == "__main__":
    main()
