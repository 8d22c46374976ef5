// A Gaussian-process regressor for Bayesian optimization: a Matérn-5/2 kernel
// over feature vectors, a constant mean, Gaussian observation noise, and
// hyperparameters (length scale, signal variance, noise) chosen by the log
// marginal likelihood over a small grid. The spaces r3 searches are discrete
// and observations few (tens to a few hundred; BayesOpt fits at most 512),
// so an exact GP with a
// Cholesky factorisation is cheap and a grid over three hyperparameters is
// more robust than gradient ascent on a likelihood with many local optima.
#pragma once

#include <cstddef>
#include <vector>

namespace r3::search::bo {

using Vector = std::vector<double>;

struct GpHyper {
  double LengthScale = 1.0; ///< in feature units
  double Signal = 1.0;      ///< kernel variance, on standardized targets
  double Noise = 1e-3;      ///< noise variance, on standardized targets
};

struct Prediction {
  double Mean = 0, Variance = 0; ///< in the units of the observed targets
};

class Gp {
public:
  /// Fits to inputs X (rows of equal length) and targets Y, choosing the
  /// hyperparameters by marginal likelihood; with Fixed, uses those.
  void fit(std::vector<Vector> X, Vector Y, const GpHyper *Fixed = nullptr);
  /// The posterior at X (the prior when nothing was fitted).
  Prediction predict(const Vector &X) const;
  /// The posteriors at each of Xs, as predict gives them (to rounding),
  /// computed a block at a time so that the factor is read once a block.
  std::vector<Prediction> predictMany(const std::vector<Vector> &Xs) const;
  /// Adds one observation keeping the hyperparameters (kriging believer:
  /// a pending point enters with its predicted mean).
  void add(const Vector &X, double Y);
  const GpHyper &hyper() const { return H; }
  size_t size() const { return Xs.size(); }
  /// The log marginal likelihood of the current fit (standardized targets).
  double logLikelihood() const { return LogLik; }

private:
  bool factor(const GpHyper &Hyp);
  /// Alpha = K^-1 z from the factor (and the log likelihood, if asked).
  bool solve(bool WithLikelihood);
  /// Column J of K + noise I, up to the diagonal.
  Vector column(size_t J) const;
  double kernel(const Vector &A, const Vector &B) const;

  std::vector<Vector> Xs;
  Vector Ys; ///< raw targets
  Vector Z;  ///< standardized targets
  double MeanY = 0, ScaleY = 1;
  GpHyper H;
  std::vector<Vector> L; ///< the lower Cholesky factor, row I of length I+1
  Vector Alpha;          ///< K^-1 z
  double LogLik = 0;
};

/// Expected improvement of a minimisation below Best for a Gaussian
/// prediction (Jones, Schonlau and Welch 1998), with an exploration margin Xi.
double expectedImprovement(const Prediction &P, double Best, double Xi = 0.0);

} // namespace r3::search::bo
