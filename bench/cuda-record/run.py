#!/usr/bin/env python3
"""The CUDA record benchmark: what `r3 record` costs an application.

  run.py --r3 R3 --bin DIR --out DIR [--runs 5] [--sizes 1,4,16] [--long]
         [--tables recipes,long,launches,snapshots] [--budget 450]

DIR (--bin) holds what build.sh built: the five CUDA recipe applications,
snapshot_app and launch_app. The tables, on stdout and in
OUT/cuda-record.txt (--tables picks some, in order):

1. recipes: for each recipe application, the median wall time of --runs
   runs plain, under `r3 record` selecting no kernel (the injection
   library's cost: CUPTI, counting, timing; r3 then exits 1, "no launch ...
   was seen") and recording the launch the recipe's build.sh records, with
   the overhead ratios to the plain run.
2. long (with --long): the same for longer runs of four of them (more
   launches; each checks its result on the CPU step by step, so the CPU's
   share of the run grows too).
3. launches: the launch overhead with no kernel selected: launch_app (K
   launches of a small kernel, nothing on the CPU between them) plain and
   recorded, alternating, with the loop time the application measures
   itself (no start-up in it) and the microseconds recording adds to each
   launch.
4. snapshots: for working sets of 1, 4 and 16 GiB (snapshot_app: buffers of
   256 MiB, launch 0 recorded), the snapshot throughput: the bytes r3
   reports stored ("X stored before and after") over the recorded run's
   median time minus the no-kernel run's, beside the pinned device-to-host
   bandwidth that snapshot_app measured in the same (plain) runs, and their
   ratio; then the rate of a plain writer of as many bytes from memory into
   a file in the same directory (os.write in 64 MiB blocks, one fsync at the
   end, no early writeback: a floor of what this disk takes), and the ratio
   to that.

A row that fails prints its error in the row and the benchmark goes on; the
rows still to run when --budget seconds have passed are skipped, saying so.
Python 3 standard library only.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# Each recipe: the binary, the kernel regex and launch its build.sh records.
RECIPES = [("stencil", "jacobi2d", 3), ("spmv", "spmv_csr", 3),
           ("matmul", "matmul_tiled", 2), ("xs", "xs_lookup", 2),
           ("multi", "react", 2)]
# The same applications run longer (many more launches, bigger problems),
# where start-up no longer hides the per-launch cost of recording.
# Each checks its result on the CPU, step by step, so the CPU's share grows
# with the launches: the sizes stay the defaults, only the step counts grow.
LONG = [("stencil", "jacobi2d", 3, ["--steps", "800"]),
        ("spmv", "spmv_csr", 3, ["--iters", "400"]),
        ("matmul", "matmul_tiled", 2, ["--reps", "30"]),
        ("multi", "react", 2, ["--steps", "60"])]
NO_KERNEL = "no_such_kernel_xyz"
RECORDED = re.compile(r"r3: recorded 1 launch of .* \((\d+) regions, ([0-9.]+) "
                      r"(B|KiB|MiB|GiB|TiB) stored before and after\)")
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
D2H = re.compile(r"pinned d2h ([0-9.]+) GB/s")
LOOP = re.compile(r"launch_app: (\d+) launches in ([0-9.]+) s")


class RowError(Exception):
    pass


def run_once(argv, cwd, accept_no_launch=False, timeout=300):
    """Runs argv; returns (seconds, stdout, stderr) or raises RowError."""
    start = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RowError("%s timed out after %d s" % (os.path.basename(argv[0]), timeout))
    except OSError as e:
        raise RowError("cannot run %s: %s" % (argv[0], e))
    seconds = time.monotonic() - start
    ok = p.returncode == 0 or (accept_no_launch and p.returncode == 1 and
                               "no launch" in p.stderr)
    if not ok:
        last = (p.stderr.strip() or p.stdout.strip() or "no output").splitlines()[-1]
        raise RowError("exit %d: %s" % (p.returncode, last[:160]))
    return seconds, p.stdout, p.stderr


def median_runs(argv, cwd, runs, **kw):
    """The median seconds over runs, and the last run's output."""
    times, out, err = [], "", ""
    for _ in range(runs):
        t, out, err = run_once(argv, cwd, **kw)
        times.append(t)
        for f in os.listdir(cwd):  # captures are not kept
            if f.endswith(".h5"):
                os.unlink(os.path.join(cwd, f))
    return statistics.median(times), out, err


class Bench:
    def __init__(self, args):
        self.args, self.start = args, time.monotonic()
        self.lines = []
        self.work = tempfile.mkdtemp(prefix="cuda-record-", dir=args.out)

    def over_budget(self):
        return time.monotonic() - self.start > self.args.budget

    def emit(self, line):
        print(line, flush=True)
        self.lines.append(line)

    def record(self, kernel, launch, app, max_bytes=None):
        argv = [self.args.r3, "record", "-k", kernel]
        if launch is not None:
            argv += ["--launch", str(launch), "-o", "cap.h5"]
        else:
            argv += ["-o", "none.h5"]
        if max_bytes:
            argv += ["--max-bytes", max_bytes]
        return argv + ["--"] + app

    def recipe_row(self, name, kernel, launch, extra=()):
        app = [os.path.join(self.args.bin, name)] + list(extra)
        runs = self.args.runs
        kw = {"timeout": 90} if extra else {}
        plain, _, _ = median_runs(app, self.work, runs, **kw)
        none, _, _ = median_runs(self.record(NO_KERNEL, None, app), self.work, runs,
                                 accept_no_launch=True, **kw)
        one, _, err = median_runs(self.record(kernel, launch, app), self.work, runs,
                                  **kw)
        m = RECORDED.search(err)
        stored = "%s %s" % (m.group(2), m.group(3)) if m else "?"
        label = " ".join([name] + list(extra))
        return "| %s | %s:%d | %.3f | %.3f | %.3f | %.3f | %.3f | %s |" % (
            label, kernel, launch, plain, none, one, none / plain, one / plain, stored)

    def recipes(self):
        self.emit("Recipe applications: median wall seconds of %d runs" % self.args.runs)
        self.emit("")
        self.emit("| app | recorded launch | plain s | record, no kernel s | "
                  "record, one launch s | no kernel / plain | one launch / plain | "
                  "stored |")
        self.emit("|---|---|---|---|---|---|---|---|")
        for name, kernel, launch in RECIPES:
            self.row(lambda: self.recipe_row(name, kernel, launch),
                     "| %s | %s:%d | %%s |" % (name, kernel, launch))

    def long_recipes(self):
        self.emit("")
        self.emit("Longer runs of the same applications: median wall seconds of "
                  "%d runs" % self.args.runs)
        self.emit("")
        self.emit("| app and arguments | recorded launch | plain s | record, no kernel s | "
                  "record, one launch s | no kernel / plain | one launch / plain | "
                  "stored |")
        self.emit("|---|---|---|---|---|---|---|---|")
        for name, kernel, launch, extra in LONG:
            self.row(lambda: self.recipe_row(name, kernel, launch, extra),
                     "| %s | %s:%d | %%s |" % (" ".join([name] + extra), kernel, launch))

    def launch_row(self, launches):
        """Runs plain and record-no-kernel alternately (the machine's drift
        hits both); the loop times launch_app prints exclude start-up."""
        app = [os.path.join(self.args.bin, "launch_app"), "--launches", str(launches)]
        rec = self.record(NO_KERNEL, None, app)
        walls = {"plain": [], "none": []}
        loops = {"plain": [], "none": []}
        for _ in range(max(self.args.runs, 5)):
            for key, argv in (("plain", app), ("none", rec)):
                t, out, _ = run_once(argv, self.work, accept_no_launch=(key == "none"))
                m = LOOP.search(out)
                if not m:
                    raise RowError("launch_app printed no loop time: %s" % out.strip()[:120])
                walls[key].append(t)
                loops[key].append(float(m.group(2)))
        med = {k: statistics.median(v) for k, v in list(walls.items())}
        lmed = {k: statistics.median(v) for k, v in list(loops.items())}
        per = (lmed["none"] - lmed["plain"]) * 1e6 / launches
        return "| %d | %.3f | %.3f | %.3f | %.4f | %.4f | %.3f | %.2f |" % (
            launches, med["plain"], med["none"], med["none"] / med["plain"],
            lmed["plain"], lmed["none"], lmed["none"] / lmed["plain"], per)

    def launches(self):
        self.emit("")
        self.emit("Launch overhead with no kernel selected (launch_app: a small kernel "
                  "launched K times, nothing between launches): medians of %d "
                  "alternating runs" % max(self.args.runs, 5))
        self.emit("")
        self.emit("| launches | plain wall s | record wall s | wall ratio | plain loop s | "
                  "record loop s | loop ratio | added us per launch |")
        self.emit("|---|---|---|---|---|---|---|---|")
        for k in (20000, 200000):
            self.row(lambda: self.launch_row(k), "| %d | %%s |" % k)

    def snapshot_row(self, gib):
        app = [os.path.join(self.args.bin, "snapshot_app"), "--gib", str(gib)]
        cap = "%dG" % (gib + 1)
        runs = self.args.runs
        plain, out, _ = median_runs(app, self.work, runs)
        m = D2H.search(out)
        if not m:
            raise RowError("snapshot_app printed no bandwidth: %s" % out.strip()[:120])
        d2h = float(m.group(1))
        none, _, _ = median_runs(self.record(NO_KERNEL, None, app, cap), self.work,
                                 runs, accept_no_launch=True)
        one, _, err = median_runs(self.record("touch", 0, app, cap), self.work, runs)
        m = RECORDED.search(err)
        if not m:
            raise RowError("r3 record printed no 'recorded 1 launch' line")
        stored = float(m.group(2)) * UNITS[m.group(3)]
        extra = one - none
        if extra <= 0:
            raise RowError("recording took no longer than not recording "
                           "(%.3f s vs %.3f s)" % (one, none))
        gbps = stored / extra / 1e9
        disk = self.file_rate(int(stored))
        return "| %d | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
            gib, plain, none, one, stored / 1e9, gbps, d2h, gbps / d2h, disk,
            gbps / disk)

    def file_rate(self, size):
        """GB/s of writing size bytes from memory into a file where the
        captures go, with one fsync at the end (no early writeback, which r3
        does: so r3 can beat it). The median of --runs runs."""
        block = os.urandom(1 << 20) * 64
        path = os.path.join(self.work, "ceiling.raw")
        rates = []
        for _ in range(self.args.runs):
            start = time.monotonic()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                left = size
                while left > 0:
                    left -= os.write(fd, block[:min(left, len(block))])
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(path)
            rates.append(size / (time.monotonic() - start) / 1e9)
        return statistics.median(rates)

    def snapshots(self):
        self.emit("")
        self.emit("Snapshot throughput (snapshot_app, 256 MiB buffers, launch 0 "
                  "recorded): median wall seconds of %d runs" % self.args.runs)
        self.emit("")
        self.emit("| working set GiB | plain s | record, no kernel s | record, one "
                  "launch s | stored GB | snapshot GB/s | pinned d2h GB/s | ratio | "
                  "memory to file GB/s | ratio |")
        self.emit("|---|---|---|---|---|---|---|---|---|---|")
        for gib in self.args.sizes:
            self.row(lambda: self.snapshot_row(gib), "| %d | %%s |" % gib)

    def row(self, compute, failed):
        if self.over_budget():
            self.emit(failed % ("skipped: the %d s budget was spent" % self.args.budget))
            return
        try:
            self.emit(compute())
        except RowError as e:
            self.emit(failed % ("error: %s" % e))

    def finish(self):
        shutil.rmtree(self.work, ignore_errors=True)
        self.emit("")
        self.emit("total %.0f s" % (time.monotonic() - self.start))
        path = os.path.join(self.args.out, "cuda-record.txt")
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")
        print("cuda-record: table written to %s" % path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--r3", required=True, help="the r3 binary")
    p.add_argument("--bin", required=True, help="what build.sh built")
    p.add_argument("--out", required=True, help="where the table is written")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--sizes", default="1,4,16",
                   type=lambda s: [int(v) for v in s.split(",")])
    p.add_argument("--tables", default="recipes,long,launches,snapshots",
                   type=lambda s: s.split(","),
                   help="which tables, in order (default all)")
    p.add_argument("--long", action="store_true",
                   help="also the longer runs of the recipe applications")
    p.add_argument("--budget", type=int, default=450,
                   help="seconds after which the remaining rows are skipped")
    args = p.parse_args()
    for t in args.tables:
        if t not in ("recipes", "long", "launches", "snapshots"):
            p.error("--tables: unknown table %r (recipes, long, launches, snapshots)" % t)
    args.r3, args.bin = os.path.abspath(args.r3), os.path.abspath(args.bin)
    os.makedirs(args.out, exist_ok=True)
    for f in [args.r3] + [os.path.join(args.bin, n) for n, _, _ in RECIPES] + [
            os.path.join(args.bin, "snapshot_app"), os.path.join(args.bin, "launch_app")]:
        if not os.access(f, os.X_OK):
            print("cuda-record: warning: %s is not an executable; its rows will "
                  "fail" % f, file=sys.stderr)
    b = Bench(args)
    b.emit("r3 record benchmark: %s" % " ".join(sys.argv[1:]))
    b.emit("")
    tables = {"recipes": b.recipes, "long": b.long_recipes,
              "launches": b.launches, "snapshots": b.snapshots}
    for t in args.tables:
        if t == "long" and not args.long:
            continue
        tables[t]()
    b.finish()


main()
