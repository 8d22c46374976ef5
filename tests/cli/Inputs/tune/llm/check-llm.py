#!/usr/bin/env python3
"""Checks an LLM campaign (tune-llm.test) from its history, its report and
the test server's log, printing one line per fact for FileCheck.

  check-llm.py [--after=N] HISTORY.db REPORT.json SERVER.jsonl KEY FILE...

SERVER.jsonl is the log of the first run's server (the scripted faults).

FILEs are everything r3 wrote (database files, logs, reports): the API key
must be in none of them.
"""

import json
import sqlite3
import sys


def main():
    args = sys.argv[1:]
    # --after=N: judge the feeding back of failures on calls after the N-th
    # only (those of a resumed run, made once every failure was committed).
    after = 0
    if args and args[0].startswith("--after="):
        after = int(args.pop(0)[len("--after="):])
    db, report_path, server_log, key = args[:4]
    files = args[4:]
    con = sqlite3.connect(db)
    report = json.load(open(report_path))
    k = report["kernels"][0]
    best = k["best"]
    print("best operator:", best["variant"]["operator"] if best["variant"]
          else "recorded")
    print("best from llm in the report:",
          "yes" if k["llm"]["best_from_llm"] and
          k["lineage"]["by_operator"].get("llm", 0) > 1 else "no")
    print("lineage:", " -> ".join("%s %s" % (st["level"], st["operator"])
                                  for st in k["lineage"]["steps"]))
    print("faster:", "yes" if k["speedup"] and k["speedup"] > 1 else "no")

    calls = con.execute("SELECT id, outcome, reason, attempts, variant_id, "
                        "parent_variant_id, prompt_hash, started, "
                        "tokens_in, tokens_out FROM llm_calls ORDER BY id"
                        ).fetchall()
    print("calls:", len(calls))
    by = {}
    for c in calls:
        by[c[1]] = by.get(c[1], 0) + 1
    print("outcomes:", " ".join("%s=%d" % kv for kv in sorted(by.items())))
    reasons = sorted(set(c[2].split(" (")[0] for c in calls
                         if c[1] == "llm_invalid"))
    for r in reasons:
        print("rejected:", r)
    print("retried calls:", sum(1 for c in calls if c[3] > 1))
    print("tokens counted:", "yes" if all(c[8] > 0 and c[9] > 0 for c in calls
                                         if c[1] in ("ok", "llm_invalid"))
          else "no")
    # Every ok call made a variant credited to the llm operator.
    ok_variants = [c[4] for c in calls if c[1] == "ok"]
    ops = {r[0]: r[1] for r in con.execute("SELECT id, operator FROM variants")}
    print("ok calls with an llm variant:",
          sum(1 for v in ok_variants if v is not None and ops.get(v) == "llm"),
          "of", len(ok_variants))

    # The failures of llm variants, by kind.
    fails = con.execute(
        "SELECT e.failure, e.finished, v.parents_json FROM evaluations e "
        "JOIN candidates c ON c.id = e.candidate_id JOIN variants v ON "
        "v.id = c.variant_id WHERE v.operator = 'llm' AND e.verified = 0"
    ).fetchall()
    print("llm variant failures:", " ".join(sorted(set(f[0] for f in fails))))
    # Fed back: a call started after a failure was committed, whose parent
    # descends from (or is) the failed child's parent, carries the failure
    # in its prompt.
    parents_of = {r[0]: json.loads(r[1]) for r in
                  con.execute("SELECT id, parents_json FROM variants")}

    def lineage(v):
        seen, todo = set(), [v]
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo += parents_of.get(x, [])
        return seen

    fed, later = 0, 0
    for kind, finished, parents in fails:
        for c in calls:
            if (c[0] > after and c[7] > finished and
                    lineage(c[5]) & set(json.loads(parents))):
                later += 1
                text = con.execute("SELECT text FROM prompts WHERE hash = ?",
                                   (c[6],)).fetchone()[0]
                fed += ("- %s:" % kind) in text
    print("failures fed back:", "yes" if later and fed == later else
          "no (%d of %d later prompts)" % (fed, later))

    # Retry-After, by the server's own clock: the next attempt of a request
    # that got a 429 arrived no sooner than Retry-After after the reply.
    log = [json.loads(l) for l in open(server_log)]
    for e in log:
        if e.get("status") == 429:
            nxt = [x for x in log if x.get("request") == e["request"] and
                   str(x.get("attempt")) == str(int(e["attempt"]) + 1)]
            gap = nxt[0]["arrived"] - e["replied"] if nxt else -1
            print("retry-after %s s honoured:" % e["retry_after"],
                  "yes" if gap >= float(e["retry_after"]) else
                  "no (gap %.3f s)" % gap)
    print("server saw the key:", "yes" if log and all(
        e.get("auth") == "ok" for e in log) else "no")
    leaked = [f for f in files if key.encode() in open(f, "rb").read()]
    print("key in r3's files:", ", ".join(leaked) if leaked else "none")


if __name__ == "__main__":
    main()
