#!/usr/bin/env python3
"""Kill and stop a running campaign, then check its history.

  chaos.py kill R3 CAMPAIGN DB --kills N --seed S
      runs `r3 tune CAMPAIGN` and kill -9s it at a random moment after it has
      committed a new evaluation, N times, resuming each time; then lets it
      finish. After every kill, every evaluation committed before it must
      still be there, unchanged; at the end no identity hash repeats, no
      candidate has two evaluations and the campaign is complete.
  chaos.py term R3 CAMPAIGN DB [--signal USR1] [--to-rank N]
      sends SIGTERM (or --signal) once a few evaluations are committed, to
      r3 (or its launcher), or under --launch to MPI rank N: r3 must exit 75
      and leave the campaign 'interrupted'; a resume must finish it.
  chaos.py killrank R3 CAMPAIGN DB
      under --launch (an MPI launcher), kill -9s a worker rank once a few
      evaluations are committed: the job must end with an error that names
      the rank, every committed evaluation must still be there, and a
      resume (without the launcher) must finish the campaign.

--launch "WORDS" runs r3 under a launcher (mpirun -n 3 ...); the resumes
run without it unless --resume-launch is given.

Prints one line per step and "ok" at the end; exits 1 on the first failure.
"""
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def committed(db):
    """The committed evaluations: {candidate identity: (median_ms, verified)}."""
    if not os.path.exists(db):
        return {}
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    try:
        rows = con.execute(
            "SELECT c.identity, e.median_ms, e.verified FROM evaluations e "
            "JOIN candidates c ON c.id = e.candidate_id").fetchall()
    except sqlite3.OperationalError:
        return {}  # the schema is being created
    finally:
        con.close()
    return {r[0]: (r[1], r[2]) for r in rows}


LAUNCH = []


def start(r3, campaign, budget, launch=None):
    log = open(campaign + ".log", "ab")
    launch = LAUNCH if launch is None else launch
    workers = [] if launch else ["--workers", "1"]
    return subprocess.Popen(launch + [r3, "tune", campaign, "--budget",
                                      str(budget)] + workers,
                            stdout=log, stderr=log)


def wait_for_more(db, proc, than, timeout=600):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            return False
        if len(committed(db)) > than:
            return True
        time.sleep(0.05)
    fail("no new evaluation within %d s" % timeout)


def check_kept(before, after):
    for ident, value in before.items():
        if after.get(ident) != value:
            fail("evaluation of %s changed or vanished: %r -> %r" %
                 (ident[:12], value, after.get(ident)))


def final_checks(db, budget):
    con = sqlite3.connect(db)
    dups = con.execute("SELECT identity, COUNT(*) FROM candidates GROUP BY "
                       "identity HAVING COUNT(*) > 1").fetchall()
    if dups:
        fail("identity hashes repeat: %r" % dups)
    twice = con.execute("SELECT candidate_id, COUNT(*) FROM evaluations GROUP "
                        "BY candidate_id HAVING COUNT(*) > 1").fetchall()
    if twice:
        fail("candidates evaluated twice: %r" % twice)
    state = con.execute("SELECT state FROM campaign").fetchone()[0]
    n = con.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
    con.close()
    if state != "complete":
        fail("campaign state is %r, not complete" % state)
    print("final: %d evaluations, state %s, no repeated identity" % (n, state))
    if n > budget:
        fail("%d evaluations exceed the budget of %d" % (n, budget))


def kill_mode(r3, campaign, db, kills, seed, budget):
    rng = random.Random(seed)
    for k in range(kills):
        before = committed(db)
        proc = start(r3, campaign, budget)
        if not wait_for_more(db, proc, len(before)):
            fail("the campaign ended before kill %d" % (k + 1))
        time.sleep(rng.uniform(0.0, 0.2))
        proc.send_signal(signal.SIGKILL)
        if proc.wait() != -signal.SIGKILL:
            fail("the campaign finished before kill %d could hit it" % (k + 1))
        time.sleep(0.2)  # let the workers and servers die with it
        after = committed(db)
        check_kept(before, after)
        print("kill %d: %d evaluations committed before, %d after" %
              (k + 1, len(before), len(after)))
    before = committed(db)
    proc = start(r3, campaign, budget)
    rc = proc.wait(timeout=600)
    if rc != 0:
        fail("the resumed campaign exited with %d" % rc)
    check_kept(before, committed(db))
    final_checks(db, budget)


def term_mode(r3, campaign, db, budget, signame="TERM", to_rank=None):
    sig = getattr(signal, "SIG" + signame)
    proc = start(r3, campaign, budget)
    if not wait_for_more(db, proc, 2):
        fail("the campaign ended before SIG%s" % signame)
    before = committed(db)
    if to_rank is None:
        proc.send_signal(sig)
    else:
        pid = rank_pid(proc.pid, to_rank)
        if pid is None:
            fail("no process of rank %d" % to_rank)
        os.kill(pid, sig)
    rc = proc.wait(timeout=600)
    if rc != 75:
        con = sqlite3.connect(db)
        n, = con.execute("SELECT count(*) FROM evaluations").fetchone()
        con.close()
        fail("SIG%s gave exit status %d, expected 75 (%d of %d evaluations "
             "committed: %s)" % (signame, rc, n, budget,
                                 "the signal never reached r3"
                                 if n >= budget else "r3 went on"))
    con = sqlite3.connect(db)
    state = con.execute("SELECT state FROM campaign").fetchone()[0]
    con.close()
    if state != "interrupted":
        fail("after SIGTERM the campaign is %r, not interrupted" % state)
    check_kept(before, committed(db))
    print("sig%s: exit 75, state interrupted, %d evaluations" %
          (signame.lower(), len(committed(db))))
    proc = start(r3, campaign, budget, launch=[])
    rc = proc.wait(timeout=600)
    if rc != 0:
        fail("the resumed campaign exited with %d" % rc)
    final_checks(db, budget)


def rank_pid(parent, rank):
    """The pid of MPI rank `rank` among the descendants of `parent`."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
            cmd = open("/proc/%s/cmdline" % pid, "rb").read()
        except OSError:
            continue
        if (b"OMPI_COMM_WORLD_RANK=%d" % rank) in env and b"tune" in cmd:
            return int(pid)
    return None


def killrank_mode(r3, campaign, db, budget):
    proc = start(r3, campaign, budget)
    if not wait_for_more(db, proc, 2):
        fail("the campaign ended before a rank could be killed")
    before = committed(db)
    pid = rank_pid(proc.pid, 2)
    if pid is None:
        fail("no rank 2 found")
    os.kill(pid, signal.SIGKILL)
    rc = proc.wait(timeout=600)
    if rc == 0:
        fail("the job survived the death of rank 2")
    log = open(campaign + ".log", errors="replace").read()
    if "rank 2" not in log:
        fail("nothing in the job's output names rank 2")
    time.sleep(0.3)
    check_kept(before, committed(db))
    print("killrank: the job ended (exit %d) naming rank 2, %d evaluations "
          "kept" % (rc, len(committed(db))))
    proc = start(r3, campaign, budget, launch=[])
    rc = proc.wait(timeout=600)
    if rc != 0:
        fail("the resumed campaign exited with %d" % rc)
    check_kept(before, committed(db))
    final_checks(db, budget)


def main():
    global LAUNCH
    args = sys.argv[1:]
    opts = {"--kills": "3", "--seed": "1", "--budget": "30", "--signal": "TERM",
            "--launch": "", "--to-rank": ""}
    while len(args) > 4 and args[-2] in opts:
        opts[args[-2]] = args[-1]
        args = args[:-2]
    mode, r3, campaign, db = args
    budget = int(opts["--budget"])
    LAUNCH = opts["--launch"].split()
    if mode == "kill":
        kill_mode(r3, campaign, db, int(opts["--kills"]), int(opts["--seed"]),
                  budget)
    elif mode == "killrank":
        killrank_mode(r3, campaign, db, budget)
    else:
        term_mode(r3, campaign, db, budget, opts["--signal"],
                  int(opts["--to-rank"]) if opts["--to-rank"] else None)
    print("ok")


if __name__ == "__main__":
    main()
