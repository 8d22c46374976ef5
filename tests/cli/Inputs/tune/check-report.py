#!/usr/bin/env python3
"""check-report.py REPORT.json KERNEL EVALUATIONS: the report of a finished
campaign names the kernel, counts its evaluations, and its best candidate
verified with a positive time and a speedup that is baseline / best."""
import json
import sys

report, kernel, evaluations = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = json.load(open(report))
ks = [k for k in data["kernels"] if k["name"] == kernel]
if len(ks) != 1:
    sys.exit("FAIL: kernel %r not in the report: %r" % (kernel, data))
k = ks[0]
if k["evaluations"] != evaluations:
    sys.exit("FAIL: %d evaluations, expected %d" % (k["evaluations"], evaluations))
if not (k["best_ms"] and k["best_ms"] > 0 and k["baseline_ms"] > 0):
    sys.exit("FAIL: no verified best: %r" % k)
if abs(k["speedup"] - k["baseline_ms"] / k["best_ms"]) > 1e-6 * k["speedup"]:
    sys.exit("FAIL: speedup %r is not baseline/best" % k["speedup"])
if k.get("verified", 0) < 1:
    sys.exit("FAIL: nothing verified: %r" % k)
print("ok: %s best %.4g ms, %.3gx" % (kernel, k["best_ms"], k["speedup"]))
# The lineage ends at the best candidate, and its factors multiply to the
# speedup; by_level splits the same product by level.
lin = k["lineage"]
if lin["steps"][-1]["candidate"] != k["best"]["candidate"]:
    sys.exit("FAIL: the lineage does not end at the best: %r" % lin)
prod = 1.0
for s in lin["steps"]:
    prod *= s["factor"]
by = 1.0
for f in lin["by_level"].values():
    by *= f
if abs(prod - k["speedup"]) > 1e-6 * k["speedup"] or abs(by - prod) > 1e-6 * prod:
    sys.exit("FAIL: lineage factors %r do not give the speedup %r" % (lin, k["speedup"]))
print("lineage: %s" % ", ".join("%s %.3gx" % kv for kv in sorted(lin["by_level"].items())))
# by_operator splits the same product by operator.
byop = 1.0
for f in lin["by_operator"].values():
    byop *= f
if abs(byop - prod) > 1e-6 * prod:
    sys.exit("FAIL: by_operator %r does not give the speedup %r" % (lin["by_operator"], prod))
# The LLM's calls: per kernel and over the campaign, with every outcome
# counted (zeros where the campaign has no LLM operator).
outcomes = {"ok", "llm_invalid", "http_error", "timeout", "bad_response", "cancelled"}
for where, llm in (("kernel", k["llm"]), ("campaign", data["llm"])):
    for key in ("calls", "tokens_in", "tokens_out", "latency_ms_total", "by_outcome"):
        if key not in llm:
            sys.exit("FAIL: %s llm has no %r: %r" % (where, key, llm))
    if set(llm["by_outcome"]) != outcomes or sum(llm["by_outcome"].values()) != llm["calls"]:
        sys.exit("FAIL: %s llm outcomes %r do not count its calls" % (where, llm))
if not isinstance(k["llm"]["best_from_llm"], bool) or k["llm"]["variants"] < 0:
    sys.exit("FAIL: kernel llm %r" % k["llm"])
if sum(m["calls"] for m in data["llm"]["models"]) != data["llm"]["calls"]:
    sys.exit("FAIL: the models' calls do not add up: %r" % data["llm"])
print("llm: %d calls" % k["llm"]["calls"])
