// The application of run-cuda-substitute.test: one kernel, `mark`, launched
// three ways (<<<>>> on the default stream, <<<>>> on a stream, and
// cudaLaunchKernelEx with an attribute); after each, the values its output
// holds are counted: the application's own kernel writes 1 everywhere, so
// any other value shows that another kernel ran in its place.
#include <cstdio>
#include <cuda_runtime.h>

extern "C" __global__ void mark(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 1;
}

static int check(const char *how, int *d, int n) {
  static int h[1 << 20];
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  long ones = 0, twos = 0, other = 0;
  for (int i = 0; i < n; ++i)
    (h[i] == 1 ? ones : h[i] == 2 ? twos : other)++;
  std::printf("%s: %s, ones %ld, twos %ld, other %ld\n", how,
              cudaGetErrorString(e), ones, twos, other);
  cudaMemset(d, 0, n * sizeof(int));
  return e != cudaSuccess;
}

int main() {
  int n = 1 << 20, *d = nullptr;
  cudaMalloc(&d, n * sizeof(int));
  cudaMemset(d, 0, n * sizeof(int));
  int bad = 0;
  mark<<<n / 256, 256>>>(d, n);
  bad |= check("default stream", d, n);
  cudaStream_t s;
  cudaStreamCreate(&s);
  mark<<<n / 256, 256, 0, s>>>(d, n);
  bad |= check("stream", d, n);
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(n / 256);
  c.blockDim = dim3(256);
  c.stream = s;
  cudaLaunchAttribute a[1];
  a[0].id = cudaLaunchAttributePriority;
  a[0].val.priority = 0;
  c.attrs = a;
  c.numAttrs = 1;
  cudaLaunchKernelEx(&c, mark, d, n);
  bad |= check("launch-ex", d, n);
  return bad;
}
