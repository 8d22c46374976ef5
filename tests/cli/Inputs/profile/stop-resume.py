"""r3 tune --app stopped by SIGUSR1 (what a batch system's warning sends)
and resumed with --resume, three times: before its campaign is written
(the step in progress finishes, nothing is left to resume), while the
campaign runs (the stop is passed on to r3 tune, which checkpoints) and
during the end-to-end runs (the run in progress finishes, the rest wait
for the resume). Prints what each step left in the history.

  stop-resume.py R3 DIR -- APP ARGS
"""
import os
import signal
import sqlite3
import subprocess
import sys
import time

r3, out = sys.argv[1], sys.argv[2]
app = sys.argv[sys.argv.index("--") + 1:]
db = os.path.join(out, "history.db")
tune = [r3, "tune", "--app", "--cover", "1", "--budget", "40",
        "--measure-runs", "3", "-o", out]


def count(sql):
    if not os.path.exists(db):
        return 0
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def has_child(p):
    """Whether r3 has started a child (the profiled application): by then
    its stop handlers are in place."""
    try:
        with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
            return bool(f.read().split())
    except OSError:
        return False


def stop_when(argv, ready, what):
    """Runs argv, sends it SIGUSR1 once ready() holds; its exit status."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(out + "." + what + ".err"), "w"))
    deadline = time.time() + 120
    while not ready(p) and p.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    if p.poll() is not None:
        print(what + ": it ended before the stop (exit %d)" % p.returncode)
        return p.returncode
    p.send_signal(signal.SIGUSR1)
    return p.wait()


evaluations = "SELECT count(*) FROM evaluations"
runs = "SELECT count(*) FROM app_runs"
rc = stop_when(tune + ["--"] + app, has_child, "preparing")
print("stopped before the campaign: exit %d, campaign written: %s" %
      (rc, "yes" if os.path.exists(os.path.join(out, "campaign.toml"))
       else "no"))
rc = stop_when(tune + ["--resume", "--"] + app,
               lambda p: os.path.exists(db), "tuning")
print("stopped while tuning: exit %d, %s evaluations of 40" %
      (rc, "fewer" if count(evaluations) < 40 else "all"))
rc = stop_when(tune + ["--resume", "--"] + app, lambda p: count(runs) >= 1,
               "measuring")
n = count(runs)
print("stopped while measuring: exit %d, %d evaluations, %s end-to-end runs" %
      (rc, count(evaluations), "some" if 1 <= n < 6 else str(n)))
rc = subprocess.run(tune + ["--resume", "--"] + app, stdout=subprocess.DEVNULL,
                    stderr=open(out + ".last.err", "w")).returncode
print("resumed: exit %d, %d evaluations, %d distinct candidates, %d runs" %
      (rc, count(evaluations),
       count("SELECT count(DISTINCT identity) FROM candidates"), count(runs)))
con = sqlite3.connect(db)
print("run order:", " ".join(r[0] for r in con.execute(
    "SELECT variant FROM app_runs ORDER BY id")))
