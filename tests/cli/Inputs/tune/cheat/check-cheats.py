#!/usr/bin/env python3
"""check-cheats.py REPORT.json DB: every cheating variant of matmul-cheat.c (CHEAT 1-5)
failed with wrong_result or crashed, with a message that says what was
caught; the honest one (CHEAT 0) verified; the report's best is honest."""
import json
import sqlite3
import sys

# What each cheater's message must say (tests/cli/tune-adversarial.test).
caught = {
    "1": "gave a different result than the verification run",
    "2": "gave a different result than the verification run",
    "3": "left 1 thread running",
    # past the end of c: its page's slack, or (when c ends on a page
    # boundary) an unmapped page
    "4": ("wrote outside every recorded region", "SIGSEGV"),
    "5": "mismatches in 1 output",
}
con = sqlite3.connect(sys.argv[2])
rows = con.execute(
    "SELECT v.genome_key, e.failure, e.message FROM evaluations e JOIN "
    "candidates c ON c.id = e.candidate_id JOIN variants v ON "
    "v.id = c.variant_id WHERE c.level = 'source'").fetchall()
seen = set()
for key, failure, message in rows:
    cheat = key.split("CHEAT=")[1]
    seen.add(cheat)
    if cheat == "0":
        if failure is not None:
            sys.exit("FAIL: the honest variant failed: %s: %s" %
                     (failure, message))
        continue
    if failure not in ("wrong_result", "crashed"):
        sys.exit("FAIL: CHEAT=%s ended as %r: %s" % (cheat, failure, message))
    want = caught[cheat] if isinstance(caught[cheat], tuple) else (caught[cheat],)
    if not any(w in (message or "") for w in want):
        sys.exit("FAIL: CHEAT=%s: the message does not say %r: %s" %
                 (cheat, caught[cheat], message))
    print("CHEAT=%s: %s" % (cheat, failure))
if seen != set(caught) | {"0"}:
    sys.exit("FAIL: variants evaluated: %s" % sorted(seen))
best = json.load(open(sys.argv[1]))["kernels"][0]["best"]["variant"]["genome_key"]
print("best: %s" % best)
if best not in ("file=0,CHEAT=0", "recorded"):
    sys.exit("FAIL: the best is %r" % best)
print("ok")
