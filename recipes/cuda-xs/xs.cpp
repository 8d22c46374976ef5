// cuda-xs: the cross-section lookups of a Monte Carlo neutron transport code.
// A library of NUC nuclides (pointwise energy grids of 1000 to 4000 points,
// each with total and absorption cross sections) and 12 materials of 4 to
// 34 nuclides live in device memory as structs of device pointers
// (xs_library.h). BATCHES batches of N lookups (an energy, log-uniform over
// 1e-5 eV..20 MeV, and a material) are uploaded in turn, one launch of
// xs_lookup a batch, as a transport code looks up cross sections for each
// generation of particles.
//
// The host code uses the CUDA driver API only (no cudart): it loads its
// kernel from the cubin build.sh embeds (xs_cubin.h) with cuModuleLoadData
// and launches it with cuLaunchKernel.
//
//   ./xs [--n N] [--batches K] [--nuclides NUC] [--block B] [--dump DIR]
//
// It checks a sample of every batch's lookups against the same arithmetic
// on the CPU and exits 1 on a mismatch. With --dump DIR it writes raw
// little-endian files for every batch k: DIR/energy-<k>.bin (float64, N),
// DIR/material-<k>.bin (int32, N) as uploaded before launch k, and
// DIR/macro-<k>.bin (float64, 2N: total and absorption of each lookup) as
// launch k left it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <cuda.h>

#include "xs_cubin.h"
#include "xs_library.h"

namespace {
constexpr int Materials = 12;

struct Options {
  int N = 1 << 20, Batches = 4, Nuclides = 68, Block = 128;
  std::string Dump;
};

void check(CUresult R, const char *What) {
  if (R == CUDA_SUCCESS)
    return;
  const char *Text = nullptr;
  cuGetErrorString(R, &Text);
  std::fprintf(stderr, "xs: %s: %s\n", What, Text ? Text : "unknown error");
  std::exit(2);
}

int intArg(const char *Name, const char *Text) {
  int V = std::atoi(Text);
  if (V <= 0) {
    std::fprintf(stderr, "xs: %s expects a positive integer, got '%s'\n", Name,
                 Text);
    std::exit(2);
  }
  return V;
}

Options parse(int Argc, char **Argv) {
  Options O;
  for (int I = 1; I < Argc; I += 2) {
    std::string A = Argv[I];
    if (I + 1 >= Argc) {
      std::fprintf(stderr, "xs: %s needs a value\n", A.c_str());
      std::exit(2);
    }
    if (A == "--n")
      O.N = intArg("--n", Argv[I + 1]);
    else if (A == "--batches")
      O.Batches = intArg("--batches", Argv[I + 1]);
    else if (A == "--nuclides")
      O.Nuclides = intArg("--nuclides", Argv[I + 1]);
    else if (A == "--block")
      O.Block = intArg("--block", Argv[I + 1]);
    else if (A == "--dump")
      O.Dump = Argv[I + 1];
    else {
      std::fprintf(stderr, "xs: unknown option %s\n", A.c_str());
      std::exit(2);
    }
  }
  if (O.Nuclides < 34) {
    std::fprintf(stderr, "xs: --nuclides must be at least 34, got %d\n",
                 O.Nuclides);
    std::exit(2);
  }
  return O;
}

/// A 64-bit linear congruential generator: the same data everywhere.
struct Lcg {
  uint64_t S;
  uint32_t next() {
    S = S * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(S >> 33);
  }
  double uniform() { return (next() + 0.5) / 2147483648.0; } // (0, 1)
};

constexpr double MinEnergy = 1e-5, MaxEnergy = 2e7;

double logUniformEnergy(Lcg &R) {
  return MinEnergy * std::pow(MaxEnergy / MinEnergy, R.uniform());
}

/// The host's copy of the library, in the layout the device gets.
struct HostNuclide {
  std::vector<double> Energy, Xs;
};
struct HostMaterial {
  std::vector<int> Nuclides;
  std::vector<double> Density;
};

HostNuclide makeNuclide(Lcg &R) {
  HostNuclide H;
  int Points = 1000 + int(R.next() % 3001);
  std::set<double> Grid{MinEnergy, MaxEnergy}; // distinct, ascending
  while (int(Grid.size()) < Points)
    Grid.insert(logUniformEnergy(R));
  H.Energy.assign(Grid.begin(), Grid.end());
  for (int P = 0; P < Points; ++P) {
    double Total = 1.0 + 99.0 * R.uniform();
    H.Xs.push_back(Total);
    H.Xs.push_back(Total * R.uniform());
  }
  return H;
}

HostMaterial makeMaterial(Lcg &R, int Nuclides) {
  std::vector<int> All(Nuclides);
  for (int I = 0; I < Nuclides; ++I)
    All[I] = I;
  HostMaterial M;
  int Count = 4 + int(R.next() % 31);
  for (int K = 0; K < Count; ++K) { // a partial Fisher-Yates shuffle
    std::swap(All[K], All[K + R.next() % (Nuclides - K)]);
    M.Nuclides.push_back(All[K]);
    M.Density.push_back(1e-3 + 0.1 * R.uniform());
  }
  return M;
}

template <typename T> CUdeviceptr upload(const std::vector<T> &V) {
  CUdeviceptr D = 0;
  check(cuMemAlloc(&D, V.size() * sizeof(T)), "cuMemAlloc");
  check(cuMemcpyHtoD(D, V.data(), V.size() * sizeof(T)), "cuMemcpyHtoD");
  return D;
}

template <typename T> const T *devicePtr(CUdeviceptr D) {
  return reinterpret_cast<const T *>(static_cast<uintptr_t>(D));
}

/// The library on the device; Allocations holds every buffer it uses.
struct DeviceLibrary {
  CUdeviceptr Root = 0;
  std::vector<CUdeviceptr> Allocations;
};

DeviceLibrary uploadLibrary(const std::vector<HostNuclide> &Nucs,
                            const std::vector<HostMaterial> &Mats) {
  DeviceLibrary D;
  std::vector<Nuclide> NucTable;
  for (const HostNuclide &H : Nucs) {
    CUdeviceptr E = upload(H.Energy), X = upload(H.Xs);
    D.Allocations.insert(D.Allocations.end(), {E, X});
    NucTable.push_back({devicePtr<double>(E), devicePtr<double>(X),
                        int(H.Energy.size()), 0});
  }
  std::vector<Material> MatTable;
  for (const HostMaterial &M : Mats) {
    CUdeviceptr I = upload(M.Nuclides), Rho = upload(M.Density);
    D.Allocations.insert(D.Allocations.end(), {I, Rho});
    MatTable.push_back({devicePtr<int>(I), devicePtr<double>(Rho),
                        int(M.Nuclides.size()), 0});
  }
  CUdeviceptr N = upload(NucTable), M = upload(MatTable);
  Library Root{devicePtr<Nuclide>(N), devicePtr<Material>(M),
               int(Nucs.size()), int(Mats.size())};
  D.Root = upload(std::vector<Library>{Root});
  D.Allocations.insert(D.Allocations.end(), {N, M, D.Root});
  return D;
}

int hostGridIndex(const std::vector<double> &Grid, double E) {
  int Lo = 0, Hi = int(Grid.size()) - 1;
  while (Hi - Lo > 1) {
    int Mid = (Lo + Hi) / 2;
    if (Grid[Mid] > E)
      Hi = Mid;
    else
      Lo = Mid;
  }
  return Lo;
}

/// The CPU's (total, absorption) for one lookup, as the kernel computes it.
void hostLookup(const std::vector<HostNuclide> &Nucs, const HostMaterial &M,
                double E, double Out[2]) {
  Out[0] = Out[1] = 0.0;
  for (size_t K = 0; K < M.Nuclides.size(); ++K) {
    const HostNuclide &Nuc = Nucs[M.Nuclides[K]];
    int J = hostGridIndex(Nuc.Energy, E);
    double F = (E - Nuc.Energy[J]) / (Nuc.Energy[J + 1] - Nuc.Energy[J]);
    for (int C = 0; C < 2; ++C) {
      double Lo = Nuc.Xs[2 * J + C], Hi = Nuc.Xs[2 * J + 2 + C];
      Out[C] += M.Density[K] * (Lo + F * (Hi - Lo));
    }
  }
}

template <typename T>
void dump(const Options &O, const std::string &Name, const std::vector<T> &V) {
  std::string Path = O.Dump + "/" + Name;
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F || std::fwrite(V.data(), sizeof(T), V.size(), F) != V.size()) {
    std::fprintf(stderr, "xs: cannot write %s\n", Path.c_str());
    std::exit(2);
  }
  std::fclose(F);
}

CUfunction loadKernel() {
  check(cuInit(0), "cuInit");
  CUdevice Dev;
  check(cuDeviceGet(&Dev, 0), "cuDeviceGet");
  CUcontext Ctx;
  check(cuDevicePrimaryCtxRetain(&Ctx, Dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(Ctx), "cuCtxSetCurrent");
  // The driver reads the image as an ELF file: give it 8-byte alignment.
  std::vector<uint64_t> Image((sizeof(xs_cubin) + 7) / 8);
  std::memcpy(Image.data(), xs_cubin, sizeof(xs_cubin));
  CUmodule Module;
  check(cuModuleLoadData(&Module, Image.data()), "cuModuleLoadData");
  CUfunction F;
  check(cuModuleGetFunction(&F, Module, "xs_lookup"), "cuModuleGetFunction");
  return F;
}

/// The largest relative difference from the CPU over a sample of a batch.
double batchError(const std::vector<HostNuclide> &Nucs,
                  const std::vector<HostMaterial> &Mats,
                  const std::vector<double> &Energy,
                  const std::vector<int> &MaterialOf,
                  const std::vector<double> &Macro) {
  double MaxErr = 0;
  size_t Stride = std::max<size_t>(1, Energy.size() / 4096);
  for (size_t I = 0; I < Energy.size(); I += Stride) {
    double Want[2];
    hostLookup(Nucs, Mats[MaterialOf[I]], Energy[I], Want);
    for (int C = 0; C < 2; ++C)
      MaxErr = std::fmax(MaxErr, std::fabs(Macro[2 * I + C] - Want[C]) /
                                     std::fabs(Want[C]));
  }
  return MaxErr;
}
} // namespace

int main(int Argc, char **Argv) {
  Options O = parse(Argc, Argv);
  CUfunction Kernel = loadKernel();
  Lcg R{2024};
  std::vector<HostNuclide> Nucs;
  for (int I = 0; I < O.Nuclides; ++I)
    Nucs.push_back(makeNuclide(R));
  std::vector<HostMaterial> Mats;
  for (int M = 0; M < Materials; ++M)
    Mats.push_back(makeMaterial(R, O.Nuclides));
  DeviceLibrary Lib = uploadLibrary(Nucs, Mats);
  std::vector<double> Energy(O.N), Macro(2 * size_t(O.N));
  std::vector<int> MaterialOf(O.N);
  CUdeviceptr DEnergy = upload(Energy), DMaterial = upload(MaterialOf),
              DMacro = upload(Macro);
  unsigned Grid = unsigned((O.N + O.Block - 1) / O.Block);
  double MaxErr = 0;
  for (int B = 0; B < O.Batches; ++B) {
    for (int I = 0; I < O.N; ++I) {
      Energy[I] = logUniformEnergy(R);
      MaterialOf[I] = int(R.next() % Materials);
    }
    check(cuMemcpyHtoD(DEnergy, Energy.data(), Energy.size() * sizeof(double)),
          "cuMemcpyHtoD");
    check(cuMemcpyHtoD(DMaterial, MaterialOf.data(), O.N * sizeof(int)),
          "cuMemcpyHtoD");
    void *Args[] = {&Lib.Root, &DEnergy, &DMaterial, &DMacro, &O.N};
    check(cuLaunchKernel(Kernel, Grid, 1, 1, unsigned(O.Block), 1, 1, 0,
                         nullptr, Args, nullptr),
          "cuLaunchKernel(xs_lookup)");
    check(cuCtxSynchronize(), "xs_lookup");
    check(cuMemcpyDtoH(Macro.data(), DMacro, Macro.size() * sizeof(double)),
          "cuMemcpyDtoH");
    MaxErr = std::fmax(MaxErr, batchError(Nucs, Mats, Energy, MaterialOf,
                                          Macro));
    if (!O.Dump.empty()) {
      std::string K = std::to_string(B);
      dump(O, "energy-" + K + ".bin", Energy);
      dump(O, "material-" + K + ".bin", MaterialOf);
      dump(O, "macro-" + K + ".bin", Macro);
    }
  }
  std::printf("xs: %d lookups x %d batches, %d nuclides, %d materials, max "
              "relative error %.2e\n",
              O.N, O.Batches, O.Nuclides, Materials, MaxErr);
  for (CUdeviceptr P : Lib.Allocations)
    cuMemFree(P);
  for (CUdeviceptr P : {DEnergy, DMaterial, DMacro})
    cuMemFree(P);
  if (!(MaxErr <= 1e-12)) {
    std::fprintf(stderr, "xs: result differs from the CPU's\n");
    return 1;
  }
  return 0;
}
