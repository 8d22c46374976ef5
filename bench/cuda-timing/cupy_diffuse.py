# A CuPy application for the timing benchmark: a 2-D diffusion step as a
# RawKernel (compiled by NVRTC at run time), ten steps on 1024 x 1024.
import cupy as cp

src = r'''
extern "C" __global__ void diffuse(const float *in, float *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x <= 0 || y <= 0 || x >= n - 1 || y >= n - 1) return;
  int i = y * n + x;
  out[i] = in[i] + 0.1f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n] - 4.0f * in[i]);
}
'''
k = cp.RawKernel(src, "diffuse")
n = 1024
a = cp.random.rand(n * n, dtype=cp.float32)
b = cp.zeros_like(a)
for _ in range(10):
    k(((n + 15) // 16, (n + 15) // 16), (16, 16), (a, b, cp.int32(n)))
    a, b = b, a
cp.cuda.Device().synchronize()
print("diffuse", float(a.sum()))
