#!/usr/bin/env python3
"""Checks a capture of recipes/cuda-stencil against the application's own dumps.

  check-cuda-stencil.py R3 CAPTURE DUMP_DIR STEP NX NY

The capture must hold one launch of jacobi2d: launch STEP of the application,
grid and block as the app launches them, a 24-byte parameter buffer
(In, Out, NX, NY), the two device buffers and the two module globals as
regions. The output buffer's post-state must equal DUMP_DIR/step-STEP.bin,
the input buffer's pre-state DUMP_DIR/step-(STEP-1).bin, the input must be
unchanged and the __device__ counter changed. Prints one line per check and
exits 1 on the first failure.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ok(msg):
    print("ok: " + msg)


def expect(cond, msg):
    if not cond:
        fail(msg)
    ok(msg)


def region_bytes(r3, capture, launch, index, phase):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        path = f.name
    try:
        subprocess.run([r3, "inspect", capture, "--dump", "%d:%s" % (launch, index),
                        "--phase", phase, "-o", path], check=True)
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


def main():
    r3, capture, dumps, step, nx, ny = sys.argv[1:7]
    step, nx, ny = int(step), int(nx), int(ny)
    info = json.loads(subprocess.run([r3, "inspect", capture, "--format", "json"],
                                     check=True, capture_output=True).stdout)
    expect(info["backend"] == "cuda", "backend is cuda")
    expect(info["checksums"] == "ok", "checksums verified")
    print("info: device %s, compute %s" % (info["device"]["name"], info["device"]["compute_capability"]))
    kernels = [k for k in info["kernels"] if "jacobi2d" in k["name"]]
    expect(len(kernels) == 1, "one kernel jacobi2d (%s)" % [k["name"] for k in info["kernels"]])
    k = kernels[0]
    expect(k["demangled"].startswith("jacobi2d("), "demangled name " + k["demangled"])
    expect([p["size"] for p in k["params"]] == [8, 8, 4, 4], "parameter sizes 8,8,4,4")
    names = sorted(g["name"] for g in k["globals"])
    expect(names == ["CellsUpdated", "Weights"], "module globals %s" % names)
    expect(k["registers"] > 0, "registers reported (%d)" % k["registers"])
    expect(len(k["launches"]) == 1, "one recorded launch")
    L = k["launches"][0]
    expect(L["ordinal"] == step, "launch ordinal %d" % L["ordinal"])
    expect(L["grid"] == [(nx + 15) // 16, (ny + 15) // 16, 1], "grid %s" % L["grid"])
    expect(L["block"] == [16, 16, 1], "block %s" % L["block"])
    params = bytes.fromhex(L["params_hex"])
    expect(len(params) == 24, "24-byte parameter buffer")
    p_in, p_out, p_nx, p_ny = struct.unpack("<QQii", params)
    expect((p_nx, p_ny) == (nx, ny), "NX, NY parameters %d, %d" % (p_nx, p_ny))
    regions = {r["base"]: r for r in L["region_list"]}
    size = nx * ny * 4
    expect(p_in in regions and regions[p_in]["size"] == size, "input buffer is a region")
    expect(p_out in regions and regions[p_out]["size"] == size, "output buffer is a region")
    r_in, r_out = regions[p_in], regions[p_out]
    expect(r_in["kind"] == "device" and r_out["kind"] == "device", "both of kind device")
    expect(not r_in["changed"], "input buffer unchanged")
    expect(r_out["changed"], "output buffer changed")
    glob = {r["name"]: r for r in L["region_list"] if r["kind"] == "global"}
    expect(sorted(glob) == ["CellsUpdated", "Weights"], "globals recorded as regions")
    expect(glob["CellsUpdated"]["changed"] and not glob["Weights"]["changed"],
           "the counter changed, the weights did not")
    weights = region_bytes(r3, capture, L["index"], "Weights", "pre")
    expect(struct.unpack("<5f", weights) == struct.unpack("<5f", struct.pack(
        "<5f", 0.6, 0.1, 0.1, 0.1, 0.1)), "the __constant__ weights' bytes")
    with open(os.path.join(dumps, "step-%d.bin" % step), "rb") as f:
        want_out = f.read()
    got_out = region_bytes(r3, capture, L["index"], r_out["index"], "post")
    expect(got_out == want_out, "output post-state equals the application's dump of step %d" % step)
    if step > 0:
        with open(os.path.join(dumps, "step-%d.bin" % (step - 1)), "rb") as f:
            want_in = f.read()
        got_in = region_bytes(r3, capture, L["index"], r_in["index"], "pre")
        expect(got_in == want_in, "input pre-state equals the dump of step %d" % (step - 1))
    durations = k["app_launches"]
    print("info: app_launches %d, launch duration_ns %s" % (durations, L["duration_ns"]))
    print("PASS")


main()
