#!/usr/bin/env python3
"""Drives `r3 slurm submit --app` on a real Slurm: a requeue chain of
`r3 tune --app --resume` segments in one folder. The first segment is warned
(`scancel --signal=USR1 --batch`, what Slurm's warning signal does) as soon
as its campaign has started; it checkpoints, exits 75 and requeues itself;
the next segment goes on with the folder's campaign and measures the
application end to end. At the end: the campaign complete with its whole
budget, nothing committed before the stop lost or changed, no candidate
evaluated twice, the end-to-end runs stored once each. Prints a line per
step and "ok".

  app-chain.py R3 DIR --budget N --measure-runs M [--gpus G] -- APP ARGS

--gpus: a CUDA application's segments ask Slurm for G GPUs (the node's
GPUs are real on a GPU machine, stand-ins elsewhere).
"""
import os
import sqlite3
import subprocess
import sys
import time


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def sh(*argv):
    return subprocess.run(argv, capture_output=True, text=True)


def query(db, sql):
    if not os.path.exists(db):
        return []
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def committed(db):
    return {r[0]: r[1:] for r in query(
        db, "SELECT candidate_id, median_ms, verified FROM evaluations")}


def main():
    r3, out = sys.argv[1], os.path.abspath(sys.argv[2])
    at = sys.argv.index("--")
    opts = dict(zip(sys.argv[3:at:2], sys.argv[4:at:2]))
    app = sys.argv[at + 1:]
    budget, runs = int(opts["--budget"]), int(opts["--measure-runs"])
    db = os.path.join(out, "history.db")
    sub = sh(r3, "slurm", "submit", "--app", "--time", "10:00",
             "--signal-margin", "60", "--cover", "1", "--budget", str(budget),
             "--measure-runs", str(runs), "--workers", "1", "-o", out,
             *(["--gpus-per-node", opts["--gpus"]] if "--gpus" in opts
               else []), "--", *app)
    if sub.returncode != 0:
        fail("r3 slurm submit --app: " + sub.stdout + sub.stderr)
    job = open(os.path.join(out, "campaign.slurm.jobs")).read().split()[0]
    print("submitted: one requeue job")
    deadline = time.time() + 300
    # The campaign has started once r3 tune has written its campaign row.
    while not query(db, "SELECT state FROM campaign"):
        if time.time() > deadline:
            sh("scancel", job)
            fail("the campaign did not start in 300 s")
        time.sleep(0.05)
    before = committed(db)
    stop = sh("scancel", "--signal=USR1", "--batch", job)
    if stop.returncode != 0:
        fail("scancel --signal=USR1: " + stop.stderr)
    print("stop: USR1 while tuning")
    while True:
        if time.time() > deadline:
            sh("scancel", job)
            fail("the chain did not end in 300 s")
        state = sh("squeue", "-h", "-j", job, "-o", "%T").stdout.strip()
        if not state:
            break
        time.sleep(0.2)
    after = committed(db)
    for k, v in before.items():
        if after.get(k) != v:
            fail("evaluation of candidate %d changed or vanished" % k)
    state = query(db, "SELECT state FROM campaign")[0][0]
    ids = [r[0] for r in query(
        db, "SELECT c.identity FROM evaluations e JOIN candidates c "
        "ON c.id = e.candidate_id")]
    if len(ids) != len(set(ids)):
        fail("an identity was evaluated twice")
    log = [l.strip() for l in open(os.path.join(out, "campaign.slurm.log"))
           if l.startswith("r3-slurm")]
    if state != "complete" or len(after) != budget:
        fail("the chain ended with the campaign %s after %d of %d "
             "evaluations; the log says: %s" % (state, len(after), budget,
                                                log[-1:]))
    interrupts = query(db, "SELECT count(*) FROM events WHERE kind = "
                       "'interrupt'")[0][0]
    segments = query(db, "SELECT count(*) FROM events WHERE kind = "
                     "'slurm_segment'")[0][0]
    variants = [r[0] for r in query(db, "SELECT variant FROM app_runs "
                                    "ORDER BY id")]
    print("final: %d evaluations, state %s, no repeated identity" %
          (len(after), state))
    print("checkpoints: %s, segments: %s" % (
        "at least 1" if interrupts >= 1 else "none",
        "at least 2" if segments >= 2 else str(segments)))
    print("end-to-end runs: " + " ".join(variants))
    print("requeued: %s" % ("yes" if any("requeueing" in l for l in log)
                            else "no"))
    print("last: " + log[-1].split(": ", 2)[-1])
    print("ok")


if __name__ == "__main__":
    main()
