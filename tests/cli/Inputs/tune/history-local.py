#!/usr/bin/env python3
"""history-local.py R3 CAMPAIGN SHARED_DB LOCAL_DIR: a campaign whose live
history is node-local (--history-local), checked end to end:

  1. a run with a backup every 0.3 s: at its end the shared copy holds what
     the local one holds;
  2. kill -9 mid-run with backups far apart: the local copy keeps every
     evaluation committed, the shared one at most those; a resume picks the
     local copy (it has more) and completes, with nothing lost;
  3. the local folder lost (another node): a resume starts from the shared
     copy and completes.

Prints one line per step and "ok"; exits 1 on the first failure."""
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def count(db):
    if not os.path.exists(db):
        return 0
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    try:
        return con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def identities(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    rows = con.execute("SELECT c.identity FROM evaluations e JOIN candidates "
                       "c ON c.id = e.candidate_id").fetchall()
    con.close()
    return {r[0] for r in rows}


def tune(r3, campaign, local, budget, every, log):
    return subprocess.Popen([r3, "tune", campaign, "--budget", str(budget),
                             "--workers", "1", "--history-local", local,
                             "--backup-every", str(every)],
                            stdout=log, stderr=log)


def main():
    r3, campaign, shared, local_dir = sys.argv[1:5]
    local = os.path.join(local_dir, os.path.basename(shared))
    log = open(campaign + ".log", "ab")
    if tune(r3, campaign, local_dir, 12, 0.3, log).wait() != 0:
        fail("the first run failed")
    if count(shared) != 12 or count(local) != 12:
        fail("after the first run: shared %d, local %d" %
             (count(shared), count(local)))
    print("run: shared and local copies both hold 12 evaluations")

    p = tune(r3, campaign, local_dir, 40, 1000, log)
    end = time.time() + 120
    while count(local) < 18 and time.time() < end and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    kept, in_shared = identities(local), count(shared)
    if len(kept) < 18 or in_shared > len(kept):
        fail("after kill -9: local %d, shared %d" % (len(kept), in_shared))
    print("kill -9: the local copy kept %s, the shared one %s" %
          ("every commit" if len(kept) >= 18 else len(kept),
           "fewer" if in_shared < len(kept) else "as many"))
    if tune(r3, campaign, local_dir, 40, 1000, log).wait() != 0:
        fail("the resume failed")
    if not kept <= identities(local) or count(local) != 40:
        fail("the resume lost evaluations or fell short: %d" % count(local))
    if count(shared) != 40:
        fail("the shared copy holds %d after the resume" % count(shared))
    print("resume: from the local copy, 40 evaluations, nothing lost")

    shutil.rmtree(local_dir)
    if tune(r3, campaign, local_dir, 50, 1000, log).wait() != 0:
        fail("the resume on another node failed")
    if count(local) != 50 or count(shared) != 50:
        fail("on another node: local %d, shared %d" %
             (count(local), count(shared)))
    print("another node: from the shared copy, 50 evaluations")
    print("ok")


if __name__ == "__main__":
    main()
