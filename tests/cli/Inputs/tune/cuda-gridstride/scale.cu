// One element per thread, as most kernels are written
// (tune-rewrite-gridstride.test): r3's rewrite makes it a grid-stride loop,
// and the grid a search dimension.
__global__ void scale(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = 2.0f * in[i];
  }
}
