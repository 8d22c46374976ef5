#!/usr/bin/env python3
"""check-failures.py REPORT.json DB: the faulty campaign's report counts its
failures by kind, the history agrees with it, and the best candidate is one
of the variants that compute the right result (FAULT 0 or 5)."""
import json
import sqlite3
import sys

report = json.load(open(sys.argv[1]))
k = report["kernels"][0]
con = sqlite3.connect(sys.argv[2])
rows = con.execute("SELECT failure, COUNT(*) FROM evaluations WHERE failure "
                   "IS NOT NULL GROUP BY failure").fetchall()
db_kinds = {kind: n for kind, n in rows}
reported = {kind: n for kind, n in k["failures"].items() if n}
if reported != db_kinds:
    sys.exit("FAIL: report failures %r, history %r" % (k["failures"], db_kinds))
print(" ".join(sorted(db_kinds)))
# Every variant that failed at the source level failed with its own kind.
want = {"1": "crashed", "2": "timeout", "3": "wrong_result", "4": "compile_error"}
for key, failure in con.execute(
        "SELECT v.genome_key, e.failure FROM evaluations e JOIN candidates c "
        "ON c.id = e.candidate_id JOIN variants v ON v.id = c.variant_id "
        "WHERE c.level = 'source'"):
    fault = key.split("FAULT=")[1]
    if want.get(fault) != failure:
        sys.exit("FAIL: variant %s failed with %r, expected %r" %
                 (key, failure, want.get(fault)))
best = k["best"]["variant"]["genome_key"]
print("best: %s (FAULT=0 or FAULT=5 or the recorded code)" % best)
if best not in ("file=0,FAULT=0", "file=0,FAULT=5", "recorded"):
    sys.exit("FAIL: the best is %r" % best)
print("ok")
