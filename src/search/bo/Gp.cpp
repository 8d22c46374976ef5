// The exact Gaussian process behind r3's Bayesian optimization (Rasmussen and
// Williams, "Gaussian Processes for Machine Learning", 2006, algorithm 2.1):
// targets are standardized, K + noise I is factored once per fit (or its
// last factor updated, see refactor), and the posterior mean and variance
// come from one triangular solve per query. The
// hyperparameter grid spans length scales from a tenth to twice the feature
// range and noise from nearly none (deterministic lookups) to a tenth of the
// signal (timings on a shared machine).
#include "search/bo/Gp.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace r3::search::bo {

namespace {

constexpr double Pi = 3.14159265358979323846;

double squaredDistance(const Vector &A, const Vector &B) {
  double S = 0;
  for (size_t I = 0; I < A.size(); ++I) {
    double D = A[I] - B[I];
    S += D * D;
  }
  return S;
}

/// The dot product of N doubles, in four independent sums: the compiler
/// may not reorder one sum, and this loop is where predictions spend their
/// time (a triangular solve per query).
double dot(const double *A, const double *B, size_t N) {
  double S0 = 0, S1 = 0, S2 = 0, S3 = 0;
  size_t K = 0;
  for (; K + 4 <= N; K += 4) {
    S0 += A[K] * B[K];
    S1 += A[K + 1] * B[K + 1];
    S2 += A[K + 2] * B[K + 2];
    S3 += A[K + 3] * B[K + 3];
  }
  for (; K < N; ++K)
    S0 += A[K] * B[K];
  return (S0 + S1) + (S2 + S3);
}

/// Solves L v = b in place for lower-triangular L (rows of growing length).
void forwardSolve(const std::vector<Vector> &L, Vector &B) {
  for (size_t I = 0; I < L.size(); ++I)
    B[I] = (B[I] - dot(L[I].data(), B.data(), I)) / L[I][I];
}

/// Solves L^T v = b in place.
void backwardSolve(const std::vector<Vector> &L, Vector &B) {
  for (size_t I = L.size(); I-- > 0;) {
    double S = B[I];
    for (size_t K = I + 1; K < L.size(); ++K)
      S -= L[K][I] * B[K];
    B[I] = S / L[I][I];
  }
}

/// Appends one row to the Cholesky factor L of K, given the new column of K
/// (its covariances with the earlier points, then its own variance): the
/// factor of the grown matrix in O(n^2). False if it is not positive
/// definite.
bool extendCholesky(std::vector<Vector> &L, Vector Column) {
  size_t N = L.size();
  double Diagonal = Column[N];
  Column.resize(N);
  forwardSolve(L, Column);
  for (double V : Column)
    Diagonal -= V * V;
  if (Diagonal <= 0 || !std::isfinite(Diagonal))
    return false;
  Column.push_back(std::sqrt(Diagonal));
  L.push_back(std::move(Column));
  return true;
}

double normalPdf(double X) {
  return std::exp(-0.5 * X * X) / std::sqrt(2 * Pi);
}
double normalCdf(double X) { return 0.5 * std::erfc(-X / std::sqrt(2.0)); }

} // namespace

double Gp::distance2(const Vector &A, const Vector &B) const {
  if (H.Weights.empty())
    return squaredDistance(A, B);
  double S = 0;
  for (size_t I = 0; I < A.size(); ++I) {
    double D = (A[I] - B[I]) * H.Weights[I];
    S += D * D;
  }
  return S;
}

double Gp::matern(double Distance2) const {
  double R = std::sqrt(Distance2) / H.LengthScale;
  double S = std::sqrt(5.0) * R;
  return H.Signal * (1 + S + S * S / 3) * std::exp(-S);
}

double Gp::kernel(const Vector &A, const Vector &B) const {
  return matern(distance2(A, B));
}

/// A kernel matrix with what it was computed from: the rows, and the
/// kernel's own hyperparameters (the noise only adds to the diagonal).
struct KernelMatrix {
  std::vector<Vector> Xs;
  GpHyper Hyper;
  Vector K; ///< packed lower triangle: row J at J (J + 1) / 2, up to J
};

namespace {

/// Whether A and B give the same kernel (their noise aside).
bool sameKernel(const GpHyper &A, const GpHyper &B) {
  return A.LengthScale == B.LengthScale && A.Signal == B.Signal &&
         A.Weights == B.Weights;
}

bool sameHyper(const GpHyper &A, const GpHyper &B) {
  return sameKernel(A, B) && A.Noise == B.Noise;
}

/// Rows by their exact bits, to find a row of an earlier matrix.
struct RowHash {
  size_t operator()(const Vector *V) const {
    uint64_t H = 1469598103934665603ull;
    for (double D : *V) {
      H ^= std::bit_cast<uint64_t>(D);
      H *= 1099511628211ull;
    }
    return H;
  }
};
struct RowEqual {
  bool operator()(const Vector *A, const Vector *B) const {
    return A->size() == B->size() &&
           std::memcmp(A->data(), B->data(), A->size() * sizeof(double)) == 0;
  }
};

/// Each row of Rows by its bits, at its first position; Repeated tells
/// whether a row occurs twice.
std::unordered_map<const Vector *, size_t, RowHash, RowEqual>
rowPositions(const std::vector<Vector> &Rows, bool &Repeated) {
  std::unordered_map<const Vector *, size_t, RowHash, RowEqual> Where;
  Repeated = false;
  for (size_t I = 0; I < Rows.size(); ++I)
    Repeated |= !Where.emplace(&Rows[I], I).second;
  return Where;
}

} // namespace

std::shared_ptr<const KernelMatrix> Gp::kernelMatrix() {
  auto M = std::make_shared<KernelMatrix>();
  M->Xs = Xs;
  M->Hyper = H;
  size_t N = Xs.size();
  M->K.resize(N * (N + 1) / 2);
  // Each row's place in the earlier matrix, if it has one: the kernel is a
  // function of the two rows alone and symmetric to the bit (the squared
  // differences do not see their sign), so an entry computed before is
  // the entry computed now, whichever rows it sat at.
  std::vector<size_t> Old(N, SIZE_MAX);
  if (Known && sameKernel(Known->Hyper, H)) {
    bool Repeated;
    auto Where = rowPositions(Known->Xs, Repeated);
    for (size_t J = 0; J < N; ++J)
      if (auto It = Where.find(&Xs[J]); It != Where.end())
        Old[J] = It->second;
  }
  auto At = [](const Vector &K, size_t A, size_t B) {
    if (A < B)
      std::swap(A, B);
    return K[A * (A + 1) / 2 + B];
  };
  for (size_t J = 0; J < N; ++J) {
    double *Row = &M->K[J * (J + 1) / 2];
    for (size_t I = 0; I <= J; ++I)
      if (Old[J] != SIZE_MAX && Old[I] != SIZE_MAX) {
        Row[I] = At(Known->K, Old[J], Old[I]);
      } else {
        Row[I] = kernel(Xs[J], Xs[I]);
        ++Done.KernelEntries;
      }
  }
  return M;
}

Vector Gp::column(size_t J) const {
  Vector C(J + 1);
  for (size_t I = 0; I < J; ++I)
    C[I] = kernel(Xs[J], Xs[I]);
  C[J] = kernel(Xs[J], Xs[J]) + H.Noise + 1e-9;
  return C;
}

bool Gp::factor(const GpHyper &Hyp) {
  H = Hyp;
  ++Generation;
  ++Done.Factorizations;
  L.clear();
  Known = kernelMatrix();
  for (size_t J = 0; J < Xs.size(); ++J) {
    const double *Row = &Known->K[J * (J + 1) / 2];
    Vector C(Row, Row + J + 1);
    C[J] = C[J] + H.Noise + 1e-9; // as column() adds it
    if (!extendCholesky(L, std::move(C)))
      return false;
  }
  return solve(/*WithLikelihood=*/true);
}

bool Gp::solve(bool WithLikelihood) {
  Alpha = Z;
  forwardSolve(L, Alpha);
  Beta = Alpha;
  if (WithLikelihood) {
    double Fit = 0, LogDet = 0;
    for (size_t I = 0; I < L.size(); ++I) {
      Fit += Alpha[I] * Alpha[I];
      LogDet += std::log(L[I][I]);
    }
    LogLik = -0.5 * Fit - LogDet - 0.5 * L.size() * std::log(2 * Pi);
  }
  backwardSolve(L, Alpha);
  return true;
}

namespace {

/// Removes row and column K from the lower Cholesky factor L of a matrix:
/// the factor of the matrix without that row and column. The rows above K
/// keep their values; those below are the factor of their block plus the
/// outer product of the removed column's part below K, a rank-one update
/// (the stable cholupdate rotations; Golub and Van Loan, "Matrix
/// Computations", section 6.5.4), in O(n^2) where factoring again costs
/// O(n^3).
void removeRow(std::vector<Vector> &L, size_t K) {
  size_t N = L.size();
  Vector X(N);
  for (size_t I = K + 1; I < N; ++I)
    X[I] = L[I][K];
  for (size_t J = K + 1; J < N; ++J) {
    double Ljj = L[J][J];
    double R = std::hypot(Ljj, X[J]);
    double C = R / Ljj, S = X[J] / Ljj;
    L[J][J] = R;
    for (size_t I = J + 1; I < N; ++I) {
      L[I][J] = (L[I][J] + S * X[I]) / C;
      X[I] = C * X[I] - S * L[I][J];
    }
  }
  for (size_t I = K + 1; I < N; ++I)
    L[I].erase(L[I].begin() + K);
  L.erase(L.begin() + K);
}

} // namespace

bool Gp::refactor(const std::vector<Vector> &Old) {
  if (Old.empty() || L.size() != Old.size())
    return false; // the last factorization did not finish
  bool Repeated;
  auto Where = rowPositions(Old, Repeated);
  if (Repeated)
    return false; // which of the two a new row is, is unclear
  // Each new row's place among the old ones; the rows kept must keep
  // their order.
  std::vector<bool> Kept(Old.size(), false);
  size_t First = Xs.size(), Last = 0, Found = 0;
  for (size_t J = 0; J < Xs.size(); ++J) {
    auto It = Where.find(&Xs[J]);
    if (It == Where.end()) {
      First = std::min(First, J);
      continue;
    }
    if ((Found && It->second <= Last) || Kept[It->second])
      return false;
    Kept[It->second] = true;
    Last = It->second;
    ++Found;
  }
  // Each removal costs about as much as a new row; beyond a few of either,
  // factoring anew (from the kernel matrix kept, see Known) is as cheap.
  if (Old.size() - Found > MaxChanges || Xs.size() - First > MaxChanges)
    return false;
  for (size_t K = Old.size(); K-- > 0;)
    if (!Kept[K])
      removeRow(L, K);
  // L now factors the kept rows, which are the new rows up to the first
  // one not seen before; the rest are appended as add() appends one.
  L.resize(First);
  for (size_t J = First; J < Xs.size(); ++J) {
    Done.KernelEntries += J + 1;
    if (!extendCholesky(L, column(J)))
      return false;
  }
  return true;
}

void Gp::fit(std::vector<Vector> X, Vector Y, const GpHyper *Fixed) {
  std::vector<Vector> Old = std::move(Xs);
  Xs = std::move(X);
  Ys = std::move(Y);
  size_t N = Ys.size();
  MeanY = 0;
  for (double V : Ys)
    MeanY += V;
  MeanY = N ? MeanY / N : 0;
  double Var = 0;
  for (double V : Ys)
    Var += (V - MeanY) * (V - MeanY);
  ScaleY = N > 1 && Var > 0 ? std::sqrt(Var / (N - 1)) : 1;
  Z.clear();
  for (double V : Ys)
    Z.push_back((V - MeanY) / ScaleY);
  ++Generation;
  // Under the same hyperparameters, a model that lost a few rows and
  // gained some (a long inner loop's window of observations, one more
  // each time) changes its factor instead of making it again.
  if (Fixed && N && sameHyper(*Fixed, H) && refactor(Old)) {
    solve(/*WithLikelihood=*/true);
    return;
  }
  L.clear();
  if (N == 0)
    return;
  if (Fixed) {
    factor(*Fixed);
    return;
  }
  double Width = std::sqrt(static_cast<double>(Xs[0].size()));
  GpHyper Best;
  double BestLik = -std::numeric_limits<double>::infinity();
  for (double Ls : {0.05, 0.1, 0.2, 0.35, 0.6, 1.0, 2.0})
    for (double Noise : {1e-4, 1e-2, 0.1, 0.3}) {
      GpHyper Hyp{Ls * std::max(Width, 1.0), 1.0, Noise, {}};
      if (factor(Hyp) && LogLik > BestLik) {
        BestLik = LogLik;
        Best = Hyp;
      }
    }
  if (!factor(Best))
    factor(GpHyper{Best.LengthScale, 1.0, 0.5, {}});
}

void Gp::fitRelevance(const FeatureGroups &Groups, unsigned Rounds) {
  if (Xs.size() < 4 || Groups.empty())
    return;
  GpHyper Best = H;
  if (Best.Weights.empty())
    Best.Weights.assign(Xs[0].size(), 1.0);
  // A log-normal prior on each weight (sd 1 in natural-log units): a factor
  // of 4 must explain the data noticeably better to be taken.
  auto Prior = [&](const GpHyper &Hyp) {
    double P = 0;
    for (const std::vector<size_t> &G : Groups) {
      double L = std::log(Hyp.Weights[G.front()]);
      P -= 0.5 * L * L;
    }
    return P;
  };
  if (!factor(Best))
    return;
  double BestScore = LogLik + Prior(Best);
  for (unsigned Round = 0; Round < Rounds; ++Round) {
    bool Moved = false;
    for (const std::vector<size_t> &G : Groups)
      for (double F : {0.25, 0.5, 2.0, 4.0}) {
        GpHyper Hyp = Best;
        for (size_t C : G)
          Hyp.Weights[C] *= F;
        if (factor(Hyp) && LogLik + Prior(Hyp) > BestScore + 1e-6) {
          BestScore = LogLik + Prior(Hyp);
          Best = std::move(Hyp);
          Moved = true;
        }
      }
    if (!Moved)
      break;
  }
  factor(Best);
}

void Gp::add(const Vector &X, double Y) {
  // Keeps the standardization of the last fit, so that a believed point
  // does not shift the others; refactors with the same hyperparameters.
  Xs.push_back(X);
  Ys.push_back(Y);
  Z.push_back((Y - MeanY) / ScaleY);
  if (!extendCholesky(L, column(Xs.size() - 1))) {
    factor(H); // numerically singular: refactor from scratch
    return;
  }
  solve(/*WithLikelihood=*/false);
}

Prediction Gp::predict(const Vector &X) const {
  size_t N = Xs.size();
  if (N == 0)
    return {MeanY, ScaleY * ScaleY * H.Signal};
  Vector K(N);
  for (size_t I = 0; I < N; ++I)
    K[I] = kernel(X, Xs[I]);
  double Mean = 0;
  for (size_t I = 0; I < N; ++I)
    Mean += K[I] * Alpha[I];
  forwardSolve(L, K);
  double Var = H.Signal;
  for (double V : K)
    Var -= V * V;
  Var = std::max(Var, 1e-12);
  return {MeanY + ScaleY * Mean, ScaleY * ScaleY * Var};
}

std::vector<Prediction> Gp::predictMany(const std::vector<Vector> &Qs) const {
  Tracked T = track(Qs);
  std::vector<Prediction> Out(Qs.size());
  for (size_t I = 0; I < Qs.size(); ++I)
    Out[I] = at(T, I);
  return Out;
}

std::vector<double> Gp::means(const std::vector<Vector> &Qs) const {
  std::vector<double> Out(Qs.size(), MeanY);
  if (Xs.empty())
    return Out;
  for (size_t Q = 0; Q < Qs.size(); ++Q) {
    double Mean = 0;
    for (size_t I = 0; I < Xs.size(); ++I)
      Mean += kernel(Qs[Q], Xs[I]) * Alpha[I];
    Out[Q] = MeanY + ScaleY * Mean;
  }
  return Out;
}

Gp::Tracked Gp::track(std::vector<Vector> Qs) const {
  Tracked T;
  T.Qs = std::move(Qs);
  refresh(T);
  return T;
}

void Gp::refresh(Tracked &T) const {
  size_t N = Xs.size(), P = T.Qs.size();
  if (T.Generation != Generation || T.Rows > N ||
      T.V.size() != P) { // another fit: start again
    T.V.assign(P, Vector());
    T.Mean.assign(P, 0);
    T.Var.assign(P, H.Signal);
    T.Rows = 0;
    T.Generation = Generation;
  }
  if (T.Rows == N)
    return;
  if (T.Rows == 0) {
    solveBlocks(T);
    return;
  }
  // Each new observation n appends v_n = (k(x_n, q) - L_n . v) / L_nn to
  // every point's solve: the last row of the forward solve.
  for (size_t Row = T.Rows; Row < N; ++Row) {
    const Vector &Ln = L[Row];
    for (size_t I = 0; I < P; ++I) {
      Vector &V = T.V[I];
      double Vn =
          (kernel(T.Qs[I], Xs[Row]) - dot(Ln.data(), V.data(), Row)) / Ln[Row];
      V.push_back(Vn);
      T.Var[I] -= Vn * Vn;
    }
  }
  // The means from beta, which every added observation changes.
  for (size_t I = 0; I < P; ++I)
    T.Mean[I] = dot(T.V[I].data(), Beta.data(), N);
  T.Rows = N;
}

void Gp::solveBlocks(Tracked &T) const {
  size_t N = Xs.size(), P = T.Qs.size();
  // V holds Block right-hand sides side by side (row I: k(x_I, q_B) for
  // each B), solved together: the inner loop runs across the block, so it
  // needs no reordering of a sum to vectorize, and each row of L is read
  // once a block instead of once a point.
  constexpr size_t Block = 16;
  std::vector<double> V(N * Block);
  const size_t D = N ? Xs[0].size() : 0;
  std::vector<double> QT(D * Block); // the block's features, feature-major
  for (size_t Q0 = 0; Q0 < P; Q0 += Block) {
    size_t Nb = std::min(Block, P - Q0);
    for (size_t F = 0; F < D; ++F)
      for (size_t B = 0; B < Block; ++B)
        QT[F * Block + B] = T.Qs[Q0 + std::min(B, Nb - 1)][F];
    // kernel(q_B, x_I) for the whole block, each value computed as kernel()
    // computes it (the same operations in the same order), the block's
    // distances summed side by side.
    for (size_t I = 0; I < N; ++I) {
      double Dist[Block] = {};
      const double *X = Xs[I].data();
      for (size_t F = 0; F < D; ++F) {
        const double *Q = &QT[F * Block];
        if (H.Weights.empty()) {
#pragma GCC unroll 16
          for (size_t B = 0; B < Block; ++B) {
            double Diff = Q[B] - X[F];
            Dist[B] += Diff * Diff;
          }
        } else {
          const double W = H.Weights[F];
#pragma GCC unroll 16
          for (size_t B = 0; B < Block; ++B) {
            double Diff = (Q[B] - X[F]) * W;
            Dist[B] += Diff * Diff;
          }
        }
      }
      double *Row = &V[I * Block];
      for (size_t B = 0; B < Block; ++B)
        Row[B] = B < Nb ? matern(Dist[B]) : 0;
    }
    for (size_t I = 0; I < N; ++I) {
      // The row's sums in a local array, which nothing else can alias, so
      // they stay in registers across K.
      double Acc[Block];
      double *Row = &V[I * Block];
      const double *Li = L[I].data();
      for (size_t B = 0; B < Block; ++B)
        Acc[B] = Row[B];
      for (size_t K = 0; K < I; ++K) {
        const double *Vk = &V[K * Block];
        double Lik = Li[K];
        // Unrolled whole, so that the sums stay in registers.
#pragma GCC unroll 16
        for (size_t B = 0; B < Block; ++B)
          Acc[B] -= Lik * Vk[B];
      }
      for (size_t B = 0; B < Block; ++B)
        Row[B] = Acc[B] / Li[I];
    }
    for (size_t B = 0; B < Nb; ++B) {
      Vector &Vq = T.V[Q0 + B];
      Vq.resize(N);
      double Mean = 0, Var = H.Signal;
      for (size_t I = 0; I < N; ++I) {
        double X = V[I * Block + B];
        Vq[I] = X;
        Mean += X * Beta[I];
        Var -= X * X;
      }
      T.Mean[Q0 + B] = Mean;
      T.Var[Q0 + B] = Var;
    }
  }
  T.Rows = N;
}

Prediction Gp::at(const Tracked &T, size_t I) const {
  return {MeanY + ScaleY * T.Mean[I],
          ScaleY * ScaleY * std::max(T.Var[I], 1e-12)};
}

double expectedImprovement(const Prediction &P, double Best, double Xi) {
  double Sd = std::sqrt(std::max(P.Variance, 0.0));
  double Gain = Best - P.Mean - Xi;
  if (Sd < 1e-12)
    return std::max(Gain, 0.0);
  double U = Gain / Sd;
  return Gain * normalCdf(U) + Sd * normalPdf(U);
}

} // namespace r3::search::bo
