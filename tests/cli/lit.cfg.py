# lit configuration of r3's CLI tests. Tests run under bash so that a RUN line can
# check an exact exit code: `%r3 ... ; echo "exit=$?"`.
import os
import shutil
import sys

import lit.formats

config.name = "r3-cli"
config.test_format = lit.formats.ShTest(execute_external=True)
# A pipeline's status is FileCheck's: commands expected to fail are piped into it,
# and their exit codes are checked explicitly with `echo "exit=$?"`.
config.pipefail = False
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.r3_binary), "..",
                                     "tests", "cli")
config.excludes = ["Inputs"]

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.environment["NO_COLOR"] = "1"
# Where r3's tools live when they are not where the build found them (a
# GPU machine running scripts/gpu-bundle's folder), and which GPUs to use.
for _var in ("R3_CLANG", "R3_CUDA_PATH", "R3_NVCC", "CUDA_VISIBLE_DEVICES"):
    if _var in os.environ:
        config.environment[_var] = os.environ[_var]
# Under a Spack build (spack install --test=root), PATH leads to Spack's
# compiler wrappers (its ld among them, which clang runs to link the test
# applications), and they refuse to run without their SPACK_* settings,
# which lit would otherwise leave out.
for _var, _value in os.environ.items():
    if _var.startswith("SPACK_"):
        config.environment[_var] = _value
# A running Slurm cluster (scripts/slurm-test-cluster, which scripts/check
# starts): its configuration, for every Slurm command the tests run.
if os.environ.get("SLURM_CONF") and os.path.exists(os.environ["SLURM_CONF"]) \
        and shutil.which("sbatch"):
    config.environment["SLURM_CONF"] = os.environ["SLURM_CONF"]
    config.available_features.add("slurm")
# The machine's MPI settings (a machine without ssh sets the launch agent
# this way, or mpirun refuses to start even ranks on its own node).
for _var in os.environ:
    if _var.startswith(("OMPI_MCA_", "PMIX_MCA_", "PRTE_MCA_")):
        config.environment[_var] = os.environ[_var]

config.substitutions.append(("%r3", config.r3_binary))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%make-host-capture", config.make_capture.replace(
    "r3-make-capture", "r3-make-host-capture")))
config.substitutions.append(("%make-history", config.make_capture.replace(
    "r3-make-capture", "r3-make-history")))
config.substitutions.append(("%make-capture", config.make_capture))
# clang-19, which builds the host-backend test applications.
config.substitutions.append(("%clangxx", config.clang + "++"))
config.substitutions.append(("%clang", config.clang))
config.substitutions.append(("%recipes", os.path.join(config.r3_source_dir, "recipes")))
# A configure of r3's source (cmake-options.test) finds the LLVM and Clang
# this build found.
config.substitutions.append(("%cmake-source", "-S %s -DLLVM_DIR=%s -DClang_DIR=%s" % (
    config.r3_source_dir, getattr(config, "llvm_cmake_dir", ""),
    getattr(config, "clang_cmake_dir", ""))))
# Host-runtime tests build applications against the runtime directly, with
# descriptors written by hand instead of the pass plugin.
config.substitutions.append(("%host-rt-cflags", "-I" + os.path.join(config.r3_source_dir, "src")))
_host_rt_dir = os.path.join(os.path.dirname(os.path.dirname(config.r3_binary)), "lib", "r3")
config.substitutions.append(("%host-rt-link", "-L%s -Wl,-rpath,%s -lr3-host-rt" % (_host_rt_dir, _host_rt_dir)))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

# GPU tests need a device; CPU-only machines skip them visibly (UNSUPPORTED).
if shutil.which("nvidia-smi") and os.path.exists("/dev/nvidia0"):
    config.available_features.add("gpu")
# The HTML report is opened in headless Chromium (Debian's chromium package,
# scripts/install-deps); without it, or with R3_NO_CHROMIUM=1 (install-deps
# --no-chromium), those tests are skipped visibly.
if shutil.which("chromium") and not os.environ.get("R3_NO_CHROMIUM"):
    config.available_features.add("chromium")
    config.substitutions.append(
        ("%chromium", "chromium --headless --no-sandbox --disable-gpu"))
# Sanitizer builds of r3 (scripts/check's second build).
if config.r3_sanitize:
    config.available_features.add("asan")
if config.r3_have_cuda:
    config.available_features.add("cuda-toolkit")
# A build configured with R3_DEFAULT_CUDA_ARCH (Spack's cuda_arch) compiles
# for it when r3 compile is given no --arch.
if getattr(config, "r3_default_cuda_arch", ""):
    config.available_features.add("default-cuda-arch")
    config.substitutions.append(
        ("%default-cuda-arch", config.r3_default_cuda_arch))
# MPI campaigns run under Debian's Open MPI: as root it needs
# --allow-run-as-root, and more ranks than cores --oversubscribe.
# Open MPI's own allocations outlive MPI_Finalize (its components are
# unloaded first), so in the sanitizer build the processes a launcher starts
# run without leak detection (%mpienv); memory errors are still caught.
if getattr(config, "r3_have_mpi", False) and shutil.which("mpirun"):
    config.available_features.add("mpi")
    _mpienv = ("env ASAN_OPTIONS=detect_leaks=0:abort_on_error=0"
               if config.r3_sanitize else "env")
    config.substitutions.append(("%mpienv", _mpienv))
    config.substitutions.append(
        ("%mpirun", _mpienv + " mpirun --oversubscribe --allow-run-as-root"))
# nvcc builds the CUDA test applications (recipes/cuda-*), as users build theirs.
if config.nvcc and os.path.exists(config.nvcc):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", config.nvcc))
