# Spack package of r3, built from a checkout of this repository:
#   spack repo add <checkout>/spack
#   spack develop --path <checkout> r3@main
#   spack install r3@main            # +cuda +mpi by default
#   spack install r3@main ~cuda      # host backend only (no GPU toolkit)
from spack.package import *


class R3(CMakePackage):
    """r3 (Record-Remix-Replay): records the inputs of GPU kernel launches in
    unmodified applications, remixes the kernels (source variants, LLVM pass
    pipelines, codegen flags, launch configuration) and replays every candidate
    in isolation, verifying and timing it, under a resumable tuning search."""

    # Built from a checkout (spack develop): there is no release tarball yet.
    version("main")

    variant("cuda", default=True, description="Build the CUDA backend")
    variant("mpi", default=True, description="Multi-node campaigns over MPI")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("ninja", type="build")
    depends_on("llvm@19.1 +clang", type=("build", "link", "run"))
    depends_on("hdf5@1.10: ~mpi")
    depends_on("sqlite@3.31:")
    depends_on("curl")
    depends_on("tomlplusplus@3:")
    depends_on("nlohmann-json@3:")
    depends_on("catch2@2.13:", type="test")
    depends_on("python@3:", type="test")
    depends_on("cuda@12:", when="+cuda")
    depends_on("mpi", when="+mpi")

    generator("ninja")

    def cmake_args(self):
        return [
            self.define_from_variant("R3_WITH_CUDA", "cuda"),
            self.define_from_variant("R3_WITH_MPI", "mpi"),
            self.define("R3_BUILD_TESTS", self.run_tests),
            self.define("R3_BUILD_BENCHMARKS", False),
            self.define("LLVM_DIR", self.spec["llvm"].prefix.lib.cmake.llvm),
        ]
