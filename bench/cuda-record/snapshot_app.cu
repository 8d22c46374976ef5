// The application of the record benchmark: a working set of GIB GiB in
// buffers of CHUNK MiB, one launch of `touch` a buffer (it writes every word,
// so every buffer is a live, written allocation when launch 0 is recorded),
// then the pinned device-to-host bandwidth over the same total: every buffer
// copied with cudaMemcpy into one cudaMallocHost buffer of CHUNK MiB. The
// copy runs recorded or not, so it cancels out of the record overhead.
//
//   ./snapshot_app [--gib W] [--chunk-mib C]
//
// Prints "snapshot_app: W GiB in K buffers, pinned d2h X GB/s".
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

__global__ void touch(uint32_t *Words, size_t Count, uint32_t Seed) {
  size_t Stride = size_t(gridDim.x) * blockDim.x;
  for (size_t I = size_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Stride)
    Words[I] = uint32_t(I) * 2654435761u + Seed;
}

namespace {
void check(cudaError_t E, const char *What) {
  if (E == cudaSuccess)
    return;
  std::fprintf(stderr, "snapshot_app: %s: %s\n", What, cudaGetErrorString(E));
  std::exit(2);
}
} // namespace

int main(int Argc, char **Argv) {
  double Gib = 1;
  size_t ChunkMib = 256;
  for (int I = 1; I + 1 < Argc; I += 2) {
    std::string A = Argv[I];
    if (A == "--gib")
      Gib = std::atof(Argv[I + 1]);
    else if (A == "--chunk-mib")
      ChunkMib = std::strtoull(Argv[I + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "snapshot_app: unknown option %s\n", A.c_str());
      return 2;
    }
  }
  size_t Chunk = ChunkMib << 20;
  size_t Total = size_t(Gib * double(1ull << 30));
  if (Chunk == 0 || Total < Chunk) {
    std::fprintf(stderr, "snapshot_app: --gib must be at least one chunk\n");
    return 2;
  }
  size_t Buffers = Total / Chunk;
  std::vector<uint32_t *> Buf(Buffers);
  for (auto &B : Buf)
    check(cudaMalloc(&B, Chunk), "cudaMalloc");
  for (size_t K = 0; K < Buffers; ++K)
    touch<<<1024, 256>>>(Buf[K], Chunk / 4, uint32_t(K));
  check(cudaDeviceSynchronize(), "touch");
  void *Pinned = nullptr;
  check(cudaMallocHost(&Pinned, Chunk), "cudaMallocHost");
  check(cudaMemcpy(Pinned, Buf[0], Chunk, cudaMemcpyDeviceToHost), "warm-up");
  auto Start = std::chrono::steady_clock::now();
  for (size_t K = 0; K < Buffers; ++K)
    check(cudaMemcpy(Pinned, Buf[K], Chunk, cudaMemcpyDeviceToHost),
          "cudaMemcpy");
  double Seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - Start)
                       .count();
  std::printf("snapshot_app: %.3g GiB in %zu buffers, pinned d2h %.2f GB/s\n",
              double(Buffers * Chunk) / double(1ull << 30), Buffers,
              double(Buffers * Chunk) / Seconds / 1e9);
  cudaFreeHost(Pinned);
  for (auto *B : Buf)
    cudaFree(B);
  return 0;
}
