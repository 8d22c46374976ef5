// The interface of every search strategy of the inner loop (and of the
// simulation benchmark): propose points in batches, learn from their
// outcomes. A campaign asks for as many points as it has idle workers, so
// strategies must propose batches of distinct points without waiting for the
// outcomes of the ones still running. Lower values are better (times in ms);
// a point without a value failed (it did not compile, crashed, or gave a wrong
// result) and strategies should learn to avoid its region.
//
// Resuming a campaign rebuilds a strategy by observing every committed result
// again, in the order they were committed, and then telling it which points
// are still pending; strategies therefore keep no state that observations
// cannot rebuild, apart from their random engine.
#pragma once

#include "search/Space.h"
#include "support/Error.h"

#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

namespace r3::search {

/// How a Gaussian-process model measures distance between configurations.
enum class LengthScales {
  Shared,      ///< one length scale for every parameter
  PerParameter ///< a relevance weight per parameter (ARD)
};

struct StrategyOptions {
  uint64_t Seed = 1;
  /// Random points before a model-based strategy starts modelling (0: the
  /// strategy's own default).
  unsigned InitialSamples = 0;
  /// Bayesian optimization's distance (the portfolio asks for PerParameter).
  LengthScales Scales = LengthScales::Shared;
};

class Strategy {
public:
  virtual ~Strategy() = default;
  /// "bo", "random", "grid", "tpe", "ga".
  virtual std::string_view name() const = 0;
  /// Up to N points, distinct from each other and from every point observed
  /// or pending; fewer, or none, when the space is exhausted.
  virtual std::vector<Point> propose(unsigned N) = 0;
  /// The outcome of a point: its value, or none when it failed. May be called
  /// for points this strategy did not propose (resume, seeding).
  virtual void observe(const Point &P, std::optional<double> Value) = 0;
  /// A point that is being evaluated but was not proposed by this strategy
  /// instance (resume): it must not be proposed again.
  virtual void markPending(const Point &P) = 0;
  /// A proposed point that will never be observed (dropped): it may be
  /// proposed again.
  virtual void forget(const Point &P) = 0;
  /// How promising each of Ps is by this strategy's model of the space
  /// (higher is better), for a portfolio that screens another member's
  /// proposals; empty when the strategy has no model (yet).
  virtual std::vector<double> score(const std::vector<Point> &Ps) {
    (void)Ps;
    return {};
  }
};

/// Bookkeeping most strategies share (not the campaign history): which points
/// were observed (with their values) and which are pending.
class Observations {
public:
  struct Entry {
    Point P;
    std::optional<double> Value;
  };
  void observe(const Point &P, std::optional<double> Value);
  void markPending(const Point &P) { Pending.insert(P); }
  void forget(const Point &P) { Pending.erase(P); }
  /// Whether P was observed or is pending.
  bool seen(const Point &P) const {
    return Pending.count(P) || Observed.count(P);
  }
  const std::vector<Entry> &entries() const { return Entries; }
  const std::set<Point> &pending() const { return Pending; }
  /// The best (lowest) observed value, if any point succeeded.
  std::optional<double> best() const;

private:
  std::vector<Entry> Entries;
  /// Membership only: seen() is asked of every point a scan or a pool
  /// considers, thousands a proposal.
  std::unordered_set<Point, PointHash> Observed;
  /// Ordered: believed points enter the models in this order.
  std::set<Point> Pending;
};

/// The strategies by name, for campaign files and the command line.
std::span<const std::string_view> strategyNames();
/// A strategy over S; an error naming the known strategies when Name is not
/// one of them. S must outlive the strategy.
Expected<std::unique_ptr<Strategy>>
makeStrategy(std::string_view Name, const Space &S, const StrategyOptions &O);

// Constructors behind makeStrategy, one per file.
std::unique_ptr<Strategy> makeRandomSearch(const Space &S,
                                           const StrategyOptions &O);
std::unique_ptr<Strategy> makeGridSearch(const Space &S,
                                         const StrategyOptions &O);
std::unique_ptr<Strategy> makeTpe(const Space &S, const StrategyOptions &O);
std::unique_ptr<Strategy> makeBayesOpt(const Space &S,
                                       const StrategyOptions &O);
std::unique_ptr<Strategy> makeGenetic(const Space &S, const StrategyOptions &O);
std::unique_ptr<Strategy> makePortfolio(const Space &S,
                                        const StrategyOptions &O);

} // namespace r3::search
