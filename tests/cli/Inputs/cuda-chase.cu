// A kernel that reaches its inputs only through pointers stored in device
// memory: gather(Table, N, Out) reads Table[0] and Table[1], two device
// arrays whose addresses no parameter holds, and writes Out. A 64 MiB
// buffer the kernel cannot reach is live beside them, and a __device__
// pointer names a scale factor's buffer.
//
//   cuda-chase
#include <cstdio>
#include <cstdlib>
#include <vector>

__device__ const float *Scale;

__global__ void gather(const float *const *Table, int N, float *Out) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Out[I] = Table[0][I] * *Scale + Table[1][I];
}

static void check(cudaError_t E, const char *What) {
  if (E != cudaSuccess) {
    std::fprintf(stderr, "cuda-chase: %s: %s\n", What, cudaGetErrorString(E));
    std::exit(1);
  }
}

int main() {
  const int N = 1 << 16;
  std::vector<float> A(N), B(N);
  for (int I = 0; I < N; ++I) {
    A[I] = 0.5f * I;
    B[I] = 1.0f + I % 7;
  }
  float *DA, *DB, *DOut, *DScale, *Unreached;
  const float **DTable;
  check(cudaMalloc(&Unreached, 64 << 20), "cudaMalloc");
  check(cudaMemset(Unreached, 0x3c, 64 << 20), "cudaMemset");
  check(cudaMalloc(&DA, N * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&DB, N * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&DOut, N * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&DScale, sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&DTable, 2 * sizeof(float *)), "cudaMalloc");
  float Two = 2.0f;
  const float *Table[2] = {DA, DB};
  check(cudaMemcpy(DA, A.data(), N * sizeof(float), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(DB, B.data(), N * sizeof(float), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(DScale, &Two, sizeof Two, cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(DTable, Table, sizeof Table, cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpyToSymbol(Scale, &DScale, sizeof DScale), "cudaMemcpyToSymbol");
  gather<<<(N + 255) / 256, 256>>>(DTable, N, DOut);
  check(cudaGetLastError(), "launch");
  std::vector<float> Out(N);
  check(cudaMemcpy(Out.data(), DOut, N * sizeof(float), cudaMemcpyDeviceToHost), "copy");
  for (int I = 0; I < N; ++I)
    if (Out[I] != A[I] * 2.0f + B[I]) {
      std::fprintf(stderr, "cuda-chase: element %d: %g\n", I, Out[I]);
      return 1;
    }
  std::printf("cuda-chase: ok\n");
  return 0;
}
