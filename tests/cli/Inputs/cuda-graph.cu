// A CUDA application that runs a kernel from a CUDA graph, for r3 record's
// test: direct_fill is launched as usual, then graph_scale's launch is
// captured from a stream into a graph, which is launched three times. r3
// does not record graph launches yet, so recording graph_scale is refused
// (at exit, once the activity API has reported the graph's kernels), while
// direct_fill is recorded and the application runs on and checks its result.
//
//   cuda-graph
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" __global__ void direct_fill(float *X, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    X[I] = float(I);
}

extern "C" __global__ void graph_scale(float *X, float Factor, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    X[I] *= Factor;
}

namespace {
void check(cudaError_t E, const char *What) {
  if (E != cudaSuccess) {
    std::fprintf(stderr, "cuda-graph: %s: %s\n", What, cudaGetErrorString(E));
    std::exit(2);
  }
}
} // namespace

int main() {
  const int N = 1024, Blocks = (N + 255) / 256, GraphLaunches = 3;
  float *X = nullptr;
  check(cudaMalloc(&X, N * sizeof(float)), "cudaMalloc");
  direct_fill<<<Blocks, 256>>>(X, N);
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  cudaStream_t S = nullptr;
  check(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking),
        "cudaStreamCreate");
  check(cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal),
        "cudaStreamBeginCapture");
  graph_scale<<<Blocks, 256, 0, S>>>(X, 2.0f, N);
  check(cudaGetLastError(), "capture");
  cudaGraph_t Graph = nullptr;
  check(cudaStreamEndCapture(S, &Graph), "cudaStreamEndCapture");
  cudaGraphExec_t Exec = nullptr;
  check(cudaGraphInstantiate(&Exec, Graph, 0), "cudaGraphInstantiate");
  for (int L = 0; L < GraphLaunches; ++L)
    check(cudaGraphLaunch(Exec, S), "cudaGraphLaunch");
  check(cudaStreamSynchronize(S), "cudaStreamSynchronize");

  std::vector<float> Got(N);
  check(cudaMemcpy(Got.data(), X, N * sizeof(float), cudaMemcpyDeviceToHost),
        "D2H");
  for (int I = 0; I < N; ++I)
    if (Got[I] != 8.0f * float(I)) {
      std::fprintf(stderr, "cuda-graph: wrong result at %d\n", I);
      return 1;
    }
  check(cudaGraphExecDestroy(Exec), "cudaGraphExecDestroy");
  check(cudaGraphDestroy(Graph), "cudaGraphDestroy");
  check(cudaStreamDestroy(S), "cudaStreamDestroy");
  check(cudaFree(X), "cudaFree");
  std::printf("cuda-graph: ok (%d graph launches)\n", GraphLaunches);
  return 0;
}
