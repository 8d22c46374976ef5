// Another kernel under the same name, compiled to a cubin that stands in for
// a tuned one in run-cuda-substitute.test: it writes 2, so a launch that ran
// it shows.
extern "C" __global__ void mark(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2;
}
