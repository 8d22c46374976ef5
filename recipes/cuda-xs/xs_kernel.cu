// The kernel of cuda-xs, device code only: build.sh compiles it to a cubin
// that the application loads with the driver API, and a variant compiler can
// compile it on its own (clang --cuda-device-only). One thread per lookup:
// the macroscopic total and absorption cross sections of a material at an
// energy, summed over the material's nuclides, each found by binary search
// on that nuclide's energy grid and linearly interpolated, as in the
// cross-section lookup kernels of Monte Carlo neutron transport (XSBench's
// "nuclide grid" method). Irregular, latency-bound, reached through device
// pointers held in device memory. extern "C", so cuModuleGetFunction finds
// it by its plain name. The block size is the launch's:
// grid_x = ceil(N / block_x).
#include "xs_library.h"

/// The index I in [0, Points - 2] with Grid[I] <= E < Grid[I + 1] (clamped).
__device__ int gridIndex(const double *Grid, int Points, double E) {
  int Lo = 0, Hi = Points - 1;
  while (Hi - Lo > 1) {
    int Mid = (Lo + Hi) / 2;
    if (Grid[Mid] > E)
      Hi = Mid;
    else
      Lo = Mid;
  }
  return Lo;
}

extern "C" __global__ void xs_lookup(const Library *Lib, const double *Energy,
                                     const int *MaterialOf, double *Macro,
                                     int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I >= N)
    return;
  double E = Energy[I];
  const Material M = Lib->Materials[MaterialOf[I]];
  double Total = 0.0, Absorption = 0.0;
  for (int K = 0; K < M.Count; ++K) {
    const Nuclide Nuc = Lib->Nuclides[M.Nuclides[K]];
    int J = gridIndex(Nuc.Energy, Nuc.Points, E);
    double F = (E - Nuc.Energy[J]) / (Nuc.Energy[J + 1] - Nuc.Energy[J]);
    const double *Lo = Nuc.Xs + 2 * J, *Hi = Lo + 2;
    Total += M.Density[K] * (Lo[0] + F * (Hi[0] - Lo[0]));
    Absorption += M.Density[K] * (Lo[1] + F * (Hi[1] - Lo[1]));
  }
  Macro[2 * I] = Total;
  Macro[2 * I + 1] = Absorption;
}
