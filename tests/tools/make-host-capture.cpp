// r3-make-host-capture: writes a host-backend fixture capture for the CLI
// tests. Usage: r3-make-host-capture KIND OUT.h5 (kinds: HostFixtureKinds).
#include "HostCapture.h"

#include <cstdio>

int main(int Argc, char **Argv) {
  if (Argc != 3) {
    std::fprintf(stderr, "usage: r3-make-host-capture KIND OUT.h5 (kinds:");
    for (const char *K : r3::testing::HostFixtureKinds)
      std::fprintf(stderr, " %s", K);
    std::fprintf(stderr, ")\n");
    return 2;
  }
  if (r3::Error E = r3::testing::makeHostCapture(Argv[1], Argv[2])) {
    std::fprintf(stderr, "r3-make-host-capture: %s\n", E.message().c_str());
    return 1;
  }
  return 0;
}
