#!/usr/bin/env python3
"""The rewrite operator in a history (tune-rewrite.test): the knobs its
event offered, the variants it made and how many of them compiled and were
verified, and which rewrite knobs those variants set."""
import json
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
events = [m for (m,) in db.execute(
    "SELECT message FROM events WHERE kind = 'rewrite'")]
if len(events) != 1:
    sys.exit("FAIL: expected one rewrite event, got %r" % events)
print("offered: " + events[0].split(": ", 1)[1])
rows = db.execute(
    "SELECT v.id, v.genome_json FROM variants v WHERE v.operator = 'rewrite'"
).fetchall()
ok = db.execute(
    "SELECT count(DISTINCT c.variant_id) FROM candidates c JOIN evaluations e "
    "ON e.candidate_id = c.id JOIN variants v ON v.id = c.variant_id "
    "WHERE v.operator = 'rewrite' AND e.verified = 1").fetchone()[0]
print("rewrite variants: %d, compiled and verified: %d" % (len(rows), ok))
# The offered knobs in the model's order (the genome's knob indices).
offered = [k.split(" (")[0] for k in events[0].split(": ", 1)[1].split("; ")]
names = set()
for _, genome in rows:
    g = json.loads(genome)
    names.update(offered[i] for i, v in enumerate(g.get("knobs", [])) if v)
print("knobs set: " + ", ".join(sorted(names)))
print("ok" if rows and ok else "FAIL")
