#!/usr/bin/env python3
"""Checks a CUDA campaign's history after a run on the fake device.

  check-cuda-campaign.py DB [--kinds K,K,...] [--gpus G,G,...]

Prints one line per check and "ok" at the end; exits 1 on the first failure:
  - the campaign is complete and every failure kind named is recorded;
  - the baseline was re-measured (more than one baselines row);
  - the recorded cubin's inner loop tried launch-level points, and some
    verified;
  - the kernel's source as written is a labelled variant ('initial');
  - every verified compiled candidate's evaluation records the codegen
    level it was compiled at, and with the llvm toolchain its pipeline;
  - the best verified candidate runs 128 threads a block (the fake device's
    fastest launch) and is faster than the baseline;
  - every evaluation names the GPU its worker was given (--gpus), and each
    given GPU ran some;
  - no identity repeats and no candidate has two evaluations.
"""
import json
import sqlite3
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    db = args[0]
    opts = dict(zip(args[1::2], args[2::2]))
    con = sqlite3.connect(db)
    q = lambda sql: con.execute(sql).fetchall()
    state = q("SELECT state FROM campaign")[0][0]
    if state != "complete":
        fail("campaign state %r" % state)
    kinds = {k for (k,) in q("SELECT DISTINCT failure FROM evaluations "
                             "WHERE failure IS NOT NULL")}
    for k in filter(None, opts.get("--kinds", "").split(",")):
        if k not in kinds:
            fail("no %s among the failures %s" % (k, sorted(kinds)))
    print("failures:", ", ".join(sorted(kinds)))
    n = q("SELECT COUNT(*) FROM baselines")[0][0]
    if n < 2:
        fail("the baseline was measured %d time(s)" % n)
    print("baselines: re-measured")
    launch = q("SELECT e.verified FROM candidates c JOIN evaluations e ON "
               "e.candidate_id = c.id JOIN variants v ON v.id = c.variant_id "
               "WHERE v.genome_key = 'recorded' AND c.level = 'launch'")
    if not launch or not any(v for (v,) in launch):
        fail("no verified launch-level point of the recorded cubin")
    print("launch level: %d points of the recorded cubin" % len(launch))
    if not q("SELECT id FROM variants WHERE operator = 'initial'"):
        fail("no 'initial' variant (the source as written)")
    print("initial variant: present")
    compiled = q("SELECT c.settings_json, e.pipeline, e.codegen_opt FROM "
                 "evaluations e JOIN candidates c ON c.id = e.candidate_id "
                 "JOIN variants v ON v.id = c.variant_id "
                 "WHERE e.verified = 1 AND v.genome_key != 'recorded'")
    if not compiled:
        fail("no verified compiled candidate")
    for settings, pipeline, opt in compiled:
        s = json.loads(settings)
        llvm = s.get("toolchain") in ("", "llvm", None)
        want = (s.get("pipeline") or "default<O3>") if llvm else ""
        level = s.get("codegen_opt", -1)
        if opt != (3 if level == -1 else level) or pipeline != want:
            fail("%s ran %r at codegen opt %d" % (settings, pipeline, opt))
    print("compiled: %d record their pipeline and codegen level"
          % len(compiled))
    best = q("SELECT c.settings_json, e.median_ms FROM evaluations e JOIN "
             "candidates c ON c.id = e.candidate_id WHERE e.verified = 1 "
             "AND e.median_ms IS NOT NULL ORDER BY e.median_ms LIMIT 1")[0]
    base = q("SELECT MIN(median_ms) FROM baselines")[0][0]
    block = json.loads(best[0]).get("block", [16, 16, 1])
    threads = block[0] * block[1] * block[2]
    if threads != 128 or not best[1] < base:
        fail("best %s (%d threads, %.4f ms) vs baseline %.4f ms" %
             (best[0], threads, best[1], base))
    print("best: 128 threads a block, faster than the baseline")
    gpus = [g for g in opts.get("--gpus", "").split(",") if g]
    if gpus:
        devices = {d for (d,) in q("SELECT DISTINCT device FROM evaluations")}
        want = {"fake GPU " + g for g in gpus}
        if devices != want:
            fail("devices %s, expected %s" % (sorted(devices), sorted(want)))
        print("devices:", ", ".join(sorted(devices)))
    if q("SELECT identity FROM candidates GROUP BY identity HAVING COUNT(*) > 1"):
        fail("identity hashes repeat")
    if q("SELECT candidate_id FROM evaluations GROUP BY candidate_id "
         "HAVING COUNT(*) > 1"):
        fail("a candidate was evaluated twice")
    print("ok")


if __name__ == "__main__":
    main()
