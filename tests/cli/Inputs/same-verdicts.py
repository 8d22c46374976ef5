#!/usr/bin/env python3
"""Compares two `r3 replay --format json` outputs (one object per line) of
the same candidates: each must have the same verdict and, for a wrong
result, the same message (what verification found); prints PASS or FAIL per
candidate and for the whole.

  same-verdicts.py A.json B.json"""
import json
import sys


def results(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def main(a, b):
    ra, rb = results(a), results(b)
    ok = len(ra) == len(rb) and len(ra) > 0
    if not ok:
        print(f"FAIL: {len(ra)} results against {len(rb)}")
    for i, (x, y) in enumerate(zip(ra, rb)):
        vx = "verified" if x["verified"] else x["failure"]
        vy = "verified" if y["verified"] else y["failure"]
        same = vx == vy and (vx != "wrong_result" or
                             x.get("message") == y.get("message"))
        ok &= same
        print(f"{'PASS' if same else 'FAIL'}: {i}: {vx}: "
              f"{x.get('message', '')[:200]!r}"
              + ("" if same else f" against {vy}: {y.get('message', '')[:200]!r}"))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
