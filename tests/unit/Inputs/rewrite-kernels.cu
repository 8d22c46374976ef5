// Kernels for RewriteTest: loops with and without constant trip counts or
// unroll pragmas, pointers read, written, copied and already const.
__global__ void mix(int n, float *in, float *out, float *inout,
                    const float *c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0;
  for (int j = 0; j < 8; ++j)
    acc += in[(i + j) % n];
#pragma unroll 2
  for (int j = 0; j < n; j++)
    acc += c[j];
  for (int j = i; j < n; j += 7)
    acc += in[j] * c[0];
  if (i < n) {
    out[i] = acc;
    inout[i] += acc;
  }
}

__global__ void escape(float *p, float *q) {
  float *r = p;
  q[0] = p[0];
  r[1] = 2;
}
