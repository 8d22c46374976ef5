// The launch-overhead application of the record benchmark: K launches of a
// small kernel on one stream, nothing on the CPU between them, so what
// recording adds to each launch (the injection library's callbacks and
// CUPTI's kernel activity records) is all that can differ between runs.
//
//   ./launch_app [--launches K] [--n N]
//
// Prints "launch_app: K launches in S s (U us each)": the loop's own time,
// from the first launch to the synchronize after the last, so start-up and
// exit (CUPTI's initialization, the capture) are not in it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <cuda_runtime.h>

__global__ void relax(float *X, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    X[I] = 0.5f * X[I] + 0.25f;
}

int main(int Argc, char **Argv) {
  long Launches = 20000;
  int N = 1 << 16;
  for (int I = 1; I + 1 < Argc; I += 2) {
    std::string A = Argv[I];
    if (A == "--launches")
      Launches = std::atol(Argv[I + 1]);
    else if (A == "--n")
      N = std::atoi(Argv[I + 1]);
    else {
      std::fprintf(stderr, "launch_app: unknown option %s\n", A.c_str());
      return 2;
    }
  }
  float *X = nullptr;
  if (cudaMalloc(&X, size_t(N) * sizeof(float)) != cudaSuccess ||
      cudaMemset(X, 0, size_t(N) * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "launch_app: cannot allocate\n");
    return 2;
  }
  relax<<<(N + 255) / 256, 256>>>(X, N); // module load and warm-up
  cudaDeviceSynchronize();
  auto Start = std::chrono::steady_clock::now();
  for (long K = 0; K < Launches; ++K)
    relax<<<(N + 255) / 256, 256>>>(X, N);
  cudaError_t E = cudaDeviceSynchronize();
  double S = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           Start)
                 .count();
  if (E != cudaSuccess) {
    std::fprintf(stderr, "launch_app: %s\n", cudaGetErrorString(E));
    return 2;
  }
  std::printf("launch_app: %ld launches in %.4f s (%.3f us each)\n", Launches,
              S, S * 1e6 / double(Launches));
  cudaFree(X);
  return 0;
}
