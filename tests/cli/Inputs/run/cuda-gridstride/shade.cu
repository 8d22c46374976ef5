// One element per thread after a setup every thread repeats
// (run-cuda-gridstride.test): as a grid-stride loop on a grid of a few
// blocks a multiprocessor, each thread pays the setup once for many
// elements. The setup is integer arithmetic that no compiler folds (a
// multiply-add recurrence would fold into one multiply-add once unrolled),
// so every compiler's code gives the same bits and pays for it.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

__global__ void shade(const float *in, float *out, unsigned seed, int n) {
  unsigned h = seed;
  for (int k = 0; k < 512; ++k) {
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
  }
  float c = static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * c;
}

int main() {
  const int n = 1 << 22;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i)
    host[i] = static_cast<float>(i % 1000) * 0.001f;
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  for (int r = 0; r < 4; ++r)
    shade<<<(n + 255) / 256, 256>>>(in, out, 12345u + r, n);
  cudaMemcpy(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaError_t E = cudaGetLastError();
  double Sum = 0;
  for (float V : host)
    Sum += V;
  int Sms = 0;
  cudaDeviceGetAttribute(&Sms, cudaDevAttrMultiProcessorCount, 0);
  std::printf("multiprocessors %d\n", Sms);
  std::printf("%s, checksum %.9e\n", cudaGetErrorString(E), Sum);
  cudaFree(in);
  cudaFree(out);
  return E == cudaSuccess ? 0 : 1;
}
