// cuda-spmv: the sparse matrix-vector products of a power iteration, the
// kernel at the heart of Krylov solvers and PageRank-style graph codes. A
// CSR matrix of N rows (4 to 28 nonzeros each, half of them near the
// diagonal and half anywhere) multiplies a vector ITERS times, ping-ponging
// between two device vectors, one launch of spmv_csr an iteration. Every
// row's weights are positive and sum to one, so the iterates stay in [0, 1].
// Built with nvcc and linked against the shared cudart (-cudart shared).
//
//   ./spmv [--n N] [--iters K] [--block B] [--dump DIR]
//
// It checks its result against the same products on the CPU and exits 1 on
// a mismatch. With --dump DIR it writes raw little-endian files: the matrix
// (row_ptr.bin int32, col_idx.bin int32, values.bin float32), the starting
// vector (x0.bin float32) and the output vector of every iteration,
// DIR/step-<k>.bin (float32, N values), so tests can compare a capture's
// pre/post-state with what the application itself computed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "spmv_kernel.cu"

namespace {
struct Options {
  int N = 1 << 18, Iters = 8, Block = 256;
  std::string Dump;
};

struct Csr {
  std::vector<int> RowPtr, ColIdx;
  std::vector<float> Values;
};

void check(cudaError_t E, const char *What) {
  if (E == cudaSuccess)
    return;
  std::fprintf(stderr, "spmv: %s: %s\n", What, cudaGetErrorString(E));
  std::exit(2);
}

int intArg(const char *Name, const char *Text) {
  int V = std::atoi(Text);
  if (V <= 0) {
    std::fprintf(stderr, "spmv: %s expects a positive integer, got '%s'\n",
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
      std::fprintf(stderr, "spmv: %s needs a value\n", A.c_str());
      std::exit(2);
    }
    if (A == "--n")
      O.N = intArg("--n", Argv[I + 1]);
    else if (A == "--iters")
      O.Iters = intArg("--iters", Argv[I + 1]);
    else if (A == "--block")
      O.Block = intArg("--block", Argv[I + 1]);
    else if (A == "--dump")
      O.Dump = Argv[I + 1];
    else {
      std::fprintf(stderr, "spmv: unknown option %s\n", A.c_str());
      std::exit(2);
    }
  }
  return O;
}

/// A 64-bit linear congruential generator: the same matrix everywhere.
struct Lcg {
  uint64_t S;
  uint32_t next() {
    S = S * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(S >> 33);
  }
};

Csr makeMatrix(int N) {
  Csr M;
  Lcg R{12345};
  M.RowPtr.push_back(0);
  std::vector<int> Cols;
  std::vector<float> W;
  for (int Row = 0; Row < N; ++Row) {
    int Len = 4 + int(R.next() % 25);
    Cols.clear();
    for (int K = 0; K < Len; ++K) {
      int Near = Row + int(R.next() % 129) - 64;
      int Far = int(R.next() % uint32_t(N));
      int C = K % 2 ? Far : Near;
      Cols.push_back(std::min(std::max(C, 0), N - 1));
    }
    std::sort(Cols.begin(), Cols.end());
    W.clear();
    float Total = 0.0f;
    for (int K = 0; K < Len; ++K) {
      W.push_back(1.0f + float(R.next() % 1024) / 1024.0f);
      Total += W.back();
    }
    for (int K = 0; K < Len; ++K) {
      M.ColIdx.push_back(Cols[K]);
      M.Values.push_back(W[K] / Total);
    }
    M.RowPtr.push_back(int(M.ColIdx.size()));
  }
  return M;
}

std::vector<float> startVector(int N) {
  std::vector<float> X(N);
  Lcg R{777};
  for (int I = 0; I < N; ++I)
    X[I] = float(R.next() % 65536) / 65536.0f;
  return X;
}

void cpuSpmv(const Csr &M, const std::vector<float> &X, std::vector<float> &Y) {
  for (size_t Row = 0; Row + 1 < M.RowPtr.size(); ++Row) {
    float Sum = 0.0f;
    for (int K = M.RowPtr[Row]; K < M.RowPtr[Row + 1]; ++K)
      Sum += M.Values[K] * X[M.ColIdx[K]];
    Y[Row] = Sum;
  }
}

template <typename T>
void dump(const Options &O, const std::string &Name, const std::vector<T> &V) {
  std::string Path = O.Dump + "/" + Name;
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F || std::fwrite(V.data(), sizeof(T), V.size(), F) != V.size()) {
    std::fprintf(stderr, "spmv: cannot write %s\n", Path.c_str());
    std::exit(2);
  }
  std::fclose(F);
}

template <typename T> T *upload(const std::vector<T> &V) {
  T *D = nullptr;
  check(cudaMalloc(&D, V.size() * sizeof(T)), "cudaMalloc");
  check(cudaMemcpy(D, V.data(), V.size() * sizeof(T), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  return D;
}
} // namespace

int main(int Argc, char **Argv) {
  Options O = parse(Argc, Argv);
  Csr M = makeMatrix(O.N);
  std::vector<float> X0 = startVector(O.N), Host(O.N), Ref = X0, Next(O.N);
  if (!O.Dump.empty()) {
    dump(O, "row_ptr.bin", M.RowPtr);
    dump(O, "col_idx.bin", M.ColIdx);
    dump(O, "values.bin", M.Values);
    dump(O, "x0.bin", X0);
  }
  int *RowPtr = upload(M.RowPtr), *ColIdx = upload(M.ColIdx);
  float *Values = upload(M.Values);
  float *Vec[2] = {upload(X0), upload(std::vector<float>(O.N, 0.0f))};
  size_t Bytes = size_t(O.N) * sizeof(float);
  int Grid = (O.N + O.Block - 1) / O.Block;
  for (int K = 0; K < O.Iters; ++K) {
    spmv_csr<<<Grid, O.Block>>>(RowPtr, ColIdx, Values, Vec[K % 2],
                                Vec[(K + 1) % 2], O.N);
    check(cudaGetLastError(), "spmv_csr launch");
    cpuSpmv(M, Ref, Next);
    Ref.swap(Next);
    if (!O.Dump.empty()) {
      check(cudaMemcpy(Host.data(), Vec[(K + 1) % 2], Bytes,
                       cudaMemcpyDeviceToHost),
            "cudaMemcpy");
      dump(O, "step-" + std::to_string(K) + ".bin", Host);
    }
  }
  check(cudaMemcpy(Host.data(), Vec[O.Iters % 2], Bytes,
                   cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  double MaxErr = 0;
  for (int I = 0; I < O.N; ++I)
    MaxErr = std::fmax(MaxErr, std::fabs(double(Host[I]) - Ref[I]));
  std::printf("spmv: %d rows, %zu nonzeros, %d iterations, max error %.2e\n",
              O.N, M.ColIdx.size(), O.Iters, MaxErr);
  for (void *P : {(void *)RowPtr, (void *)ColIdx, (void *)Values,
                  (void *)Vec[0], (void *)Vec[1]})
    cudaFree(P);
  if (!(MaxErr <= 1e-5)) {
    std::fprintf(stderr, "spmv: result differs from the CPU's\n");
    return 1;
  }
  return 0;
}
