#!/usr/bin/env python3
"""run-cuda-gridstride.test: the export's grid_per_sm and rewrite knob, and
whether r3 run launched the tuned kernel at the grid they give: grid_per_sm
times the multiprocessors the application reports, or at the recorded
launch's threads (4194304 in x) over the variant's elements a thread and
its block.
usage: check-grid.py SETTINGS.json RUN.json PLAIN.out"""
import json
import sys

settings = json.load(open(sys.argv[1]))
run = json.load(open(sys.argv[2]))
sms = int(next(line.split()[1] for line in open(sys.argv[3])
               if line.startswith("multiprocessors ")))
per_sm = settings["settings"].get("grid_per_sm", 0)
stride = str(settings.get("rewrites", {}).get("R3_RW_GRIDSTRIDE", 0))
print("export: grid_per_sm", per_sm,
      "as written" if stride == "0" else "R3_RW_GRIDSTRIDE=" + stride)
kernel = next(k for k in run["kernels"] if k["kernel"].startswith("_Z5shade")
              or k["kernel"] == "shade")
print("run:", kernel["outcome"], kernel["launches"], "launches,",
      kernel["verified"], "verified")
block = (settings["settings"].get("block") or [256])[0]
if per_sm:
    expected, rule = per_sm * sms, "grid_per_sm x multiprocessors"
else:
    factor = int(stride) if stride in ("2", "4") else 1
    expected = -(-4194304 // factor // block)
    rule = "the recorded threads over elements a thread and block"
print("grid as the campaign's settings give it:",
      kernel["grid"] == [expected, 1, 1], kernel["grid"], rule)
