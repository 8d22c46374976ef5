// A particle deposit with float atomics: 1M particles add their charge into
// 256 cells with atomicAdd, so each cell's sum depends on the order the
// hardware schedules the adds and differs in its last bits from run to run
// (replay-cuda-determinism.test). Launches `deposit` four times.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void deposit(const float *Charge, const int *Cell, float *Rho,
                        int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    atomicAdd(&Rho[Cell[I]], Charge[I]);
}

int main() {
  const int N = 1 << 20, Cells = 256;
  float *Charge, *Rho;
  int *Cell;
  cudaMallocManaged(&Charge, N * sizeof(float));
  cudaMalloc(&Rho, Cells * sizeof(float));
  cudaMallocManaged(&Cell, N * sizeof(int));
  unsigned X = 12345;
  for (int I = 0; I < N; ++I) {
    X = X * 1103515245u + 12345u;
    Charge[I] = 1.0f + (X >> 8) * 1e-7f;
    Cell[I] = (X >> 4) % Cells;
  }
  float *DCharge;
  int *DCell;
  cudaMalloc(&DCharge, N * sizeof(float));
  cudaMalloc(&DCell, N * sizeof(int));
  cudaMemcpy(DCharge, Charge, N * sizeof(float), cudaMemcpyDefault);
  cudaMemcpy(DCell, Cell, N * sizeof(int), cudaMemcpyDefault);
  for (int Step = 0; Step < 4; ++Step) {
    cudaMemset(Rho, 0, Cells * sizeof(float));
    deposit<<<(N + 255) / 256, 256>>>(DCharge, DCell, Rho, N);
  }
  float Out[Cells];
  cudaMemcpy(Out, Rho, sizeof Out, cudaMemcpyDeviceToHost);
  double Sum = 0;
  for (float V : Out)
    Sum += V;
  std::printf("deposit: %d particles, total charge %.1f\n", N, Sum);
  return cudaGetLastError() != cudaSuccess;
}
