#!/usr/bin/env python3
"""Checks a capture of cuda-vmm.cu against the application's own dumps.

  check-cuda-vmm.py R3 CAPTURE DUMP_DIR [--managed]

The capture must hold one launch of vmm_combine whose parameter buffer
(V, H, N) points at the VMM mapping and at the mapped host buffer, both
recorded as regions at those addresses: the mapping of kind device, whole,
changed, its pre- and post-state equal to the application's dumps; the host
buffer of kind host_mapped, unchanged, its bytes equal to the dump. With
--managed, a managed region is recorded too. Prints one line per check and
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


def expect(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def region_bytes(r3, capture, launch, index, phase):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        path = f.name
    try:
        subprocess.run([r3, "inspect", capture, "--dump", "@%d:%s" % (launch, index),
                        "--phase", phase, "-o", path], check=True)
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


def dump(dumps, name):
    with open(os.path.join(dumps, name), "rb") as f:
        return f.read()


def main():
    r3, capture, dumps = sys.argv[1:4]
    managed = "--managed" in sys.argv[4:]
    with open(os.path.join(dumps, "addresses.txt")) as f:
        vmm_base, vmm_size, host_ptr, host_bytes, n = map(int, f.read().split())
    info = json.loads(subprocess.run([r3, "inspect", capture, "--format", "json"],
                                     check=True, capture_output=True).stdout)
    expect(info["backend"] == "cuda", "backend is cuda")
    expect(info["checksums"] == "ok", "checksums verified")
    kernels = [k for k in info["kernels"] if k["name"] == "vmm_combine"]
    expect(len(kernels) == 1, "one kernel vmm_combine")
    k = kernels[0]
    expect([p["size"] for p in k["params"]] == [8, 8, 4], "parameter sizes 8,8,4")
    expect(len(k["launches"]) == 1, "one recorded launch")
    L = k["launches"][0]
    p_v, p_h, p_n = struct.unpack("<QQi", bytes.fromhex(L["params_hex"])[:20])
    expect((p_v, p_h, p_n) == (vmm_base, host_ptr, n),
           "parameters point at the mapping and the host buffer")
    regions = {r["base"]: r for r in L["region_list"]}
    expect(vmm_base in regions, "the VMM mapping is a region (0x%x)" % vmm_base)
    v = regions[vmm_base]
    expect(v["kind"] == "device", "the mapping is of kind device (%s)" % v["kind"])
    expect(v["size"] == vmm_size, "the mapping's size %d" % v["size"])
    expect(v["changed"], "the mapping changed")
    expect(host_ptr in regions, "the mapped host buffer is a region (0x%x)" % host_ptr)
    h = regions[host_ptr]
    expect(h["kind"] == "host_mapped", "the host buffer is of kind host_mapped (%s)" % h["kind"])
    expect(h["size"] == host_bytes, "the host buffer's size %d" % h["size"])
    expect(not h["changed"], "the host buffer is unchanged")
    expect(region_bytes(r3, capture, L["index"], v["index"], "pre") == dump(dumps, "vmm-pre.bin"),
           "the mapping's pre-state equals the application's")
    expect(region_bytes(r3, capture, L["index"], v["index"], "post") == dump(dumps, "vmm-post.bin"),
           "the mapping's post-state equals what the application computed")
    expect(region_bytes(r3, capture, L["index"], h["index"], "pre") == dump(dumps, "host.bin"),
           "the host buffer's bytes equal the application's")
    kinds = sorted(r["kind"] for r in L["region_list"])
    print("info: region kinds %s" % kinds)
    expect(("managed" in kinds) == managed,
           "a managed region is recorded" if managed else "no managed region")
    print("PASS")


main()
