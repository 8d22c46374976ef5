// cuda-multi's kernels with knobs, device code only: the same three kernels
// as multi_kernels.cu's (same names and parameters, so the same mangled
// names) and the same module globals (the replay binds them by name), with
// preprocessor knobs. Every knob at its first value computes what
// multi_kernels.cu's kernels compute. Each kernel of the campaign compiles
// this file with its own knob values.
//
//   VEC    cells each thread updates, consecutive (1: one a thread, as
//          multi_kernels.cu). With 2 or 4 the thread reads and writes them
//          as one float2 or float4 when the buffers are aligned for it (they
//          are cudaMalloc'd) and one by one otherwise. A block covers
//          blockDim.x * VEC cells and blocks walk the domain in a
//          grid-stride loop, so any grid covers it; under the grid rule
//          (one thread a cell) a block with nothing left to do returns at
//          once.
//   LDG    1: read the inputs through the read-only data cache (__ldg).
//          Every kernel writes buffers that none of its inputs is, so the
//          values read are the same.
//   COUNT  react only, how a block adds its dominant cells to CellsDominant
//          (one atomic a block either way): 0 counts them with
//          __syncthreads_count, once a cell of a thread's VEC (as
//          multi_kernels.cu); 1 sums each warp's count (__ballot_sync and
//          __popc) in shared memory, with two barriers whatever VEC. (Not
//          __reduce_add_sync: clang-19 compiles it to a redux.sync with its
//          operands swapped, an illegal instruction at run time.) An integer
//          sum: the same total whatever the grouping or the block size.
//
// Bitwise: every cell is computed by the same expression as in
// multi_kernels.cu (written the same way, so it contracts into the same
// fused multiply-adds, or none) from the same values: for advect and
// diffuse the left, centre and right cells of the periodic domain; only the
// way they are loaded changes.
#ifndef VEC
#define VEC 1
#endif
#ifndef LDG
#define LDG 0
#endif
#ifndef COUNT
#define COUNT 0
#endif

__constant__ float AdvectWeights[3];  // cells i-1, i, i+1
__constant__ float DiffuseWeights[3]; // cells i-1, i, i+1
__constant__ float ReactRates[2];     // U -> V, V -> U, per step
__device__ unsigned long long CellsDominant;

static __device__ __forceinline__ float load(const float *P) {
#if LDG
  return __ldg(P);
#else
  return *P;
#endif
}

/// Loads VEC consecutive floats from P + I into V: one vector load when
/// Vector is true (P + I is aligned to VEC floats), else one by one. Only
/// the first Count are loaded.
static __device__ __forceinline__ void loadCells(const float *P, int I,
                                                 int Count, bool Vector,
                                                 float (&V)[VEC]) {
#if VEC == 2
  if (Vector) {
    const float2 *Q = reinterpret_cast<const float2 *>(P + I);
#if LDG
    float2 X = __ldg(Q);
#else
    float2 X = *Q;
#endif
    V[0] = X.x;
    V[1] = X.y;
    return;
  }
#elif VEC == 4
  if (Vector) {
    const float4 *Q = reinterpret_cast<const float4 *>(P + I);
#if LDG
    float4 X = __ldg(Q);
#else
    float4 X = *Q;
#endif
    V[0] = X.x;
    V[1] = X.y;
    V[2] = X.z;
    V[3] = X.w;
    return;
  }
#endif
#pragma unroll
  for (int J = 0; J < VEC; ++J)
    V[J] = J < Count ? load(&P[I + J]) : 0.0f;
}

/// Stores the first Count of V to P + I, as loadCells loads.
static __device__ __forceinline__ void storeCells(float *P, int I, int Count,
                                                  bool Vector,
                                                  const float (&V)[VEC]) {
#if VEC == 2
  if (Vector) {
    *reinterpret_cast<float2 *>(P + I) = make_float2(V[0], V[1]);
    return;
  }
#elif VEC == 4
  if (Vector) {
    *reinterpret_cast<float4 *>(P + I) = make_float4(V[0], V[1], V[2], V[3]);
    return;
  }
#endif
#pragma unroll
  for (int J = 0; J < VEC; ++J)
    if (J < Count)
      P[I + J] = V[J];
}

/// Whether every pointer is aligned for VEC-float vectors.
static __device__ __forceinline__ bool aligned(const void *A, const void *B) {
  return ((unsigned long long)A | (unsigned long long)B) %
             (VEC * sizeof(float)) ==
         0;
}

// The three-point periodic stencil of advect and diffuse, with the weights
// W (a __constant__ array, named so that it is read as the original reads
// it). Cell I's value is W[0] * In[I - 1] + W[1] * In[I] + W[2] * In[I + 1]
// with the indices taken around the domain.
#define STENCIL3(W)                                                            \
  const int Tile = blockDim.x * VEC;                                           \
  const bool Aligned = aligned(In, Out);                                       \
  for (int I0 = blockIdx.x * Tile; I0 < N; I0 += gridDim.x * Tile) {          \
    int I = I0 + threadIdx.x * VEC;                                            \
    if (I >= N)                                                                \
      continue;                                                                \
    int Count = min(VEC, N - I);                                               \
    float C[VEC], O[VEC];                                                      \
    loadCells(In, I, Count, Aligned && Count == VEC, C);                      \
    float L = load(&In[I == 0 ? N - 1 : I - 1]);                               \
    float R = load(&In[I + Count - 1 == N - 1 ? 0 : I + Count]);               \
    _Pragma("unroll") for (int J = 0; J < VEC; ++J) {                          \
      float Left = J == 0 ? L : C[J > 0 ? J - 1 : 0];                          \
      float Right = J == Count - 1 ? R : C[J + 1 < VEC ? J + 1 : J];           \
      O[J] = W[0] * Left + W[1] * C[J] + W[2] * Right;                         \
    }                                                                          \
    storeCells(Out, I, Count, Aligned && Count == VEC, O);                    \
  }

__global__ void advect(const float *In, float *Out, int N) {
  STENCIL3(AdvectWeights)
}

__global__ void diffuse(const float *In, float *Out, int N) {
  STENCIL3(DiffuseWeights)
}

__global__ void react(const float *U, const float *V, float *UOut,
                      float *VOut, int N) {
  const int Tile = blockDim.x * VEC;
  const bool Aligned = aligned(U, V) && aligned(UOut, VOut);
  for (int I0 = blockIdx.x * Tile; I0 < N; I0 += gridDim.x * Tile) {
    int I = I0 + threadIdx.x * VEC;
    int Dominant = 0; // cells of this thread where U exceeds V
    if (I < N) {
      int Count = min(VEC, N - I);
      float Uc[VEC], Vc[VEC], Un[VEC], Vn[VEC];
      loadCells(U, I, Count, Aligned && Count == VEC, Uc);
      loadCells(V, I, Count, Aligned && Count == VEC, Vc);
#pragma unroll
      for (int J = 0; J < VEC; ++J) {
        float Flow = ReactRates[0] * Uc[J] - ReactRates[1] * Vc[J];
        Un[J] = Uc[J] - Flow;
        Vn[J] = Vc[J] + Flow;
        Dominant += J < Count && Un[J] > Vn[J];
      }
      storeCells(UOut, I, Count, Aligned && Count == VEC, Un);
      storeCells(VOut, I, Count, Aligned && Count == VEC, Vn);
    }
#if COUNT == 0
    // Every thread of the block, once a cell of the thread's VEC.
    int Sum = 0;
#pragma unroll
    for (int J = 0; J < VEC; ++J)
      Sum += __syncthreads_count(Dominant > J);
    if (threadIdx.x == 0 && Sum > 0)
      atomicAdd(&CellsDominant, (unsigned long long)Sum);
#else
    // Each warp's count, from the lanes of the warp that exist (all 32 but
    // in the last warp of a block whose size is not a multiple of 32).
    __shared__ int BlockSum;
    if (threadIdx.x == 0)
      BlockSum = 0;
    __syncthreads();
    const int Lanes = min(32, int(blockDim.x) - int(threadIdx.x / 32) * 32);
    const unsigned Mask = Lanes == 32 ? 0xffffffffu : (1u << Lanes) - 1;
    int Sum = 0;
#pragma unroll
    for (int J = 0; J < VEC; ++J)
      Sum += __popc(__ballot_sync(Mask, Dominant > J));
    if (threadIdx.x % 32 == 0 && Sum > 0)
      atomicAdd(&BlockSum, Sum);
    __syncthreads();
    if (threadIdx.x == 0 && BlockSum > 0)
      atomicAdd(&CellsDominant, (unsigned long long)BlockSum);
#endif
  }
}
