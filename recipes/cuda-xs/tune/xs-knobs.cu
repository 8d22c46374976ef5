// cuda-xs's kernel with knobs, device code only: the same kernel as
// xs_kernel.cu's (extern "C" xs_lookup, the same parameters), with
// preprocessor knobs. Every knob at its first value computes what
// xs_kernel.cu's kernel computes. The structs are xs_library.h's, copied
// here with the same fields in the same order (the same layout), so that
// this file compiles on its own wherever the variant compiler puts it.
//
//   LDG    1: read the library, the energies and the materials through the
//          read-only data cache (__ldg). The kernel writes only Macro, which
//          no other pointer reaches, so the values read are the same.
//   STAGE  1: each block first copies the library's Nuclide and Material
//          structs (68 and 12 in the recipe) into shared memory and reads
//          them from there; a library with more than fits reads global
//          memory as before.
//   ILP    nuclides whose binary searches run side by side (1: one at a
//          time, as xs_kernel.cu). With 2, the searches of nuclides K and
//          K + 1 advance together, so their loads overlap; each search takes
//          the same steps as alone and finds the same index.
//
// Bitwise: the totals start at 0 and add, for K = 0, 1, ... in order, the
// same term computed by the same expressions as xs_kernel.cu (written the
// same way, so they contract into the same fused multiply-adds) from the
// same values; no sum is split or reordered. The block size is the
// launch's: grid_x = ceil(N / block_x), as in xs_kernel.cu.
#ifndef LDG
#define LDG 0
#endif
#ifndef STAGE
#define STAGE 0
#endif
#ifndef ILP
#define ILP 1
#endif

// xs_library.h's structs, field for field.
struct Nuclide {
  const double *Energy; ///< Points values, ascending
  const double *Xs;     ///< Points pairs (total, absorption), interleaved
  int Points;
  int Pad;
};

struct Material {
  const int *Nuclides;   ///< Count indices into Library::Nuclides
  const double *Density; ///< Count atom densities (atoms per barn-cm)
  int Count;
  int Pad;
};

struct Library {
  const Nuclide *Nuclides;
  const Material *Materials;
  int NuclideCount;
  int MaterialCount;
};

static __device__ __forceinline__ double ldD(const double *P) {
#if LDG
  return __ldg(P);
#else
  return *P;
#endif
}

static __device__ __forceinline__ int ldI(const int *P) {
#if LDG
  return __ldg(P);
#else
  return *P;
#endif
}

template <typename T>
static __device__ __forceinline__ T *ldP(T *const *P) {
#if LDG
  return (T *)__ldg((const unsigned long long *)P);
#else
  return *P;
#endif
}

static __device__ __forceinline__ Nuclide ldNuclide(const Nuclide *P) {
  Nuclide N;
  N.Energy = ldP(&P->Energy);
  N.Xs = ldP(&P->Xs);
  N.Points = ldI(&P->Points);
  N.Pad = 0;
  return N;
}

static __device__ __forceinline__ Material ldMaterial(const Material *P) {
  Material M;
  M.Nuclides = ldP(&P->Nuclides);
  M.Density = ldP(&P->Density);
  M.Count = ldI(&P->Count);
  M.Pad = 0;
  return M;
}

/// The index I in [0, Points - 2] with Grid[I] <= E < Grid[I + 1] (clamped).
static __device__ __forceinline__ int gridIndex(const double *Grid, int Points,
                                                double E) {
  int Lo = 0, Hi = Points - 1;
  while (Hi - Lo > 1) {
    int Mid = (Lo + Hi) / 2;
    if (ldD(&Grid[Mid]) > E)
      Hi = Mid;
    else
      Lo = Mid;
  }
  return Lo;
}

/// Two searches at once, each taking the steps gridIndex takes.
static __device__ __forceinline__ void gridIndex2(const double *G0, int P0,
                                                  const double *G1, int P1,
                                                  double E, int &J0, int &J1) {
  int Lo0 = 0, Hi0 = P0 - 1, Lo1 = 0, Hi1 = P1 - 1;
  while (Hi0 - Lo0 > 1 || Hi1 - Lo1 > 1) {
    if (Hi0 - Lo0 > 1) {
      int Mid = (Lo0 + Hi0) / 2;
      if (ldD(&G0[Mid]) > E)
        Hi0 = Mid;
      else
        Lo0 = Mid;
    }
    if (Hi1 - Lo1 > 1) {
      int Mid = (Lo1 + Hi1) / 2;
      if (ldD(&G1[Mid]) > E)
        Hi1 = Mid;
      else
        Lo1 = Mid;
    }
  }
  J0 = Lo0;
  J1 = Lo1;
}

/// Adds nuclide K's term at grid index J, as xs_kernel.cu does.
static __device__ __forceinline__ void accumulate(const Material &M, int K,
                                                  const Nuclide &Nuc, int J,
                                                  double E, double &Total,
                                                  double &Absorption) {
  double F = (E - ldD(&Nuc.Energy[J])) /
             (ldD(&Nuc.Energy[J + 1]) - ldD(&Nuc.Energy[J]));
  const double *Lo = Nuc.Xs + 2 * J, *Hi = Lo + 2;
  double D = ldD(&M.Density[K]);
  double Lo0 = ldD(&Lo[0]), Lo1 = ldD(&Lo[1]);
  double Hi0 = ldD(&Hi[0]), Hi1 = ldD(&Hi[1]);
  Total += D * (Lo0 + F * (Hi0 - Lo0));
  Absorption += D * (Lo1 + F * (Hi1 - Lo1));
}

#if STAGE
#define STAGE_NUCLIDES 256
#define STAGE_MATERIALS 64
#endif

extern "C" __global__ void xs_lookup(const Library *Lib, const double *Energy,
                                     const int *MaterialOf, double *Macro,
                                     int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  const Nuclide *Nuclides = ldP(&Lib->Nuclides);
  const Material *Materials = ldP(&Lib->Materials);
#if STAGE
  __shared__ Nuclide SNuc[STAGE_NUCLIDES];
  __shared__ Material SMat[STAGE_MATERIALS];
  const int NC = ldI(&Lib->NuclideCount), MC = ldI(&Lib->MaterialCount);
  // The same for every thread of the block.
  const bool Staged = NC <= STAGE_NUCLIDES && MC <= STAGE_MATERIALS;
  if (Staged) {
    for (int K = threadIdx.x; K < NC; K += blockDim.x)
      SNuc[K] = ldNuclide(&Nuclides[K]);
    for (int K = threadIdx.x; K < MC; K += blockDim.x)
      SMat[K] = ldMaterial(&Materials[K]);
    __syncthreads();
  }
  // Staged structs are read with plain loads (__ldg reads global memory only).
#define NUCLIDE(K) (Staged ? SNuc[K] : ldNuclide(&Nuclides[K]))
#define MATERIAL(K) (Staged ? SMat[K] : ldMaterial(&Materials[K]))
#else
#define NUCLIDE(K) ldNuclide(&Nuclides[K])
#define MATERIAL(K) ldMaterial(&Materials[K])
#endif
  if (I >= N)
    return;
  double E = ldD(&Energy[I]);
  const Material M = MATERIAL(ldI(&MaterialOf[I]));
  double Total = 0.0, Absorption = 0.0;
  int K = 0;
#if ILP == 2
  for (; K + 1 < M.Count; K += 2) {
    const Nuclide N0 = NUCLIDE(ldI(&M.Nuclides[K]));
    const Nuclide N1 = NUCLIDE(ldI(&M.Nuclides[K + 1]));
    int J0, J1;
    gridIndex2(N0.Energy, N0.Points, N1.Energy, N1.Points, E, J0, J1);
    accumulate(M, K, N0, J0, E, Total, Absorption);
    accumulate(M, K + 1, N1, J1, E, Total, Absorption);
  }
#endif
  for (; K < M.Count; ++K) {
    const Nuclide Nuc = NUCLIDE(ldI(&M.Nuclides[K]));
    int J = gridIndex(Nuc.Energy, Nuc.Points, E);
    accumulate(M, K, Nuc, J, E, Total, Absorption);
  }
  Macro[2 * I] = Total;
  Macro[2 * I + 1] = Absorption;
#undef NUCLIDE
#undef MATERIAL
}
