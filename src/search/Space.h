// The search space of one level of a campaign (the inner loop's compiler and
// launch settings, or a tuning cache's parameters in simulation): a list of
// parameters, each ordinal, categorical or a sequence (a pass pipeline drawn
// from an alphabet of passes), and optionally an explicit list of the valid
// points. Strategies see only this model; what a parameter means (a pass, a
// block size) is the campaign's business.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace r3::search {

/// The random engine of every strategy; seeded by the campaign.
using Rng = std::mt19937_64;

enum class ParamKind {
  Ordinal,     ///< values in an order that matters (block sizes, opt levels)
  Categorical, ///< unordered choices (toolchains, base pipelines)
  Sequence     ///< an ordered list of alphabet entries (extra passes)
};

struct Param {
  std::string Name;
  ParamKind Kind = ParamKind::Categorical;
  /// Ordinal and Categorical: the values as text (Ordinal: in their order).
  /// Sequence: the alphabet (for pipelines: pass names).
  std::vector<std::string> Values;
  /// Ordinal only: the numeric value of each entry of Values, when they are
  /// numbers (block sizes); empty: the index is the value.
  std::vector<double> Numbers;
  unsigned MinLength = 0, MaxLength = 0; ///< Sequence only
};

/// One configuration: per parameter, the index of its value in Values (one
/// element), or for a Sequence the indices of its entries in order (0 to
/// MaxLength elements).
struct Point {
  std::vector<std::vector<uint32_t>> Values;
  friend bool operator==(const Point &, const Point &) = default;
  friend auto operator<=>(const Point &, const Point &) = default;
};

/// Whether two values of one parameter are equal: a single value (every
/// parameter but a sequence) compared in place, without a call (a scan of
/// a cache's points compares tens of thousands of them a proposal).
inline bool sameValue(const std::vector<uint32_t> &A,
                      const std::vector<uint32_t> &B) {
  if (A.size() != B.size())
    return false;
  return A.size() == 1 ? A[0] == B[0] : A == B;
}

struct PointHash {
  size_t operator()(const Point &P) const;
};

/// The valid points of a constrained space, in their order, with a hash map
/// of their positions kept in step: whether a point is allowed, and where, is
/// a probe, not a scan (a
/// tuning cache holds tens of thousands of points, and strategies look for
/// allowed neighbours at every proposal). Reads like a vector; changes go
/// through assignment, push_back and clear, which keep the map current.
class PointList {
public:
  PointList() = default;
  PointList(std::vector<Point> Ps) { *this = std::move(Ps); }
  PointList &operator=(std::vector<Point> Ps);
  void push_back(Point P);
  void clear();

  size_t size() const { return Ps.size(); }
  bool empty() const { return Ps.empty(); }
  const Point &operator[](size_t I) const { return Ps[I]; }
  std::vector<Point>::const_iterator begin() const { return Ps.begin(); }
  std::vector<Point>::const_iterator end() const { return Ps.end(); }
  bool contains(const Point &P) const { return Index.count(P) > 0; }
  /// The position of P's first occurrence, or none.
  std::optional<size_t> indexOf(const Point &P) const {
    auto It = Index.find(P);
    if (It == Index.end())
      return std::nullopt;
    return It->second;
  }
  /// The position of the first point that repeats an earlier one, if any.
  std::optional<size_t> firstRepeat() const { return Repeat; }
  /// The points as one row of value indices each, when every parameter of
  /// every point holds one value (no sequences): scans compare integers
  /// instead of vectors. Null otherwise.
  const uint32_t *rows() const { return Flat ? Rows.data() : nullptr; }
  size_t rowWidth() const { return Width; }
  friend bool operator==(const PointList &A, const PointList &B) {
    return A.Ps == B.Ps;
  }

private:
  void add(size_t I);
  void addRow(const Point &P);

  std::vector<Point> Ps;
  std::unordered_map<Point, size_t, PointHash> Index; ///< first positions
  std::optional<size_t> Repeat;
  std::vector<uint32_t> Rows;
  size_t Width = 0;
  bool Flat = true;
};

class Space {
public:
  Space() = default;
  explicit Space(std::vector<Param> P) : Params(std::move(P)) {}

  std::vector<Param> Params;
  /// The valid points, when only some combinations are valid (a tuning
  /// cache's entries); empty: every combination is valid.
  PointList Allowed;

  /// How many points there are (Allowed's size when it is given); a double
  /// because pass sequences make spaces astronomically large.
  double size() const;
  /// Whether the space is small enough to list (size() <= Limit).
  bool enumerable(double Limit = 1e6) const;
  /// Every point, in lexicographic order of their indices; only when
  /// enumerable().
  std::vector<Point> enumerate() const;
  /// A point drawn uniformly from the parameters' domains (from Allowed when
  /// given); sequence lengths uniform in [MinLength, MaxLength].
  Point random(Rng &R) const;
  /// Points one step away: one ordinal moved to a neighbouring value, one
  /// categorical changed, one sequence entry inserted, removed, replaced or
  /// swapped with its neighbour. With Allowed, only allowed points.
  std::vector<Point> neighbours(const Point &P) const;
  /// Whether P has the right shape and every index in range (and is in
  /// Allowed when given).
  bool contains(const Point &P) const;
  /// The canonical text of P, unique per point: "block_x=128,pipeline=
  /// default<O3>,passes=[licm;gvn]". Used as a key and shown to users.
  std::string describe(const Point &P) const;
  /// The value of parameter I in P as text (a sequence: its entries joined
  /// with ',').
  std::string valueText(const Point &P, size_t I) const;
  /// The index of the parameter named Name, or -1.
  int find(const std::string &Name) const;
};

} // namespace r3::search
