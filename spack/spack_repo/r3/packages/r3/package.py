# Spack package of r3. spack/README.md has the whole workflow; in short:
#   spack repo add <checkout>/spack/spack_repo/r3
#   spack install r3                 # from `git` below (see the note there)
# or, from a clone, in an environment:
#   spack env create -d ENV && spack -e ENV add r3@main
#   spack -e ENV develop --path <checkout> r3@main && spack -e ENV install
import os
import re
import shutil

from spack_repo.builtin.build_systems.cmake import CMakePackage, generator
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *


class R3(CMakePackage, CudaPackage):
    """r3 (Record-Remix-Replay): records the inputs of GPU kernel launches in
    unmodified applications, remixes the kernels (source variants, LLVM pass
    pipelines, codegen flags, launch configuration) and replays every candidate
    in isolation, verifying and timing it, under a resumable tuning search."""

    # r3 has no public canonical URL yet. These placeholders (RFC 2606's
    # .invalid never resolves) are replaced in one place, the site's
    # packages.yaml:
    #   packages:
    #     r3:
    #       package_attributes:
    #         git: https://git.example.org/hpc/r3.git
    # A clone needs none of it: `spack develop` (spack/README.md).
    homepage = "https://r3.invalid/"
    git = "https://r3.invalid/r3.git"

    # Placeholder handle: the team's GitHub handles go here before upstreaming.
    maintainers("r3-maintainers")

    license("Apache-2.0 WITH LLVM-exception", checked_by="r3-maintainers")

    version("main", branch="main")

    # CudaPackage brings +cuda (default off, as in hpctoolkit, tau, papi and
    # caliper: the host backend needs no GPU toolkit) and cuda_arch, which
    # becomes the default --arch of `r3 compile` and of the CUDA recipes.
    variant("mpi", default=False, description="Multi-node campaigns over MPI")

    generator("ninja")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")

    # r3 links LLVM and Clang 19.1 and runs clang-19 and its tools at run time
    # (host recipes, the variant compiler). CMake's find_package needs 19.1.
    depends_on("llvm@19.1+clang", type=("build", "link", "run"))
    # Serial HDF5: r3 uses the C API from one process; parallel HDF5 is untried.
    depends_on("hdf5@1.10.5:~mpi", type=("build", "link"))
    depends_on("sqlite@3.31:", type=("build", "link"))
    depends_on("curl", type=("build", "link"))
    depends_on("zlib-api", type=("build", "link"))
    # Header-only libraries.
    depends_on("tomlplusplus@3:", type="build")
    depends_on("nlohmann-json@3:", type="build")
    # CUPTI, NVRTC and nvJitLink are linked; nvcc, ptxas and libdevice run.
    depends_on("cuda@12:", when="+cuda", type=("build", "link", "run"))
    # mpirun starts an MPI campaign: the MPI is needed at run time as well.
    depends_on("mpi", when="+mpi", type=("build", "link", "run"))

    # Build-time tests (--test=root): Catch2 unit tests and the lit suite of
    # the CLI, which needs lit and LLVM's FileCheck and not. Those two come
    # with llvm+utils (Debian: llvm-19-tools); they are not declared as
    # depends_on("llvm+utils", type="test") because the concretizer merges
    # that constraint into the one llvm node even when no test runs, which
    # would reject every llvm external without utils. CMake names them if
    # they are missing.
    depends_on("catch2@2.13:", type="test")
    depends_on("python@3:", type="test")
    depends_on("py-lit", type="test")

    sanity_check_is_file = [
        join_path("bin", "r3"),
        join_path("lib", "r3", "libr3-host-rt.so"),
        join_path("lib", "r3", "r3-host-plugin.so"),
    ]
    sanity_check_is_dir = [join_path("share", "r3")]

    # --- build ---

    def _llvm_cmake_dir(self):
        """LLVM's CMake package. A Debian/Ubuntu external found by `spack
        external find` has the prefix /usr, where LLVM lives under
        lib/llvm-19; a Spack-built LLVM has it under its own prefix."""
        llvm = self.spec["llvm"]
        major = llvm.version.up_to(1)
        for root in (llvm.prefix, join_path(llvm.prefix, "lib", f"llvm-{major}")):
            cmake_dir = join_path(root, "lib", "cmake", "llvm")
            if os.path.isfile(join_path(cmake_dir, "LLVMConfig.cmake")):
                return cmake_dir
        raise InstallError(
            f"r3: error: llvm@{llvm.version}: no lib/cmake/llvm/LLVMConfig.cmake "
            f"under {llvm.prefix} or {llvm.prefix}/lib/llvm-{major}"
        )

    def _llvm_root(self):
        """The directory holding LLVM's bin/ and lib/cmake/ (the external's
        prefix, or /usr/lib/llvm-19 under a /usr prefix)."""
        return os.path.dirname(os.path.dirname(os.path.dirname(self._llvm_cmake_dir())))

    def _default_cuda_arch(self):
        """cuda_arch as R3_DEFAULT_CUDA_ARCH: one architecture, or none."""
        if not self.spec.satisfies("+cuda"):
            return ""
        archs = [a for a in self.spec.variants["cuda_arch"].value if a != "none"]
        # r3 compile targets sm_NN: 90a's family-specific suffix is dropped.
        numbers = sorted({a.rstrip("af") for a in archs}, key=int)
        if len(numbers) > 1:
            tty.warn(
                f"r3: cuda_arch={','.join(archs)} names several architectures: "
                "r3 compile gets no default and needs --arch"
            )
            return ""
        return numbers[0] if numbers else ""

    def cmake_args(self):
        spec = self.spec
        llvm_root = self._llvm_root()
        args = [
            self.define_from_variant("R3_WITH_CUDA", "cuda"),
            self.define_from_variant("R3_WITH_MPI", "mpi"),
            self.define("R3_DEFAULT_CUDA_ARCH", self._default_cuda_arch()),
            self.define("R3_BUILD_TESTS", self.run_tests),
            self.define("R3_BUILD_BENCHMARKS", False),
            self.define("LLVM_DIR", self._llvm_cmake_dir()),
            self.define("Clang_DIR", join_path(llvm_root, "lib", "cmake", "clang")),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define("CUDAToolkit_ROOT", spec["cuda"].prefix))
        if spec.satisfies("+mpi"):
            args.append(self.define("MPI_C_COMPILER", spec["mpi"].mpicc))
        return args

    def check(self):
        """The unit tests (ctest) and the lit suite of the CLI (check-cli),
        which Spack's default check (targets test and check) would miss."""
        with working_dir(self.build_directory):
            ninja = which("ninja", required=True)
            ninja("test")
            ninja("check-cli")

    # --- stand-alone tests (spack test run r3) ---

    @run_after("install")
    def cache_test_recipes(self):
        cache_extra_test_sources(self, [join_path("recipes", "host-matmul")])

    def _r3(self):
        return which(self.prefix.bin.r3, required=True)

    def test_version(self):
        """r3 --version names the version and what this spec asked for"""
        out = self._r3()("--version", output=str.split, error=str.split)
        assert out.startswith("r3 "), f"expected 'r3 VERSION', got {out!r}"
        backends = "host cuda" if self.spec.satisfies("+cuda") else "host"
        assert f"backends: {backends}\n" in out, f"expected backends {backends}, got {out!r}"
        mpi = "on" if self.spec.satisfies("+mpi") else "off"
        assert f"mpi: {mpi}\n" in out, f"expected mpi: {mpi}, got {out!r}"
        arch = self._default_cuda_arch()
        if arch:
            assert f"default cuda arch: sm_{arch}" in out, f"expected sm_{arch}, got {out!r}"

    def test_help(self):
        """r3 help lists the record, replay and tune commands"""
        out = self._r3()("help", output=str.split, error=str.split)
        for command in ("record", "replay", "tune", "report"):
            assert command in out, f"expected '{command}' in r3 help, got {out!r}"

    def test_host_campaign(self):
        """record a bundled host kernel, replay it, tune it for 5 evaluations"""
        recipe = join_path(self.test_suite.current_test_cache_dir, "recipes", "host-matmul")
        work = join_path(os.getcwd(), "host-matmul")
        if os.path.exists(work):
            shutil.rmtree(work)
        shutil.copytree(recipe, work)
        r3 = self._r3()
        env = {"R3": self.prefix.bin.r3, "CC": join_path(self._llvm_root(), "bin", "clang")}
        with working_dir(work):
            with test_part(self, "test_host_campaign_record", purpose="build.sh records matmul"):
                bash = which("bash", required=True)
                out = bash("build.sh", output=str.split, error=str.split, extra_env=env)
                assert "recorded 1 launch of 'matmul'" in out, out
            with test_part(self, "test_host_campaign_replay", purpose="replay verifies"):
                out = r3("replay", "matmul.h5", "--repetitions", "3", output=str.split)
                assert " verified " in out, f"expected a verified replay, got {out!r}"
            with test_part(self, "test_host_campaign_tune", purpose="a 5-evaluation campaign"):
                r3("tune", "campaign.toml", "--budget", "5", output=str.split, error=str.split)
                out = r3("status", "history.db", output=str.split, error=str.split)
                assert re.search(r"^state:\s+complete$", out, re.M), out
                assert re.search(r"^evaluations:\s+5 / 5\b", out, re.M), out
