// r3-make-capture: writes a synthetic capture, or one damaged in a chosen way,
// for the CLI tests. Usage: r3-make-capture KIND OUT.h5 (kinds: see
// FixtureKinds), or r3-make-capture cuda-kernel OUT.h5 KERNEL GRID BLOCK
// PARAM... (one launch of a CUDA kernel: see CudaKernelSpec).
#include "SyntheticCapture.h"

#include <algorithm>
#include <cstdio>
#include <string>

int main(int Argc, char **Argv) {
  if (Argc >= 5 && std::string(Argv[1]) == "cuda-kernel") {
    r3::testing::CudaKernelSpec S{Argv[3],
                                  Argv[4],
                                  Argc > 5 ? Argv[5] : "1",
                                  {Argv + std::min(Argc, 6), Argv + Argc}};
    if (r3::Error E = r3::testing::writeCudaKernelCapture(Argv[2], S)) {
      std::fprintf(stderr, "r3-make-capture: %s\n", E.message().c_str());
      return 1;
    }
    return 0;
  }
  if (Argc != 3) {
    std::fprintf(stderr, "usage: r3-make-capture KIND OUT.h5\n");
    return 2;
  }
  if (r3::Error E = r3::testing::makeCaptureFixture(Argv[1], Argv[2])) {
    std::fprintf(stderr, "r3-make-capture: %s\n", E.message().c_str());
    return 1;
  }
  return 0;
}
