#include "search/BestRegion.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace r3::search {

namespace {

/// Keeps at most Limit of Ps, a random subset drawn with R when there are
/// more.
void cap(std::vector<Point> &Ps, size_t Limit, Rng &R) {
  if (Ps.size() > Limit) {
    std::shuffle(Ps.begin(), Ps.end(), R);
    Ps.resize(Limit);
  }
}

} // namespace

Region bestRegion(const Space &S,
                  std::span<const std::pair<double, Point>> Good,
                  const Observations &Seen, unsigned Top, double Agree,
                  size_t Limit, Rng &R) {
  if (Top == 0 || Good.size() < Top || Limit == 0)
    return {};
  // The Top best, ties in the order observed.
  std::vector<size_t> Order(Good.size());
  std::iota(Order.begin(), Order.end(), size_t{0});
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    return Good[A].first < Good[B].first;
  });
  const Point &Best = Good[Order[0]].second;
  const size_t NP = S.Params.size();

  // A parameter is kept where the best points mostly agree with the best.
  std::vector<bool> Kept(NP);
  for (size_t J = 0; J < NP; ++J) {
    if (S.Params[J].Kind == ParamKind::Sequence) {
      Kept[J] = true;
      continue;
    }
    unsigned Same = 0;
    for (unsigned I = 0; I < Top; ++I)
      Same += sameValue(Good[Order[I]].second.Values[J], Best.Values[J]);
    Kept[J] = Same >= Agree * Top;
  }
  // A point's part of the region, if any: one parameter moved, or only
  // parameters that are not kept.
  Region Out;
  auto PartOf = [&](unsigned Moved,
                    unsigned MovedKept) -> std::vector<Point> * {
    if (Moved == 1)
      return &Out.Moves;
    return Moved > 1 && MovedKept == 0 ? &Out.Rest : nullptr;
  };
  auto Part = [&](const Point &P) -> std::vector<Point> * {
    unsigned Moved = 0, MovedKept = 0;
    for (size_t J = 0; J < NP; ++J)
      if (!sameValue(P.Values[J], Best.Values[J])) {
        ++Moved;
        MovedKept += Kept[J];
        if (Moved > 1 && MovedKept > 0)
          return nullptr; // neither one move nor only free parameters
      }
    return PartOf(Moved, MovedKept);
  };

  bool FlatBest = std::all_of(Best.Values.begin(), Best.Values.end(),
                              [](const auto &V) { return V.size() == 1; });
  if (!S.Allowed.empty() && S.Allowed.rows() && S.Allowed.rowWidth() == NP &&
      FlatBest && Best.Values.size() == NP) {
    // A constrained space of single values (a tuning cache's): its allowed
    // points in their order, compared as rows of indices, as Part compares
    // them, without a point's vectors.
    const uint32_t *Rows = S.Allowed.rows();
    std::vector<uint32_t> BestRow(NP);
    for (size_t J = 0; J < NP; ++J)
      BestRow[J] = Best.Values[J][0];
    for (size_t I = 0; I < S.Allowed.size(); ++I) {
      const uint32_t *Row = Rows + I * NP;
      unsigned Moved = 0, MovedKept = 0;
      for (size_t J = 0; J < NP && !(Moved > 1 && MovedKept > 0); ++J)
        if (Row[J] != BestRow[J]) {
          ++Moved;
          MovedKept += Kept[J];
        }
      std::vector<Point> *To = PartOf(Moved, MovedKept);
      if (To && !Seen.seen(S.Allowed[I]))
        To->push_back(S.Allowed[I]);
    }
  } else if (!S.Allowed.empty()) {
    // A constrained space: its allowed points, in their order.
    for (const Point &P : S.Allowed)
      if (std::vector<Point> *To = Part(P); To && !Seen.seen(P))
        To->push_back(P);
  } else {
    std::set<Point> Found;
    auto Add = [&](Point P) {
      std::vector<Point> *To = Part(P);
      if (To && S.contains(P) && !Seen.seen(P) && Found.insert(P).second)
        To->push_back(std::move(P));
    };
    // One parameter away: every other value of a single-valued parameter,
    // one edit of a sequence.
    for (size_t J = 0; J < NP; ++J) {
      if (S.Params[J].Kind == ParamKind::Sequence)
        continue;
      for (uint32_t V = 0; V < S.Params[J].Values.size(); ++V) {
        if (V == Best.Values[J][0])
          continue;
        Point P = Best;
        P.Values[J] = {V};
        Add(std::move(P));
      }
    }
    for (Point &P : S.neighbours(Best)) {
      bool SequenceEdit = false;
      for (size_t J = 0; J < NP; ++J)
        SequenceEdit |= S.Params[J].Kind == ParamKind::Sequence &&
                        !sameValue(P.Values[J], Best.Values[J]);
      if (SequenceEdit)
        Add(std::move(P));
    }
    // The free parameters' combinations: all of them when there are few,
    // else a random sample.
    std::vector<size_t> Free;
    double Combinations = 1;
    for (size_t J = 0; J < NP; ++J)
      if (!Kept[J]) {
        Free.push_back(J);
        Combinations *= static_cast<double>(S.Params[J].Values.size());
      }
    if (!Free.empty() && Combinations <= static_cast<double>(Limit)) {
      std::vector<uint32_t> Digit(Free.size(), 0);
      for (;;) {
        Point P = Best;
        for (size_t F = 0; F < Free.size(); ++F)
          P.Values[Free[F]] = {Digit[F]};
        Add(std::move(P));
        size_t F = 0;
        while (F < Free.size() && ++Digit[F] == S.Params[Free[F]].Values.size())
          Digit[F++] = 0;
        if (F == Free.size())
          break;
      }
    } else if (!Free.empty()) {
      for (size_t T = 0; T < Limit; ++T) {
        Point P = Best;
        for (size_t J : Free) {
          std::uniform_int_distribution<uint32_t> D(
              0, static_cast<uint32_t>(S.Params[J].Values.size() - 1));
          P.Values[J] = {D(R)};
        }
        Add(std::move(P));
      }
    }
  }
  cap(Out.Moves, Limit, R);
  cap(Out.Rest, Limit - Out.Moves.size(), R);
  return Out;
}

namespace {

/// The first of the fastest of Good, as bestRegion orders ties.
const Point &bestOf(std::span<const std::pair<double, Point>> Good) {
  size_t Best = 0;
  for (size_t I = 1; I < Good.size(); ++I)
    if (Good[I].first < Good[Best].first)
      Best = I;
  return Good[Best].second;
}

/// How many parameters P and Q differ in (a sequence counts as one).
unsigned distance(const Point &P, const Point &Q) {
  unsigned Moved = 0;
  for (size_t J = 0; J < Q.Values.size(); ++J)
    Moved += !sameValue(P.Values[J], Q.Values[J]);
  return Moved;
}

} // namespace

std::vector<std::pair<double, Point>>
otherBasins(std::span<const std::pair<double, Point>> Good,
            unsigned MinDistance) {
  std::vector<std::pair<double, Point>> Out;
  if (Good.empty())
    return Out;
  const Point &B = bestOf(Good);
  for (const auto &E : Good)
    if (distance(E.second, B) >= MinDistance)
      Out.push_back(E);
  return Out;
}

std::vector<Point> farPoints(const Space &S,
                             std::span<const std::pair<double, Point>> Good,
                             const Observations &Seen, unsigned MinDistance,
                             size_t Pool, Rng &R) {
  std::vector<Point> Out;
  if (Good.empty())
    return Out;
  const Point &B = bestOf(Good);
  std::set<Point> Chosen;
  // Random draws: a scan of a cache's allowed points would cost more than
  // the rest of a proposal, and draws that land near the best or on a seen
  // point are few unless the space is nearly spent.
  for (size_t Try = 0; Out.size() < Pool && Try < 4 * Pool; ++Try) {
    Point P = S.random(R);
    if (Seen.seen(P) || distance(P, B) < MinDistance || Chosen.count(P))
      continue;
    Chosen.insert(P);
    Out.push_back(std::move(P));
  }
  return Out;
}

} // namespace r3::search
