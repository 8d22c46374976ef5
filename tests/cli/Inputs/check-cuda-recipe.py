#!/usr/bin/env python3
"""Checks a capture of a CUDA recipe (recipes/cuda-*) against the
application's own --dump files.

  check-cuda-recipe.py RECIPE R3 CAPTURE DUMP_DIR LAUNCH SIZES...

  stencil NX NY      jacobi2d, block (16,16,1)
  spmv N BLOCK       spmv_csr
  matmul N TILE      matmul_tiled
  xs N BLOCK NUCLIDES xs_lookup (the driver-API recipe)
  multi N BLOCK      react (two streams, four module globals)

The capture must hold one launch, launch LAUNCH of the application, of the
recipe's kernel: its parameter layout and module globals, the grid and
block the application launches with, a parameter buffer whose scalars are
the application's sizes and whose pointers are recorded regions, an
in-application duration, and regions whose pre- and post-state bytes equal
what the application dumped (each recipe's README says which file holds
which buffer at which launch). Prints one line per check, "PASS" at the
end, and exits 1 on the first failure.
"""
import json
import re
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


def ceil_div(a, b):
    return (a + b - 1) // b


class Capture:
    """The JSON of `r3 inspect` and region bytes through `r3 inspect --dump`."""

    def __init__(self, r3, path, dumps):
        self.r3, self.path, self.dumps = r3, path, dumps
        out = subprocess.run([r3, "inspect", path, "--format", "json"],
                             check=True, capture_output=True).stdout
        self.info = json.loads(out)

    def region(self, launch, region, phase):
        with tempfile.NamedTemporaryFile(delete=False) as f:
            tmp = f.name
        try:
            subprocess.run([self.r3, "inspect", self.path, "--dump",
                            "@%d:%s" % (launch["index"], region), "--phase", phase,
                            "-o", tmp], check=True)
            with open(tmp, "rb") as f:
                return f.read()
        finally:
            os.unlink(tmp)

    def dump(self, name):
        with open(os.path.join(self.dumps, name), "rb") as f:
            return f.read()


class Launch:
    """The recorded launch with its kernel, parameters and regions."""

    def __init__(self, cap, kernel, launch, params):
        self.cap, self.kernel, self.launch, self.params = cap, kernel, launch, params
        self.by_base = {r["base"]: r for r in launch["region_list"]}
        self.globals = {r["name"]: r for r in launch["region_list"]
                        if r["kind"] == "global"}

    def buffer(self, ptr, size, what):
        """The device region a pointer parameter (or field) points to."""
        r = self.by_base.get(ptr)
        expect(r is not None, "%s (0x%x) is a recorded region" % (what, ptr))
        expect(r["kind"] == "device", "%s is of kind device" % what)
        expect(r["size"] == size, "%s holds %d bytes (%d)" % (what, size, r["size"]))
        return r

    def bytes(self, region, phase):
        return self.cap.region(self.launch, region["index"], phase)

    def expect_bytes(self, region, phase, want, what):
        expect(self.bytes(region, phase) == want, "%s's %s-state bytes" % (what, phase))

    def expect_dump(self, region, phase, name, what):
        got = self.bytes(region, phase)
        want = self.cap.dump(name)
        expect(got == want, "%s's %s-state equals the application's %s" % (what, phase, name))

    def expect_unchanged(self, region, what):
        expect(not region["changed"], "%s unchanged by the launch" % what)

    def expect_changed(self, region, what):
        expect(region["changed"], "%s changed by the launch" % what)


def recorded(cap, name, demangled, param_fmt, globals_, ordinal, grid, block,
             shared=0):
    """The checks every recipe shares; returns the recorded Launch."""
    info = cap.info
    expect(info["backend"] == "cuda", "backend is cuda")
    expect(info["checksums"] == "ok", "checksums verified")
    print("info: device %s, compute %s" % (info["device"]["name"],
                                           info["device"]["compute_capability"]))
    dev = info["device"]
    expect(dev["ordinal"] == 0, "device ordinal 0 (%s)" % dev["ordinal"])
    expect(re.match(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]$",
                    dev["pci_bus_id"]) is not None,
           "a PCI bus id (%r)" % dev["pci_bus_id"])
    kernels = [k for k in info["kernels"] if k["name"] == name]
    expect(len(kernels) == 1, "one kernel %s (%s)" % (name, [k["name"] for k in info["kernels"]]))
    k = kernels[0]
    expect(k["demangled"] == demangled, "demangled name '%s'" % k["demangled"])
    sizes = [struct.calcsize("<" + c) for c in param_fmt]
    expect([p["size"] for p in k["params"]] == sizes, "parameter sizes %s" % sizes)
    got_globals = sorted((g["name"], g["size"]) for g in k["globals"])
    expect(got_globals == sorted(globals_), "module globals %s" % got_globals)
    expect(k["registers"] > 0, "registers reported (%d)" % k["registers"])
    expect(k["app_launches"] >= 1 and k["app_mean_duration_ns"] is not None
           and k["app_mean_duration_ns"] > 0,
           "in-application durations: %d launches, mean %s ns" % (
               k["app_launches"], k["app_mean_duration_ns"]))
    expect(len(k["launches"]) == 1, "one recorded launch")
    L = k["launches"][0]
    expect(L["ordinal"] == ordinal, "launch ordinal %d" % L["ordinal"])
    expect(L["grid"] == list(grid), "grid %s" % L["grid"])
    expect(L["block"] == list(block), "block %s" % L["block"])
    expect(L["dynamic_shared_bytes"] == shared, "%d bytes of dynamic shared memory" %
           L["dynamic_shared_bytes"])
    params = bytes.fromhex(L["params_hex"])
    size = struct.calcsize("<" + param_fmt)
    expect(len(params) == size, "%d-byte parameter buffer" % size)
    launch = Launch(cap, k, L, struct.unpack("<" + param_fmt, params))
    expect(sorted(launch.globals) == sorted(n for n, _ in globals_),
           "module globals recorded as regions %s" % sorted(launch.globals))
    print("info: %d regions, launch duration_ns %s" % (len(L["region_list"]),
                                                        L["duration_ns"]))
    return launch


def check_stencil(cap, step, nx, ny):
    L = recorded(cap, "_Z8jacobi2dPKfPfii", "jacobi2d(float const*, float*, int, int)",
                 "QQii", [("CellsUpdated", 8), ("Weights", 20)], step,
                 (ceil_div(nx, 16), ceil_div(ny, 16), 1), (16, 16, 1))
    p_in, p_out, p_nx, p_ny = L.params
    expect((p_nx, p_ny) == (nx, ny), "NX, NY parameters %d, %d" % (p_nx, p_ny))
    r_in = L.buffer(p_in, nx * ny * 4, "In")
    r_out = L.buffer(p_out, nx * ny * 4, "Out")
    L.expect_unchanged(r_in, "In")
    L.expect_changed(r_out, "Out")
    L.expect_changed(L.globals["CellsUpdated"], "the __device__ counter")
    L.expect_unchanged(L.globals["Weights"], "the __constant__ weights")
    L.expect_bytes(L.globals["Weights"], "pre", struct.pack("<5f", 0.6, 0.1, 0.1, 0.1, 0.1),
                   "Weights")
    L.expect_dump(r_out, "post", "step-%d.bin" % step, "Out")
    if step > 0:
        L.expect_dump(r_in, "pre", "step-%d.bin" % (step - 1), "In")


def check_spmv(cap, launch, n, block):
    L = recorded(cap, "_Z8spmv_csrPKiS0_PKfS2_Pfi",
                 "spmv_csr(int const*, int const*, float const*, float const*, float*, int)",
                 "QQQQQi", [], launch, (ceil_div(n, block), 1, 1), (block, 1, 1))
    p_row, p_col, p_val, p_x, p_y, p_n = L.params
    expect(p_n == n, "N parameter %d" % p_n)
    nnz = len(cap.dump("col_idx.bin")) // 4
    print("info: %d nonzeros" % nnz)
    regions = [("RowPtr", p_row, (n + 1) * 4, "row_ptr.bin"),
               ("ColIdx", p_col, nnz * 4, "col_idx.bin"),
               ("Values", p_val, nnz * 4, "values.bin"),
               ("X", p_x, n * 4, "step-%d.bin" % (launch - 1) if launch else "x0.bin")]
    for what, ptr, size, name in regions:
        r = L.buffer(ptr, size, what)
        L.expect_unchanged(r, what)
        L.expect_dump(r, "pre", name, what)
    r_y = L.buffer(p_y, n * 4, "Y")
    L.expect_changed(r_y, "Y")
    L.expect_dump(r_y, "post", "step-%d.bin" % launch, "Y")


def check_matmul(cap, launch, n, tile):
    g = ceil_div(n, tile)
    L = recorded(cap, "_Z12matmul_tiledPKfS0_Pfi",
                 "matmul_tiled(float const*, float const*, float*, int)", "QQQi", [],
                 launch, (g, g, 1), (tile, tile, 1), 2 * tile * tile * 4)
    p_a, p_b, p_c, p_n = L.params
    expect(p_n == n, "N parameter %d" % p_n)
    size = n * n * 4
    for what, ptr, name in [("A", p_a, "a.bin"), ("B", p_b, "b.bin")]:
        r = L.buffer(ptr, size, what)
        L.expect_unchanged(r, what)
        L.expect_dump(r, "pre", name, what)
    r_c = L.buffer(p_c, size, "C")
    L.expect_changed(r_c, "C")
    L.expect_bytes(r_c, "pre", bytes(size), "C (cleared)")
    L.expect_dump(r_c, "post", "c.bin", "C")


def check_xs_library(L, p_lib, nuclides):
    """Follows the pointers stored in device memory, as the kernel does."""
    lib = L.bytes(L.buffer(p_lib, 24, "the Library struct"), "pre")
    p_nucs, p_mats, n_nucs, n_mats = struct.unpack("<QQii", lib)
    expect((n_nucs, n_mats) == (nuclides, 12), "Library counts %d nuclides, %d materials"
           % (n_nucs, n_mats))
    nucs = L.bytes(L.buffer(p_nucs, 24 * nuclides, "Library::Nuclides"), "pre")
    mats = L.bytes(L.buffer(p_mats, 24 * 12, "Library::Materials"), "pre")
    for i in range(nuclides):
        p_e, p_x, points, _ = struct.unpack_from("<QQii", nucs, 24 * i)
        expect(1000 <= points <= 4000, "nuclide %d has %d grid points" % (i, points))
        grid = L.bytes(L.buffer(p_e, points * 8, "nuclide %d's Energy" % i), "pre")
        e = struct.unpack("<%dd" % points, grid)
        expect(all(e[j] < e[j + 1] for j in range(points - 1)),
               "nuclide %d's energy grid is strictly ascending" % i)
        L.buffer(p_x, points * 16, "nuclide %d's Xs" % i)
    for m in range(12):
        p_idx, p_rho, count, _ = struct.unpack_from("<QQii", mats, 24 * m)
        expect(4 <= count <= 34, "material %d has %d nuclides" % (m, count))
        idx = L.bytes(L.buffer(p_idx, count * 4, "material %d's Nuclides" % m), "pre")
        expect(all(0 <= v < nuclides for v in struct.unpack("<%di" % count, idx)),
               "material %d's nuclide indices are in range" % m)
        L.buffer(p_rho, count * 8, "material %d's Density" % m)


def check_xs(cap, launch, n, block, nuclides):
    L = recorded(cap, "xs_lookup", "", "QQQQi", [], launch, (ceil_div(n, block), 1, 1),
                 (block, 1, 1))
    p_lib, p_energy, p_material, p_macro, p_n = L.params
    expect(p_n == n, "N parameter %d" % p_n)
    check_xs_library(L, p_lib, nuclides)
    r_e = L.buffer(p_energy, n * 8, "Energy")
    r_m = L.buffer(p_material, n * 4, "MaterialOf")
    r_out = L.buffer(p_macro, n * 16, "Macro")
    for r, what, name in [(r_e, "Energy", "energy"), (r_m, "MaterialOf", "material")]:
        L.expect_unchanged(r, what)
        L.expect_dump(r, "pre", "%s-%d.bin" % (name, launch), what)
    L.expect_changed(r_out, "Macro")
    if launch > 0:
        L.expect_dump(r_out, "pre", "macro-%d.bin" % (launch - 1), "Macro")
    L.expect_dump(r_out, "post", "macro-%d.bin" % launch, "Macro")


def check_multi(cap, launch, n, block):
    globals_ = [("AdvectWeights", 12), ("DiffuseWeights", 12), ("ReactRates", 8),
                ("CellsDominant", 8)]
    L = recorded(cap, "_Z5reactPKfS0_PfS1_i",
                 "react(float const*, float const*, float*, float*, int)", "QQQQi",
                 globals_, launch, (ceil_div(n, block), 1, 1), (block, 1, 1))
    p_u, p_v, p_uout, p_vout, p_n = L.params
    expect(p_n == n, "N parameter %d" % p_n)
    for what, ptr, name in [("U (UTmp)", p_u, "utmp"), ("V (VTmp)", p_v, "vtmp")]:
        r = L.buffer(ptr, n * 4, what)
        L.expect_unchanged(r, what)
        L.expect_dump(r, "pre", "%s-%d.bin" % (name, launch), what)
    for what, ptr, name in [("UOut (U)", p_uout, "u"), ("VOut (V)", p_vout, "v")]:
        r = L.buffer(ptr, n * 4, what)
        L.expect_changed(r, what)
        if launch > 0:
            L.expect_dump(r, "pre", "%s-%d.bin" % (name, launch - 1), what)
        L.expect_dump(r, "post", "%s-%d.bin" % (name, launch), what)
    constants = {"AdvectWeights": struct.pack("<3f", 0.25, 0.75, 0.0),
                 "DiffuseWeights": struct.pack("<3f", 0.2, 0.6, 0.2),
                 "ReactRates": struct.pack("<2f", 0.02, 0.01)}
    for name, want in constants.items():
        L.expect_unchanged(L.globals[name], "__constant__ " + name)
        L.expect_bytes(L.globals[name], "pre", want, name)
    counter = L.globals["CellsDominant"]
    L.expect_changed(counter, "the __device__ counter")
    if launch > 0:
        L.expect_dump(counter, "pre", "counter-%d.bin" % (launch - 1), "CellsDominant")
    L.expect_dump(counter, "post", "counter-%d.bin" % launch, "CellsDominant")


RECIPES = {"stencil": (check_stencil, 2), "spmv": (check_spmv, 2),
           "matmul": (check_matmul, 2), "xs": (check_xs, 3), "multi": (check_multi, 2)}


def main():
    if len(sys.argv) < 6 or sys.argv[1] not in RECIPES:
        fail("usage: check-cuda-recipe.py %s R3 CAPTURE DUMP_DIR LAUNCH SIZES..."
             % "|".join(RECIPES))
    check, nsizes = RECIPES[sys.argv[1]]
    r3, capture, dumps = sys.argv[2:5]
    numbers = [int(v) for v in sys.argv[5:]]
    if len(numbers) != 1 + nsizes:
        fail("%s takes LAUNCH and %d sizes, got %s" % (sys.argv[1], nsizes, numbers[1:]))
    check(Capture(r3, capture, dumps), *numbers)
    print("PASS")


main()
