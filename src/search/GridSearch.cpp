// Grid (exhaustive) search: every point in lexicographic order of its value
// indices, the order Kernel Tuner's brute-force strategy uses. A pass
// sequence counts in shortlex order (shorter sequences first), so that a
// space too large to finish is still walked from its simplest pipelines, and
// the walk is lazy: nothing is listed up front.
#include "search/Strategy.h"

namespace r3::search {

namespace {

/// Advances one sequence to the next in shortlex order; false past the last.
bool nextSequence(const Param &P, std::vector<uint32_t> &V) {
  uint32_t A = static_cast<uint32_t>(P.Values.size());
  for (size_t I = V.size(); I-- > 0;) {
    if (++V[I] < A)
      return true;
    V[I] = 0;
  }
  if (V.size() >= P.MaxLength || A == 0)
    return false;
  V.assign(V.size() + 1, 0);
  return true;
}

/// Advances one parameter's value; false (and reset to its first value)
/// when it wraps around.
bool nextValue(const Param &P, std::vector<uint32_t> &V) {
  if (P.Kind == ParamKind::Sequence) {
    if (nextSequence(P, V))
      return true;
    V.assign(P.MinLength, 0);
    return false;
  }
  if (++V[0] < P.Values.size())
    return true;
  V[0] = 0;
  return false;
}

Point firstPoint(const Space &S) {
  Point P;
  for (const Param &Par : S.Params)
    P.Values.push_back(Par.Kind == ParamKind::Sequence
                           ? std::vector<uint32_t>(Par.MinLength, 0)
                           : std::vector<uint32_t>{0});
  return P;
}

class GridSearch final : public Strategy {
public:
  GridSearch(const Space &S, const StrategyOptions &) : S(S) {
    if (!S.Allowed.empty())
      List = S.enumerate();
    else if (S.size() > 0)
      Cursor = firstPoint(S);
  }

  std::string_view name() const override { return "grid"; }

  std::vector<Point> propose(unsigned N) override {
    std::vector<Point> Out;
    while (!Returned.empty() && Out.size() < N) {
      Point P = *Returned.begin();
      Returned.erase(Returned.begin());
      if (!Seen.seen(P))
        Out.push_back(std::move(P));
    }
    while (Out.size() < N) {
      std::optional<Point> P = next();
      if (!P)
        break;
      if (!Seen.seen(*P))
        Out.push_back(std::move(*P));
    }
    for (const Point &P : Out)
      Seen.markPending(P);
    return Out;
  }

  void observe(const Point &P, std::optional<double> Value) override {
    Seen.observe(P, Value);
  }
  void markPending(const Point &P) override { Seen.markPending(P); }
  void forget(const Point &P) override {
    Seen.forget(P);
    Returned.insert(P);
  }

private:
  std::optional<Point> next() {
    if (!S.Allowed.empty()) {
      if (Index >= List.size())
        return std::nullopt;
      return List[Index++];
    }
    if (!Cursor)
      return std::nullopt;
    Point Out = *Cursor;
    size_t I = S.Params.size();
    while (I > 0 && !nextValue(S.Params[I - 1], Cursor->Values[I - 1]))
      --I;
    if (I == 0)
      Cursor.reset();
    return Out;
  }

  const Space &S;
  Observations Seen;
  std::vector<Point> List; ///< constrained spaces: the allowed points, sorted
  size_t Index = 0;
  std::optional<Point> Cursor; ///< unconstrained spaces: the next point
  std::set<Point> Returned;    ///< forgotten points, proposed again first
};

} // namespace

std::unique_ptr<Strategy> makeGridSearch(const Space &S,
                                         const StrategyOptions &O) {
  return std::make_unique<GridSearch>(S, O);
}

} // namespace r3::search
