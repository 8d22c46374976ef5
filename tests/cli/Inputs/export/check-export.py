#!/usr/bin/env python3
"""check-export.py R3 DIR ORIGINAL: what `r3 export` wrote into DIR holds
up. settings.toml says what settings.json says; the exported source,
compiled with the exported flags and replayed with the exported pipeline
and codegen level, verifies and runs about as fast as the history says; and
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
replayed = sum(r["median_ms"] for r in results)
# The history's median and this one are taken minutes apart on a shared,
# noisy machine (other builds and tests run beside this one): only a factor
# of 3 either way says the exported settings are not those of the best.
ratio = replayed / settings["median_ms"]
if not 1 / 3 <= ratio <= 3:
    sys.exit("FAIL: replayed median %.4g ms vs %.4g ms in the history (x%.2f)" %
             (replayed, settings["median_ms"], ratio))
print("ok: the replay verifies, median within x3 of the history's")

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
