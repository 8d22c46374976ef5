// cuda-matmul: a dense single-precision matrix multiply, the compute-bound
// core of dense linear algebra and of many a "GEMM-shaped" physics kernel.
// C = A * B for N x N matrices, launched REPS times (as a solver applies
// one operator to several right-hand sides, here the same B each time), C
// cleared before each launch. The matrices hold multiples of 1/8 in
// [-1, 1], so every product and every partial sum is exact in float: any
// summation order, FMA or not, gives the same bits, and the check is exact.
// Built with nvcc and its default static cudart.
//
//   ./matmul [--n N] [--reps R] [--tile T] [--dump DIR]
//
// It checks 512 entries of C against a CPU dot product and exits 1 on a
// mismatch. With --dump DIR it writes raw little-endian float32 files after
// the last launch: DIR/a.bin, DIR/b.bin and DIR/c.bin (N * N values each);
// every launch computes the same C from a cleared buffer.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "matmul_kernel.cu"

namespace {
struct Options {
  int N = 2048, Reps = 3, Tile = 16;
  std::string Dump;
};

void check(cudaError_t E, const char *What) {
  if (E == cudaSuccess)
    return;
  std::fprintf(stderr, "matmul: %s: %s\n", What, cudaGetErrorString(E));
  std::exit(2);
}

int intArg(const char *Name, const char *Text) {
  int V = std::atoi(Text);
  if (V <= 0) {
    std::fprintf(stderr, "matmul: %s expects a positive integer, got '%s'\n",
                 Name, Text);
    std::exit(2);
  }
  return V;
}

Options parse(int Argc, char **Argv) {
  Options O;
  for (int I = 1; I < Argc; I += 2) {
    std::string A = Argv[I];
    if (I + 1 >= Argc) {
      std::fprintf(stderr, "matmul: %s needs a value\n", A.c_str());
      std::exit(2);
    }
    if (A == "--n")
      O.N = intArg("--n", Argv[I + 1]);
    else if (A == "--reps")
      O.Reps = intArg("--reps", Argv[I + 1]);
    else if (A == "--tile")
      O.Tile = intArg("--tile", Argv[I + 1]);
    else if (A == "--dump")
      O.Dump = Argv[I + 1];
    else {
      std::fprintf(stderr, "matmul: unknown option %s\n", A.c_str());
      std::exit(2);
    }
  }
  if (O.Tile > 32) {
    std::fprintf(stderr, "matmul: --tile must be at most 32, got %d\n", O.Tile);
    std::exit(2);
  }
  return O;
}

/// Multiples of 1/8 in [-1, 1] from a linear congruential generator.
std::vector<float> makeMatrix(int N, uint64_t Seed) {
  std::vector<float> M(size_t(N) * N);
  uint64_t S = Seed;
  for (float &V : M) {
    S = S * 6364136223846793005ull + 1442695040888963407ull;
    V = float(int((S >> 33) % 17) - 8) / 8.0f;
  }
  return M;
}

void dump(const Options &O, const char *Name, const std::vector<float> &V) {
  std::string Path = O.Dump + "/" + Name;
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F || std::fwrite(V.data(), sizeof(float), V.size(), F) != V.size()) {
    std::fprintf(stderr, "matmul: cannot write %s\n", Path.c_str());
    std::exit(2);
  }
  std::fclose(F);
}

/// The largest difference between C and a CPU dot product at 512 entries.
double sampledError(const Options &O, const std::vector<float> &A,
                    const std::vector<float> &B, const std::vector<float> &C) {
  double MaxErr = 0;
  uint64_t S = 99;
  for (int Sample = 0; Sample < 512; ++Sample) {
    S = S * 6364136223846793005ull + 1442695040888963407ull;
    size_t I = (S >> 33) % O.N, J = (S >> 13) % O.N;
    double Dot = 0;
    for (int K = 0; K < O.N; ++K)
      Dot += double(A[I * O.N + K]) * B[size_t(K) * O.N + J];
    MaxErr = std::fmax(MaxErr, std::fabs(Dot - C[I * O.N + J]));
  }
  return MaxErr;
}
} // namespace

int main(int Argc, char **Argv) {
  Options O = parse(Argc, Argv);
  size_t Count = size_t(O.N) * O.N, Bytes = Count * sizeof(float);
  std::vector<float> A = makeMatrix(O.N, 1), B = makeMatrix(O.N, 2), C(Count);
  float *DA, *DB, *DC;
  check(cudaMalloc(&DA, Bytes), "cudaMalloc");
  check(cudaMalloc(&DB, Bytes), "cudaMalloc");
  check(cudaMalloc(&DC, Bytes), "cudaMalloc");
  check(cudaMemcpy(DA, A.data(), Bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(DB, B.data(), Bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  int T = O.Tile, G = (O.N + T - 1) / T;
  size_t Shared = 2 * size_t(T) * T * sizeof(float);
  cudaEvent_t Start, Stop;
  check(cudaEventCreate(&Start), "cudaEventCreate");
  check(cudaEventCreate(&Stop), "cudaEventCreate");
  float Ms = 0;
  for (int R = 0; R < O.Reps; ++R) {
    check(cudaMemset(DC, 0, Bytes), "cudaMemset");
    check(cudaEventRecord(Start), "cudaEventRecord");
    matmul_tiled<<<dim3(G, G), dim3(T, T), Shared>>>(DA, DB, DC, O.N);
    check(cudaGetLastError(), "matmul_tiled launch");
    check(cudaEventRecord(Stop), "cudaEventRecord");
    check(cudaEventSynchronize(Stop), "cudaEventSynchronize");
    check(cudaEventElapsedTime(&Ms, Start, Stop), "cudaEventElapsedTime");
  }
  check(cudaMemcpy(C.data(), DC, Bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (!O.Dump.empty()) {
    dump(O, "a.bin", A);
    dump(O, "b.bin", B);
    dump(O, "c.bin", C);
  }
  double MaxErr = sampledError(O, A, B, C);
  std::printf("matmul: n %d, %d launches, tile %d, max error %.2e, last "
              "launch %.3f ms (%.0f GFLOP/s)\n",
              O.N, O.Reps, T, MaxErr, Ms, 2.0 * O.N * O.N * O.N / Ms / 1e6);
  cudaFree(DA);
  cudaFree(DB);
  cudaFree(DC);
  if (!(MaxErr == 0)) {
    std::fprintf(stderr, "matmul: result differs from the CPU's\n");
    return 1;
  }
  return 0;
}
