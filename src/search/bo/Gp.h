// A Gaussian-process regressor for Bayesian optimization: a Matérn-5/2 kernel
// over feature vectors, a constant mean, Gaussian observation noise, and
// hyperparameters (length scale, signal variance, noise) chosen by the log
// marginal likelihood over a small grid. The spaces r3 searches are discrete
// and observations few (tens to a few hundred; BayesOpt fits at most 256),
// so an exact GP with a Cholesky factorisation is cheap and a grid over
// three hyperparameters is more robust than gradient ascent on a likelihood
// with many local optima. A refit under the same hyperparameters reuses the
// last fit's work: the kernel entries of rows it has seen, and its factor
// when rows were only dropped (a rank-one update each) and appended.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace r3::search::bo {

using Vector = std::vector<double>;

struct GpHyper {
  double LengthScale = 1.0; ///< in feature units
  double Signal = 1.0;      ///< kernel variance, on standardized targets
  double Noise = 1e-3;      ///< noise variance, on standardized targets
  /// Per feature, a factor on its differences (automatic relevance
  /// determination: a feature with a large weight matters at a short
  /// range); empty: every feature weighs 1.
  Vector Weights;
};

/// Groups of feature columns that share one relevance weight (one search
/// parameter's columns: a one-hot block moves together).
using FeatureGroups = std::vector<std::vector<size_t>>;

/// A kernel matrix and what it was computed from (Gp.cpp).
struct KernelMatrix;

struct Prediction {
  double Mean = 0, Variance = 0; ///< in the units of the observed targets
};

class Gp {
public:
  /// Fits to inputs X (rows of equal length) and targets Y, choosing the
  /// hyperparameters by marginal likelihood; with Fixed, uses those.
  void fit(std::vector<Vector> X, Vector Y, const GpHyper *Fixed = nullptr);
  /// After a fit: adjusts the relevance weight of each group by marginal
  /// likelihood (a coordinate search over factors of the weights, with a
  /// log-normal prior that keeps weights near 1 without evidence), keeping
  /// the length scale and noise; at most Rounds passes over the groups.
  void fitRelevance(const FeatureGroups &Groups, unsigned Rounds = 2);
  /// The posterior at X (the prior when nothing was fitted).
  Prediction predict(const Vector &X) const;
  /// The posteriors at each of Xs, as predict gives them (to rounding),
  /// computed a block at a time so that the factor is read once a block.
  std::vector<Prediction> predictMany(const std::vector<Vector> &Xs) const;
  /// The posterior means at Xs, as predict gives them, without the
  /// variances (which cost a triangular solve a point): what a model read
  /// only for its mean needs (the failure model's odds).
  std::vector<double> means(const std::vector<Vector> &Xs) const;
  /// Adds one observation keeping the hyperparameters (kriging believer:
  /// a pending point enters with its predicted mean).
  void add(const Vector &X, double Y);

  /// The posteriors at a fixed set of points, kept current as observations
  /// are added: each point keeps its solve v = L^-1 k(X, q), and a new
  /// observation appends one entry to it, so refreshing costs O(n) a point
  /// where predicting again costs O(n^2). A batch of proposals scores one
  /// pool against a model that grows by a believed point per proposal.
  class Tracked {
  public:
    size_t size() const { return Mean.size(); }

  private:
    friend class Gp;
    std::vector<Vector> Qs, V;
    Vector Mean, Var; ///< standardized: v . beta, and signal - v . v
    size_t Rows = 0;  ///< the observations V covers
    unsigned Generation = 0;
  };
  /// Starts tracking the posteriors at Qs.
  Tracked track(std::vector<Vector> Qs) const;
  /// Brings T up to date with the observations added since it was made or
  /// last refreshed (recomputing it whole after a new fit).
  void refresh(Tracked &T) const;
  /// The posterior at T's point I, as of its last refresh.
  Prediction at(const Tracked &T, size_t I) const;
  const GpHyper &hyper() const { return H; }
  size_t size() const { return Xs.size(); }
  /// The log marginal likelihood of the current fit (standardized targets).
  double logLikelihood() const { return LogLik; }

  /// What the fits so far cost: full factorizations, and entries of the
  /// kernel matrix computed (not taken from an earlier fit's).
  struct Work {
    size_t Factorizations = 0, KernelEntries = 0;
  };
  const Work &work() const { return Done; }

private:
  bool factor(const GpHyper &Hyp);
  /// With Xs replaced and H kept: turns the factor of the rows Old into
  /// that of Xs when Xs is Old less at most MaxChanges rows, in Old's
  /// order, then rows Old did not have, at most MaxChanges of them with
  /// the old rows after the first (removing each row by a rank-one update,
  /// appending as add() does). False, with L to be made anew, otherwise.
  /// Without removals, the factor is the bits factor() would give.
  bool refactor(const std::vector<Vector> &Old);
  static constexpr size_t MaxChanges = 8;
  /// Alpha = K^-1 z from the factor (and the log likelihood, if asked).
  bool solve(bool WithLikelihood);
  /// T's solves and posteriors from scratch, a block of points at a time.
  void solveBlocks(Tracked &T) const;
  /// Column J of K + noise I, up to the diagonal.
  Vector column(size_t J) const;
  /// The kernel matrix of Xs under H (packed lower triangle, row J holding
  /// its entries up to the diagonal), taking from Known the entries of
  /// every pair of rows it already holds (see KernelMatrix).
  std::shared_ptr<const KernelMatrix> kernelMatrix();
  /// The Matérn-5/2 kernel at a weighted squared distance under H.
  double matern(double Distance2) const;
  double kernel(const Vector &A, const Vector &B) const;
  double distance2(const Vector &A, const Vector &B) const;

  std::vector<Vector> Xs;
  Vector Ys; ///< raw targets
  Vector Z;  ///< standardized targets
  double MeanY = 0, ScaleY = 1;
  GpHyper H;
  std::vector<Vector> L; ///< the lower Cholesky factor, row I of length I+1
  Vector Beta;           ///< L^-1 z
  Vector Alpha;          ///< K^-1 z
  /// The kernel matrix of the last factorization: a refit under the same
  /// kernel hyperparameters (the noise aside) computes only the entries of
  /// rows it has not seen, which is all a long inner loop's refit after
  /// one more observation needs; copies of the model share it.
  std::shared_ptr<const KernelMatrix> Known;
  /// Counts factorizations: a Tracked of an older one is recomputed.
  unsigned Generation = 0;
  double LogLik = 0;
  Work Done;
};

/// Expected improvement of a minimisation below Best for a Gaussian
/// prediction (Jones, Schonlau and Welch 1998), with an exploration margin Xi.
double expectedImprovement(const Prediction &P, double Best, double Xi = 0.0);

} // namespace r3::search::bo
