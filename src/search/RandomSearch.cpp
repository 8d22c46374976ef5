// Random search: points drawn uniformly from the space, never one seen
// before. The baseline every model-based strategy must beat (Bergstra and
// Bengio, "Random search for hyper-parameter optimization", JMLR 2012). A
// space small enough to list is shuffled once and walked, so that the search
// ends exactly when the space is exhausted; a larger space is sampled with
// rejection of seen points.
#include "search/Strategy.h"

#include <algorithm>

namespace r3::search {

namespace {

class RandomSearch final : public Strategy {
public:
  RandomSearch(const Space &S, const StrategyOptions &O) : S(S), R(O.Seed) {
    if (S.enumerable(ListLimit)) {
      Order = S.enumerate();
      std::shuffle(Order.begin(), Order.end(), R);
    }
  }

  std::string_view name() const override { return "random"; }

  std::vector<Point> propose(unsigned N) override {
    std::vector<Point> Out;
    while (Out.size() < N) {
      std::optional<Point> P =
          Order.empty() && !S.enumerable(ListLimit) ? draw() : next();
      if (!P)
        break;
      Seen.markPending(*P);
      Out.push_back(std::move(*P));
    }
    return Out;
  }

  void observe(const Point &P, std::optional<double> Value) override {
    Seen.observe(P, Value);
  }
  void markPending(const Point &P) override { Seen.markPending(P); }
  void forget(const Point &P) override {
    Seen.forget(P);
    // A dropped point goes back into the walk so that it is not lost.
    if (!Order.empty() || S.enumerable(ListLimit))
      Order.push_back(P);
  }

private:
  /// The next unseen point of the shuffled list.
  std::optional<Point> next() {
    while (Cursor < Order.size()) {
      const Point &P = Order[Cursor++];
      if (!Seen.seen(P))
        return P;
    }
    return std::nullopt;
  }

  /// A fresh random point of a space too large to list; gives up (the space
  /// is nearly exhausted) after many rejections in a row.
  std::optional<Point> draw() {
    for (unsigned Try = 0; Try < 1000; ++Try) {
      Point P = S.random(R);
      if (!Seen.seen(P))
        return P;
    }
    return std::nullopt;
  }

  static constexpr double ListLimit = 2e5;
  const Space &S;
  Rng R;
  Observations Seen;
  std::vector<Point> Order;
  size_t Cursor = 0;
};

} // namespace

std::unique_ptr<Strategy> makeRandomSearch(const Space &S,
                                           const StrategyOptions &O) {
  return std::make_unique<RandomSearch>(S, O);
}

} // namespace r3::search
