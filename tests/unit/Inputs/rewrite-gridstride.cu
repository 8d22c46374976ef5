// Kernels for RewriteTest's grid-stride rewrite: two that take one element
// per thread (a guarded body, and an early return followed by the rest,
// with a loop of its own), and shapes the rewrite must leave alone.
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}

__global__ void window(const float *in, float *out, unsigned n) {
  float scale = 0.25f;
  const unsigned i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n)
    return;
  float s = 0;
  for (int j = 0; j < 4; ++j)
    s += in[(i + j) % n];
  out[i] = s * scale;
}

// A barrier in the body: threads of a block would leave the loop apart.
__global__ void barrier(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i] += 1;
    __syncthreads();
  }
}

// The index written in the body.
__global__ void bump(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i] = 1;
    i += 1;
  }
}

// Work after the guarded statement.
__global__ void after(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 1;
  p[0] = 2;
}

// Two dimensions guarded together.
__global__ void plane(float *p, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny)
    return;
  p[y * nx + x] = 1;
}

// Strides over its grid already.
__global__ void strided(float *p, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    p[i] = 1;
}

// A bound that changes in the body.
__global__ void shrink(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i] = 1;
    n--;
  }
}

// A bound in a struct passed by value, as XSBench's lookups are.
struct Inputs {
  int lookups;
  int scale;
};
__global__ void lookup(Inputs in, float *out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i >= in.lookups)
    return;
  out[i] = float(in.scale) * i;
}

// A bound read through a pointer, which the body could write.
__global__ void remote(const Inputs *in, float *out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= in->lookups)
    return;
  out[i] = 1;
}

// Returns of the body's own level, as XSBench's kernels for one material
// have: each becomes the loop's continue.
__global__ void select(const int *mat, float *out, int n, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  if (mat[i] != m)
    return;
  if (mat[i] < 0) return;
  out[i] = 2.0f * i;
}

// A return inside a loop of the body would leave that loop, not the
// element.
__global__ void inner(const int *mat, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  for (int j = 0; j < 4; ++j)
    if (mat[j] == i)
      return;
  out[i] = 1;
}
