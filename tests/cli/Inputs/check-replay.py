#!/usr/bin/env python3
"""Checks `r3 replay --format json` output (one object per line, on stdin)
against the expected outcome of each candidate, in order:

  check-replay.py [--require KEY]... OUTCOME...

OUTCOME is `verified` or a failure kind (wrong_result, crashed, timeout,
compile_error, invalid_launch). A verified result must have a median and a
CI; --require names keys that must be present and not null in every
verified result. Prints one PASS or FAIL line per candidate, then PASS or
FAIL for the whole; exits 1 on any failure."""
import json
import sys


def main(argv):
    required, expected = [], []
    it = iter(argv)
    for a in it:
        if a == "--require":
            required.append(next(it))
        else:
            expected.append(a)
    lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
    ok = len(lines) == len(expected)
    if not ok:
        print(f"FAIL: {len(lines)} results, expected {len(expected)}")
    for i, (line, want) in enumerate(zip(lines, expected)):
        r = json.loads(line)
        got = "verified" if r["verified"] else r["failure"]
        why = []
        if got != want:
            why.append(f"got {got}: {r.get('message', '')[:300]}")
        if r["verified"]:
            if r.get("median_ms") is None or r.get("ci95_ms") is None:
                why.append("no median or CI")
            why += [f"no {k}" for k in required if r.get(k) is None]
        src = r.get("source", "recorded")
        desc = f"{i}: {src} {r.get('pipeline')} block {r.get('block')}"
        if why:
            ok = False
            print(f"FAIL {desc}: expected {want}; " + "; ".join(why))
        else:
            print(f"PASS {desc}: {want}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
