#!/usr/bin/env python3
"""Verification on the GPU against verification on the host (a benchmark,
not a test): for each capture, the same candidates replayed in one server
with the GPU's verification kernel (the default: expected bytes on the GPU,
only what runs write restored) and with R3_REPLAY_VERIFY=host (every region
read back and compared on the host at the checked runs, every region
restored before every run), the two modes alternating ROUNDS times.

Per capture: the bytes a launch holds and changes, the median evaluation
time in each mode and their ratio, the restores' time, the kernel-time
fraction (the timed runs' kernel time over the evaluation) and whether both
modes gave the same verdicts.

  run.py --r3 R3 --out DIR [--recipes DIR] [--rounds 3] [--candidates 6]
         [--record NAME=DIR::KERNEL::LAUNCH::COMMAND ...]

--recipes: the CUDA recipes (recipes/ of the source tree), each built with
its build.sh and its recorded launch recorded; --record: any application,
recorded in DIR with `r3 record -k KERNEL --launch LAUNCH -- COMMAND`.
Candidates are the recorded code at its recorded block, CANDIDATES times
(launch-only candidates a campaign would run), 20 timed runs each."""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys

RECIPES = [("stencil", "stencil", "jacobi2d", 3),
           ("spmv", "spmv", "spmv_csr", 3),
           ("matmul", "matmul", "matmul_tiled", 2),
           ("xs", "xs", "xs_lookup", 2),
           ("multi", "multi", "react", 2)]


def sh(cmd, cwd=None, env=None, timeout=900):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def launch_of(r3, cap):
    p = sh([r3, "inspect", cap, "--format", "json", "--no-verify"])
    if p.returncode:
        raise RuntimeError("inspect: " + p.stderr.strip()[-300:])
    info = json.loads(p.stdout)
    for k in info["kernels"]:
        for l in k["launches"]:
            return k, l
    raise RuntimeError("the capture holds no launch")


def replay(r3, cap, kernel, block, candidates, host):
    env = dict(os.environ)
    env.pop("R3_REPLAY_VERIFY", None)
    if host:
        env["R3_REPLAY_VERIFY"] = "host"
    args = [r3, "replay", cap, "--kernel", kernel, "--launch", "@0",
            "--repetitions", "20", "--min-repetitions", "20", "--format",
            "json"]
    for _ in range(candidates):
        args += ["--block", ",".join(str(b) for b in block)]
    p = sh(args, env=env)
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if not rows:
        raise RuntimeError("replay: " + p.stderr.strip()[-300:])
    return rows


def summary(rows):
    # The first candidate also loads the launch (pristine and expected
    # copies) and probes poisoning: the others are a campaign's steady state.
    steady = rows[1:] or rows
    ev = [r["eval_ms"] for r in steady]
    kernel = [sum(r.get("times_ms") or []) for r in steady]
    return {"eval": statistics.median(ev),
            "restore": statistics.median(r.get("restore_ms") or 0
                                         for r in steady),
            "fraction": sum(kernel) / sum(ev) if sum(ev) else None,
            "verdicts": [r["verified"] for r in rows]}


def bench(a, name, cap):
    k, l = launch_of(a.r3, cap)
    kernel = k.get("demangled") or k.get("name")
    runs = {"host": [], "device": []}
    for _ in range(a.rounds):
        for mode in ("device", "host"):
            runs[mode].append(summary(replay(a.r3, cap, kernel, l["block"],
                                             a.candidates, mode == "host")))
    med = {m: {f: statistics.median(r[f] for r in v)
               for f in ("eval", "restore", "fraction")}
           for m, v in runs.items()}
    same = all(r["verdicts"] == runs["host"][0]["verdicts"]
               for v in runs.values() for r in v)
    return {"name": name, "bytes": l.get("bytes"),
            "changed": l.get("changed_bytes"), "host": med["host"],
            "device": med["device"], "same_verdicts": same,
            "verified": runs["device"][0]["verdicts"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--r3", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--recipes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--candidates", type=int, default=6)
    ap.add_argument("--record", action="append", default=[],
                    help="NAME=DIR::KERNEL::LAUNCH::COMMAND")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    work = os.path.join(a.out, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    todo = []
    if a.recipes:
        for name, binary, kernel, launch in RECIPES:
            d = os.path.join(work, "cuda-" + name)
            shutil.copytree(os.path.join(a.recipes, "cuda-" + name), d)
            p = sh(["./build.sh"], cwd=d, env=dict(os.environ, BUILD_ONLY="1"))
            if p.returncode:
                print(f"{name}: build.sh failed: {p.stderr[-300:]}",
                      file=sys.stderr)
                continue
            todo.append((name, d, kernel, launch, ["./" + binary]))
    for spec in a.record:
        name, rest = spec.split("=", 1)
        d, kernel, launch, command = rest.split("::", 3)
        todo.append((name, d, kernel, int(launch), shlex.split(command)))
    rows = []
    for name, d, kernel, launch, command in todo:
        cap = os.path.join(work, name + ".h5")
        p = sh([a.r3, "record", "-k", kernel, "--launch", str(launch), "-o",
                cap, "--"] + command, cwd=d)
        if p.returncode or not os.path.exists(cap):
            print(f"{name}: record failed: {p.stderr.strip()[-300:]}",
                  file=sys.stderr)
            continue
        try:
            r = bench(a, name, cap)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"{name}: {e}", file=sys.stderr)
            continue
        os.remove(cap)
        rows.append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    json.dump(rows, open(os.path.join(a.out, "verify-device.json"), "w"),
              indent=1)
    lines = ["| capture | MB a launch (changed) | eval ms host | eval ms GPU "
             "| host/GPU | restore ms host | restore ms GPU | kernel fraction "
             "host | kernel fraction GPU | same verdicts |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        h, g = r["host"], r["device"]
        lines.append(
            f"| {r['name']} | {r['bytes'] / 1e6:.1f} ({r['changed'] / 1e6:.1f}) "
            f"| {h['eval']:.2f} | {g['eval']:.2f} | {h['eval'] / g['eval']:.2f} "
            f"| {h['restore']:.2f} | {g['restore']:.2f} | {h['fraction']:.3f} "
            f"| {g['fraction']:.3f} | {r['same_verdicts']} |")
    text = "\n".join(lines)
    print(text)
    open(os.path.join(a.out, "verify-device.txt"), "w").write(text + "\n")


if __name__ == "__main__":
    main()
