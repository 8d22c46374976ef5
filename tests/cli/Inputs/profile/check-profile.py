"""Checks an `r3 profile --format json` document: the kernels in order, the
shares, and the ceilings against Amdahl's law computed here."""
import json
import sys

p = json.load(open(sys.argv[1]))
ks = p["kernels"]
print("kernels:", ", ".join(k["name"] for k in ks))
print("shares of kernel time add up to 1:",
      abs(sum(k["share_of_kernel_time"] for k in ks) - 1) < 1e-9)
byname = {k["name"]: k for k in ks}
print("heavy over 10x light:",
      byname["heavy"]["total_ms"] > 10 * byname["light"]["total_ms"])
c = p["ceiling"]
s = sum(k["share_of_run"] for k in ks if k["tunable"])
k = c["per_kernel_speedup"]
print("ceiling if free matches Amdahl:", abs(c["if_free"] - 1 / (1 - s)) < 1e-9)
print("ceiling at %gx matches Amdahl:" % k,
      abs(c["at_per_kernel_speedup"] - 1 / (1 - s + s / k)) < 1e-9)
