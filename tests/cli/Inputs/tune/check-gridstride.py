#!/usr/bin/env python3
"""The grid-stride rewrite in a history (tune-rewrite-gridstride.test): the
grid and rewrite events, the grid_per_sm values of candidates whose source
is as written and of those the rewrite made grid-stride, and the best
candidate's rewrite knob, grid and operator."""
import json
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
for kind in ("grid", "rewrite"):
    for (m,) in db.execute("SELECT message FROM events WHERE kind = ? "
                           "ORDER BY id", (kind,)):
        print(kind + ": " + m if kind == "grid" else
              "offered: " + m.split(": ", 1)[1])
events = [m for (m,) in db.execute(
    "SELECT message FROM events WHERE kind = 'rewrite'")]
offered = [k.split(" (")[0] for k in events[0].split(": ", 1)[1].split("; ")]
values = {}
for k in events[0].split(": ", 1)[1].split("; "):
    values[k.split(" (")[0]] = k.rsplit(": ", 1)[1].rstrip(")").split("|")


def stride(genome):
    """The variant's R3_RW_GRIDSTRIDE value, "0" for the recorded code."""
    if genome is None:
        return "0"
    knobs = json.loads(genome).get("knobs", [])
    i = offered.index("R3_RW_GRIDSTRIDE")
    return values["R3_RW_GRIDSTRIDE"][knobs[i]] if i < len(knobs) else "0"


rows = db.execute(
    "SELECT c.id, c.settings_json, v.genome_json, v.operator, e.median_ms "
    "FROM candidates c LEFT JOIN variants v ON v.id = c.variant_id "
    "JOIN evaluations e ON e.candidate_id = c.id WHERE e.verified = 1"
).fetchall()
plain, strided = set(), set()
for _, settings, genome, _, _ in rows:
    g = json.loads(settings or "{}").get("grid_per_sm", 0)
    (strided if stride(genome) != "0" else plain).add(g)
print("grids of candidates not grid-stride:", sorted(plain))
print("grids of grid-stride candidates:", sorted(strided))
# A coarsened variant at the recorded grid runs with the recorded block,
# which its grid follows (the block is in its settings, for r3 run).
coarse = [json.loads(settings or "{}") for _, settings, genome, _, _ in rows
          if stride(genome) in ("2", "4")]
print("coarsened at the recorded grid with a block:", sorted(
    {str(s.get("block")) for s in coarse if not s.get("grid_per_sm")}))
best = min(rows, key=lambda r: r[4])
print("best: R3_RW_GRIDSTRIDE=%s grid_per_sm=%s operator=%s" % (
    stride(best[2]), json.loads(best[1] or "{}").get("grid_per_sm", 0),
    best[3]))
