#!/usr/bin/env python3
"""check-export.py R3 DIR ORIGINAL: what `r3 export` wrote into DIR holds
up. settings.toml says what settings.json says; the exported source,
compiled with the exported flags and replayed with the exported pipeline
and codegen level, verifies and runs with those settings; and
the exported diff, applied to a copy of ORIGINAL (the kernel's source file),
gives the exported source."""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib

r3, out, original = sys.argv[1:4]
settings = json.load(open(os.path.join(out, "settings.json")))
with open(os.path.join(out, "settings.toml"), "rb") as f:
    toml = tomllib.load(f)


def without_nulls(v):
    if isinstance(v, dict):
        return {k: without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [without_nulls(x) for x in v if x is not None]
    return v


if toml != without_nulls(settings):
    sys.exit("FAIL: settings.toml %r differs from settings.json %r" % (toml, settings))
print("ok: settings.toml and settings.json agree")

# Replay the exported variant as a build system would build it.
cmd = [r3, "replay", settings["capture"], "--format", "json",
       "--pipeline", settings["pipeline"],
       "--codegen-opt", str(settings["codegen_opt"]),
       "--tolerance", settings["verify"]["tolerance"],
       "--warmup", str(settings["evaluation"]["warmup"]),
       "--repetitions", str(settings["evaluation"]["repetitions"])]
if settings["verify"].get("dtype"):
    cmd += ["--dtype", settings["verify"]["dtype"]]
if settings["source"]:
    cmd += ["--source", os.path.join(out, settings["source"]),
            "--cflags", shlex.join(settings["flags"])]
run = subprocess.run(cmd, capture_output=True, text=True)
results = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
if run.returncode != 0 or not results or not all(r["verified"] for r in results):
    sys.exit("FAIL: %s exited %d: %s %s" % (shlex.join(cmd), run.returncode, run.stdout, run.stderr))
# What ran is what the history's best ran: the same pipeline and code
# generation level (times are not compared: they are taken minutes apart on
# a shared machine, and a test must not depend on its load).
for r in results:
    if r["pipeline"] != settings["pipeline"] or \
            r["codegen_opt"] != settings["codegen_opt"]:
        sys.exit("FAIL: the replay ran pipeline %r at -O%s, the export says "
                 "%r at -O%s" % (r["pipeline"], r["codegen_opt"],
                                 settings["pipeline"], settings["codegen_opt"]))
if not settings["median_ms"] > 0:
    sys.exit("FAIL: the export's median_ms is %r" % settings["median_ms"])
print("ok: the replay verifies with the exported pipeline and codegen level")

# The diff takes the original source to the exported one.
if settings["source"]:
    exported = open(os.path.join(out, settings["source"])).read()
    work = tempfile.mkdtemp()
    copy = os.path.join(work, settings["source"])
    shutil.copy(original, copy)
    if settings["diff"]:
        diff = os.path.join(out, settings["diff"])
        subprocess.run(["git", "apply", "--check", diff], cwd=work, check=True)
        subprocess.run(["patch", "-s", "-p1", "-i", diff], cwd=work, check=True)
    elif settings["source_changed"]:
        sys.exit("FAIL: the source changed but there is no diff")
    if open(copy).read() != exported:
        sys.exit("FAIL: the original with %s is not the exported source" % settings["diff"])
    shutil.rmtree(work)
    print("ok: original + diff = exported source (diff: %s)" % settings["diff"])
