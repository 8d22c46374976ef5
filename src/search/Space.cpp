// The search-space model: counting, listing, sampling and neighbourhoods of
// points, and their canonical text. Spaces with pass sequences are far too
// large to list, so size() is a double and only enumerable() spaces are ever
// enumerated. With an explicit Allowed list (a tuning cache's entries) every
// operation stays inside it: sampling draws from it, and an ordinal's
// neighbouring value is the nearest allowed one in each direction, so that
// constrained spaces (where index + 1 is often invalid) still have
// neighbourhoods.
#include "search/Space.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <set>

namespace r3::search {

namespace {

double paramSize(const Param &P) {
  if (P.Kind != ParamKind::Sequence)
    return static_cast<double>(P.Values.size());
  double Alphabet = static_cast<double>(P.Values.size()), Sum = 0;
  for (unsigned L = P.MinLength; L <= P.MaxLength; ++L)
    Sum += std::pow(Alphabet, static_cast<double>(L));
  return Sum;
}

/// Every sequence over Alphabet entries with a length in [Min, Max], in
/// lexicographic order: a pre-order walk of the trie of sequences.
void listSequences(const Param &P, std::vector<uint32_t> &Prefix,
                   std::vector<std::vector<uint32_t>> &Out) {
  if (Prefix.size() >= P.MinLength)
    Out.push_back(Prefix);
  if (Prefix.size() >= P.MaxLength)
    return;
  for (uint32_t V = 0; V < P.Values.size(); ++V) {
    Prefix.push_back(V);
    listSequences(P, Prefix, Out);
    Prefix.pop_back();
  }
}

/// Every value of one parameter, in lexicographic order.
std::vector<std::vector<uint32_t>> paramValues(const Param &P) {
  std::vector<std::vector<uint32_t>> Out;
  if (P.Kind == ParamKind::Sequence) {
    std::vector<uint32_t> Prefix;
    listSequences(P, Prefix, Out);
    return Out;
  }
  for (uint32_t V = 0; V < P.Values.size(); ++V)
    Out.push_back({V});
  return Out;
}

uint32_t uniformIndex(Rng &R, size_t N) {
  return static_cast<uint32_t>(
      std::uniform_int_distribution<size_t>(0, N - 1)(R));
}

bool valueInRange(const Param &P, const std::vector<uint32_t> &V) {
  if (P.Kind == ParamKind::Sequence) {
    if (V.size() < P.MinLength || V.size() > P.MaxLength)
      return false;
  } else if (V.size() != 1) {
    return false;
  }
  return std::all_of(V.begin(), V.end(),
                     [&](uint32_t I) { return I < P.Values.size(); });
}

/// Whether B is A with one entry removed.
bool isOneRemoval(const std::vector<uint32_t> &A,
                  const std::vector<uint32_t> &B) {
  if (B.size() + 1 != A.size())
    return false;
  size_t I = 0;
  while (I < B.size() && A[I] == B[I])
    ++I;
  return std::equal(B.begin() + I, B.end(), A.begin() + I + 1);
}

/// Whether two sequences of the same length differ by one replaced entry or
/// one swap of neighbours.
bool isOneReplaceOrSwap(const std::vector<uint32_t> &A,
                        const std::vector<uint32_t> &B) {
  std::vector<size_t> Diff;
  for (size_t I = 0; I < A.size(); ++I)
    if (A[I] != B[I])
      Diff.push_back(I);
  if (Diff.size() == 1)
    return true;
  return Diff.size() == 2 && Diff[1] == Diff[0] + 1 &&
         A[Diff[0]] == B[Diff[1]] && A[Diff[1]] == B[Diff[0]];
}

/// Whether B is one sequence edit (insert, remove, replace, swap) from A.
bool isOneEdit(const std::vector<uint32_t> &A, const std::vector<uint32_t> &B) {
  if (A.size() == B.size())
    return A != B && isOneReplaceOrSwap(A, B);
  return isOneRemoval(A, B) || isOneRemoval(B, A);
}

/// The sequences one edit away from V within P's length bounds.
std::vector<std::vector<uint32_t>>
sequenceEdits(const Param &P, const std::vector<uint32_t> &V) {
  std::set<std::vector<uint32_t>> Out;
  uint32_t A = static_cast<uint32_t>(P.Values.size());
  for (size_t Pos = 0; Pos <= V.size() && V.size() < P.MaxLength; ++Pos)
    for (uint32_t E = 0; E < A; ++E) {
      std::vector<uint32_t> W = V;
      W.insert(W.begin() + Pos, E);
      Out.insert(std::move(W));
    }
  for (size_t Pos = 0; Pos < V.size() && V.size() > P.MinLength; ++Pos) {
    std::vector<uint32_t> W = V;
    W.erase(W.begin() + Pos);
    Out.insert(std::move(W));
  }
  for (size_t Pos = 0; Pos < V.size(); ++Pos)
    for (uint32_t E = 0; E < A; ++E) {
      std::vector<uint32_t> W = V;
      W[Pos] = E;
      Out.insert(std::move(W));
    }
  for (size_t Pos = 0; Pos + 1 < V.size(); ++Pos) {
    std::vector<uint32_t> W = V;
    std::swap(W[Pos], W[Pos + 1]);
    Out.insert(std::move(W));
  }
  Out.erase(V);
  return {Out.begin(), Out.end()};
}

/// The values one step from V for one parameter of an unconstrained space.
std::vector<std::vector<uint32_t>> paramSteps(const Param &P,
                                              const std::vector<uint32_t> &V) {
  if (P.Kind == ParamKind::Sequence)
    return sequenceEdits(P, V);
  std::vector<std::vector<uint32_t>> Out;
  uint32_t X = V[0];
  if (P.Kind == ParamKind::Ordinal) {
    if (X > 0)
      Out.push_back({X - 1});
    if (X + 1 < P.Values.size())
      Out.push_back({X + 1});
    return Out;
  }
  for (uint32_t C = 0; C < P.Values.size(); ++C)
    if (C != X)
      Out.push_back({C});
  return Out;
}

/// The index of the only parameter in which A and B differ, or -1 (equal, or
/// differing in several).
int onlyDifference(const Point &A, const Point &B) {
  int Found = -1;
  for (size_t I = 0; I < A.Values.size(); ++I) {
    if (A.Values[I] == B.Values[I])
      continue;
    if (Found >= 0)
      return -1;
    Found = static_cast<int>(I);
  }
  return Found;
}

/// Escapes the characters describe() uses as separators, so that the text
/// stays unique whatever the values contain.
std::string escapeValue(const std::string &V) {
  std::string Out;
  for (char C : V) {
    if (C == '\\' || C == ',' || C == ';' || C == '[' || C == ']')
      Out += '\\';
    Out += C;
  }
  return Out;
}

std::string entryText(const Param &P, uint32_t I) {
  if (I < P.Values.size())
    return P.Values[I];
  return "<invalid " + std::to_string(I) + ">";
}

} // namespace

double Space::size() const {
  if (!Allowed.empty())
    return static_cast<double>(Allowed.size());
  double Product = 1;
  for (const Param &P : Params)
    Product *= paramSize(P);
  return Product;
}

bool Space::enumerable(double Limit) const { return size() <= Limit; }

std::vector<Point> Space::enumerate() const {
  assert(enumerable() && "enumerate() of a space too large to list");
  if (!Allowed.empty()) {
    std::vector<Point> Out(Allowed.begin(), Allowed.end());
    std::sort(Out.begin(), Out.end());
    Out.erase(std::unique(Out.begin(), Out.end()), Out.end());
    return Out;
  }
  if (!enumerable() || size() == 0)
    return {};
  std::vector<std::vector<std::vector<uint32_t>>> Domains;
  for (const Param &P : Params)
    Domains.push_back(paramValues(P));
  // An odometer whose last parameter turns fastest: lexicographic order.
  std::vector<size_t> Digit(Params.size(), 0);
  std::vector<Point> Out;
  while (true) {
    Point Q;
    for (size_t I = 0; I < Params.size(); ++I)
      Q.Values.push_back(Domains[I][Digit[I]]);
    Out.push_back(std::move(Q));
    size_t I = Params.size();
    while (I > 0 && ++Digit[I - 1] == Domains[I - 1].size())
      Digit[--I] = 0;
    if (I == 0)
      return Out;
  }
}

Point Space::random(Rng &R) const {
  if (!Allowed.empty())
    return Allowed[uniformIndex(R, Allowed.size())];
  Point Q;
  for (const Param &P : Params) {
    std::vector<uint32_t> V;
    unsigned Length = 1;
    if (P.Kind == ParamKind::Sequence)
      Length =
          std::uniform_int_distribution<unsigned>(P.MinLength, P.MaxLength)(R);
    for (unsigned K = 0; K < Length && !P.Values.empty(); ++K)
      V.push_back(uniformIndex(R, P.Values.size()));
    Q.Values.push_back(std::move(V));
  }
  return Q;
}

namespace {

/// The nearest allowed neighbours for a constrained space, found in one scan
/// of Allowed: every point one categorical change or one sequence edit away,
/// and for each ordinal the closest allowed value below and above.
std::vector<Point> allowedNeighbours(const Space &S, const Point &P) {
  std::vector<const Point *> Below(S.Params.size()), Above(S.Params.size());
  std::vector<Point> Out;
  for (const Point &Q : S.Allowed) {
    int I = onlyDifference(P, Q);
    if (I < 0)
      continue;
    const Param &Par = S.Params[I];
    if (Par.Kind == ParamKind::Categorical)
      Out.push_back(Q);
    else if (Par.Kind == ParamKind::Sequence &&
             isOneEdit(P.Values[I], Q.Values[I]))
      Out.push_back(Q);
    else if (Par.Kind == ParamKind::Ordinal) {
      uint32_t X = P.Values[I][0], Y = Q.Values[I][0];
      const Point *&Slot = Y < X ? Below[I] : Above[I];
      uint32_t Best = Slot ? Slot->Values[I][0] : 0;
      if (!Slot || (Y < X ? Y > Best : Y < Best))
        Slot = &Q;
    }
  }
  for (size_t I = 0; I < S.Params.size(); ++I) {
    if (Below[I])
      Out.push_back(*Below[I]);
    if (Above[I])
      Out.push_back(*Above[I]);
  }
  std::sort(Out.begin(), Out.end());
  Out.erase(std::unique(Out.begin(), Out.end()), Out.end());
  return Out;
}

/// Whether every parameter of S holds one value (no sequences) and P has
/// that shape: then neighbours can be found by probing the index.
bool probeable(const Space &S, const Point &P) {
  for (size_t I = 0; I < S.Params.size(); ++I)
    if (S.Params[I].Kind == ParamKind::Sequence || P.Values[I].size() != 1 ||
        P.Values[I][0] >= S.Params[I].Values.size())
      return false;
  return true;
}

} // namespace

size_t PointHash::operator()(const Point &P) const {
  uint64_t H = 0xcbf29ce484222325ULL; // FNV-1a over the indices
  for (const auto &V : P.Values) {
    for (uint32_t X : V)
      H = (H ^ X) * 0x100000001b3ULL;
    H = (H ^ 0xffffffffULL) * 0x100000001b3ULL; // ends a parameter
  }
  return static_cast<size_t>(H);
}

PointList &PointList::operator=(std::vector<Point> New) {
  clear();
  Ps = std::move(New);
  Index.reserve(Ps.size());
  for (size_t I = 0; I < Ps.size(); ++I)
    add(I);
  return *this;
}

void PointList::push_back(Point P) {
  Ps.push_back(std::move(P));
  add(Ps.size() - 1);
}

void PointList::add(size_t I) {
  if (!Index.emplace(Ps[I], I).second && !Repeat)
    Repeat = I;
  addRow(Ps[I]);
}

void PointList::clear() {
  Ps.clear();
  Index.clear();
  Repeat.reset();
  Rows.clear();
  Width = 0;
  Flat = true;
}

void PointList::addRow(const Point &P) {
  if (!Flat)
    return;
  bool Fits = Rows.empty() || P.Values.size() == Width;
  for (const auto &V : P.Values)
    Fits = Fits && V.size() == 1;
  if (!Fits) {
    Flat = false;
    Rows.clear();
    return;
  }
  Width = P.Values.size();
  for (const auto &V : P.Values)
    Rows.push_back(V[0]);
}

std::vector<Point> Space::neighbours(const Point &P) const {
  if (P.Values.size() != Params.size())
    return {};
  if (!Allowed.empty() && !probeable(*this, P))
    return allowedNeighbours(*this, P);
  if (!Allowed.empty()) {
    // What allowedNeighbours finds, by probing: every allowed point one
    // categorical change away, and per ordinal the closest allowed value
    // below and above.
    std::vector<Point> Out;
    Point Q = P;
    for (size_t I = 0; I < Params.size(); ++I) {
      uint32_t X = P.Values[I][0];
      uint32_t N = static_cast<uint32_t>(Params[I].Values.size());
      auto Probe = [&](uint32_t V) {
        Q.Values[I][0] = V;
        bool Found = Allowed.contains(Q);
        if (Found)
          Out.push_back(Q);
        return Found;
      };
      if (Params[I].Kind == ParamKind::Categorical) {
        for (uint32_t V = 0; V < N; ++V)
          if (V != X)
            Probe(V);
      } else {
        for (uint32_t V = X; V-- > 0;)
          if (Probe(V))
            break;
        for (uint32_t V = X + 1; V < N; ++V)
          if (Probe(V))
            break;
      }
      Q.Values[I][0] = X;
    }
    std::sort(Out.begin(), Out.end());
    return Out;
  }
  std::vector<Point> Out;
  for (size_t I = 0; I < Params.size(); ++I) {
    if (!valueInRange(Params[I], P.Values[I]))
      continue;
    for (std::vector<uint32_t> &V : paramSteps(Params[I], P.Values[I])) {
      Point Q = P;
      Q.Values[I] = std::move(V);
      Out.push_back(std::move(Q));
    }
  }
  return Out;
}

bool Space::contains(const Point &P) const {
  if (P.Values.size() != Params.size())
    return false;
  for (size_t I = 0; I < Params.size(); ++I)
    if (!valueInRange(Params[I], P.Values[I]))
      return false;
  return Allowed.empty() || Allowed.contains(P);
}

std::string Space::describe(const Point &P) const {
  std::string Out;
  for (size_t I = 0; I < Params.size() && I < P.Values.size(); ++I) {
    const Param &Par = Params[I];
    if (I)
      Out += ',';
    Out += Par.Name + "=";
    if (Par.Kind != ParamKind::Sequence) {
      Out += P.Values[I].empty() ? std::string("<none>")
                                 : escapeValue(entryText(Par, P.Values[I][0]));
      continue;
    }
    Out += '[';
    for (size_t K = 0; K < P.Values[I].size(); ++K)
      Out += (K ? ";" : "") + escapeValue(entryText(Par, P.Values[I][K]));
    Out += ']';
  }
  return Out;
}

std::string Space::valueText(const Point &P, size_t I) const {
  if (I >= Params.size() || I >= P.Values.size())
    return "";
  std::string Out;
  for (size_t K = 0; K < P.Values[I].size(); ++K)
    Out += (K ? "," : "") + entryText(Params[I], P.Values[I][K]);
  return Out;
}

int Space::find(const std::string &Name) const {
  for (size_t I = 0; I < Params.size(); ++I)
    if (Params[I].Name == Name)
      return static_cast<int>(I);
  return -1;
}

} // namespace r3::search
