// r3-make-capture: writes a synthetic capture, or one damaged in a chosen way,
// for the CLI tests. Usage: r3-make-capture KIND OUT.h5 (kinds: see
// FixtureKinds).
#include "SyntheticCapture.h"

#include <cstdio>

int main(int Argc, char **Argv) {
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
