#!/usr/bin/env python3
"""run-cuda-gridstride.test: the export's grid_per_sm and rewrite knob, and
whether r3 run launched the tuned kernel at grid_per_sm times the
multiprocessors the application reports.
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
print("grid = grid_per_sm x multiprocessors:",
      kernel["grid"] == [per_sm * sms, 1, 1], kernel["grid"], per_sm, sms)
