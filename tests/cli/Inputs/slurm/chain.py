#!/usr/bin/env python3
"""Drives a chain of `r3 slurm submit` on a real Slurm and checks the history.

  chain.py R3 CAMPAIGN MODE --budget N --per-segment K [--ntasks T] [--kill]

MODE is requeue, dependency or array. Each segment is stopped once it has
committed K more evaluations: with `scancel --signal=USR1 --batch` (what
Slurm's warning signal does, without waiting for a time limit), or with
--kill, the first one by a plain `scancel` (SIGTERM, then SIGKILL after
KillWait) in a dependency chain. After each stop, every evaluation committed
before it must still be there, unchanged. At the end the campaign must be
complete with N evaluations, no candidate evaluated twice, and one
slurm_segment event per segment. Prints a line per step and "ok"."""
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


def committed(db):
    if not os.path.exists(db):
        return {}
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT candidate_id, median_ms, verified "
                           "FROM evaluations").fetchall()
    except sqlite3.OperationalError:
        rows = []
    con.close()
    return {r[0]: r[1:] for r in rows}


def checkpoints(db):
    """How many times the campaign stopped (interrupt events)."""
    con = sqlite3.connect(db)
    try:
        n = con.execute("SELECT count(*) FROM events WHERE kind = 'interrupt'"
                        ).fetchone()[0]
    except sqlite3.OperationalError:
        n = 0
    con.close()
    return n


def running(jobs):
    out = sh("squeue", "-h", "-t", "RUNNING", "-o", "%i", "-j", ",".join(jobs))
    return [l.strip() for l in out.stdout.splitlines() if l.strip()]


def active(jobs):
    out = sh("squeue", "-h", "-o", "%i", "-j", ",".join(jobs))
    return [l.strip() for l in out.stdout.splitlines() if l.strip()]


def main():
    args = sys.argv[1:]
    kill = "--kill" in args
    args = [a for a in args if a != "--kill"]
    r3, campaign, mode = args[0], args[1], args[2]
    opts = dict(zip(args[3::2], args[4::2]))
    budget, per = int(opts["--budget"]), int(opts["--per-segment"])
    folder = os.path.dirname(os.path.abspath(campaign))
    db = os.path.join(folder, "history.db")
    jobs_file = os.path.join(folder, "campaign.slurm.jobs")
    sub = sh(r3, "slurm", "submit", campaign, "--time", "10:00",
             "--signal-margin", "60", "--chain", mode, "--max-segments", "8",
             "--budget", str(budget),
             *(["--ntasks", opts["--ntasks"]] if "--ntasks" in opts else
               ["--workers", "1"]))
    if sub.returncode != 0:
        fail("r3 slurm submit: " + sub.stdout + sub.stderr)
    jobs = open(jobs_file).read().split()
    print("submitted %s chain: %d job(s)" % (mode, len(jobs)))
    stops, deadline, signallers = 0, time.time() + 240, []
    before = committed(db)
    while True:
        if time.time() > deadline:
            sh("scancel", *jobs)
            fail("the chain did not end in 240 s")
        # The history first (cheap): Slurm is asked only once a segment has
        # done its share, so that a fast segment is caught in time.
        have = committed(db)
        if len(have) < len(before) + per or len(have) >= budget:
            if not active(jobs):
                break
            time.sleep(0.05)
            continue
        now = running(jobs)
        if now:
            for k, v in before.items():
                if have.get(k) != v:
                    fail("evaluation of candidate %d changed or vanished" % k)
            seen = checkpoints(db)
            # scancel may retry for seconds while the job changes state: it
            # runs beside this loop, which goes on reading the history.
            if kill and stops == 0:
                signaller = subprocess.Popen(["scancel", now[0]])
                print("stop %d: scancel (no signal)" % (stops + 1))
            else:
                signaller = subprocess.Popen(
                    ["scancel", "--signal=USR1", "--batch", now[0]])
                print("stop %d: USR1" % (stops + 1))
            stops += 1
            # Wait for that segment to end before counting again: its
            # checkpoint (an interrupt event), or its end.
            while time.time() < deadline and checkpoints(db) == seen and \
                    now[0] in running(jobs):
                time.sleep(0.05)
            signallers.append(signaller)
            after = committed(db)
            lost = [k for k in have if k not in after]
            if lost:
                fail("stop %d lost %d committed evaluations" % (stops, len(lost)))
            before = after
        elif not active(jobs):
            break
        else:
            time.sleep(0.05)
    for p in signallers:
        p.wait()
    final = committed(db)
    con = sqlite3.connect(db)
    state = con.execute("SELECT state FROM campaign").fetchone()[0]
    ids = [r[0] for r in con.execute(
        "SELECT c.identity FROM evaluations e JOIN candidates c "
        "ON c.id = e.candidate_id")]
    segments = [r[0] for r in con.execute(
        "SELECT message FROM events WHERE kind = 'slurm_segment' ORDER BY id")]
    con.close()
    if len(ids) != len(set(ids)):
        fail("an identity was evaluated twice")
    if state != "complete" or len(final) != budget:
        fail("the chain ended with the campaign %s after %d of %d "
             "evaluations; the log says: %s" % (
                 state, len(final), budget,
                 [l for l in open(os.path.join(folder, "campaign.slurm.log"))
                  if l.startswith("r3-slurm")][-1:]))
    print("stops: %s" % ("at least 2" if stops >= 2 else str(stops)))
    print("final: %d evaluations, state %s, no repeated identity" %
          (len(final), state))
    print("segments: %s" % ("at least 3" if len(segments) >= 3 else
                            str(len(segments))))
    if "--ntasks" in opts:
        con = sqlite3.connect(db)
        ranks = sorted({r[0].split("(rank ")[1].split(" ")[0] for r in
                        con.execute("SELECT device FROM evaluations")
                        if "(rank " in r[0]})
        con.close()
        print("worker ranks: " + " ".join(ranks))
    if mode == "requeue":
        restarts = sorted({s.split("restart ")[1].split(",")[0]
                           for s in segments})
        print("restarts: " + " ".join(restarts[:3]))
    if mode == "array":
        tasks = [s.split("array task ")[1] for s in segments
                 if "array task " in s]
        print("array tasks: " + " ".join(tasks[:3]))
        left = sh("squeue", "-h", "-j", jobs[0]).stdout.strip()
        print("array left queued: %s" % ("none" if not left else left))
    print("ok")


if __name__ == "__main__":
    main()
