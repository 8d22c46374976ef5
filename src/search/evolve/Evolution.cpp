// The outer loop of a campaign: evolution of source variants. Each request
// goes to the next island in turn; an operator is drawn by its rate
// (roulette), its parents uniformly from the occupied cells of that island's
// MAP-Elites archive (Mouret & Clune 2015, "Illuminating search spaces by
// mapping elites"; uniform over cells, not over fitness, is MAP-Elites' own
// selection: the pressure towards fast variants comes from each cell keeping
// only its fastest, while every kind of variant keeps a chance to be a
// parent), and the child it makes is evaluated by the campaign, whose result
// goes back into the archive. Islands (Tanese 1989, "Distributed genetic
// algorithms"; Whitley, Rana & Heckendorn 1999, "The island model genetic
// algorithm") evolve apart and exchange their best variant along a ring
// every few results, which keeps several lineages alive while still
// spreading a discovery; FunSearch (Romera-Paredes et al. 2024,
// "Mathematical discoveries from program search with large language
// models"), AlphaEvolve (Novikov et al. 2025) and OpenEvolve use the same
// arrangement, islands of programs with archives like MAP-Elites', for
// programs that an LLM mutates, which is where this loop is headed.
// Operators may be asynchronous (an LLM call takes seconds), so asking for
// children and receiving them are separate calls, and an operator that
// declines or fails costs a request, never the loop. Genomes are known by
// their canonical key; a child already seen is dropped and asked for again,
// the last time as a random genome found by a scan of the space if need be,
// so that no source variant is produced twice and the loop stops only when
// the space is exhausted.
#include "search/evolve/Evolution.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <utility>

namespace r3::search {

namespace {
/// How many times ready() asks again for children it dropped as repeats.
constexpr unsigned MaxRetryRounds = 8;
/// How many random genomes are drawn looking for an unseen one before the
/// space is scanned.
constexpr unsigned MaxRandomDraws = 16;
/// The largest space that is scanned for an unseen genome.
constexpr uint64_t MaxScan = uint64_t(1) << 16;
/// How many draws look for a second parent other than the first.
constexpr unsigned MaxDistinctParentDraws = 4;

/// FNV-1a, 64 bits: stable across platforms and builds, unlike std::hash.
uint64_t fnv1a(std::string_view Text) {
  uint64_t H = 0xcbf29ce484222325ULL;
  for (unsigned char C : Text) {
    H ^= C;
    H *= 0x100000001b3ULL;
  }
  return H;
}

std::string hex64(uint64_t V) {
  char Buf[17];
  std::snprintf(Buf, sizeof Buf, "%016" PRIx64, V);
  return Buf;
}

/// A genome drawn uniformly from the files and knob values.
SourceGenome randomGenome(const SourceSpaceModel &M, Rng &R) {
  auto Draw = [&R](size_t N) {
    return std::uniform_int_distribution<uint32_t>(
        0, uint32_t(std::max<size_t>(1, N) - 1))(R);
  };
  SourceGenome G;
  G.File = Draw(M.Files.size());
  for (const KnobDomain &K : M.Knobs)
    G.Knobs.push_back(Draw(K.Values.size()));
  return G;
}

/// The genome of index Index in a mixed-radix numbering of the space (the
/// file the lowest digit); Index < M.size().
SourceGenome genomeAt(const SourceSpaceModel &M, uint64_t Index) {
  SourceGenome G;
  uint64_t Files = std::max<size_t>(1, M.Files.size());
  G.File = uint32_t(Index % Files);
  Index /= Files;
  for (const KnobDomain &K : M.Knobs) {
    uint64_t N = std::max<size_t>(1, K.Values.size());
    G.Knobs.push_back(uint32_t(Index % N));
    Index /= N;
  }
  return G;
}

/// A genome not in Seen, or none when the space has none left. Random draws
/// first; when they keep hitting seen genomes (late in a small space, where
/// a few unseen ones are left among thousands), a scan from a random start
/// finds one if any is left, so that the loop stops only when the space is
/// exhausted. A space larger than MaxScan is never scanned (a campaign cannot
/// evaluate that many variants), and Exhausted records a scan that found
/// nothing: Seen only grows, so it stays true.
std::optional<SourceGenome> unseenGenome(const SourceSpaceModel &M,
                                         const std::set<std::string> &Seen,
                                         bool &Exhausted, Rng &R) {
  if (Exhausted)
    return std::nullopt;
  for (unsigned I = 0; I < MaxRandomDraws; ++I)
    if (SourceGenome G = randomGenome(M, R); !Seen.count(G.key(M)))
      return G;
  if (!(M.size() <= double(MaxScan)))
    return std::nullopt;
  uint64_t Size = uint64_t(M.size());
  uint64_t Start = std::uniform_int_distribution<uint64_t>(0, Size - 1)(R);
  for (uint64_t J = 0; J < Size; ++J)
    if (SourceGenome G = genomeAt(M, (Start + J) % Size); !Seen.count(G.key(M)))
      return G;
  Exhausted = true;
  return std::nullopt;
}

/// Adds a random child for Island to Pending, unless the space is exhausted.
void addRandomChild(const SourceSpaceModel &M,
                    const std::set<std::string> &Seen, bool &Exhausted,
                    unsigned Island, Rng &R, std::vector<Offspring> &Pending) {
  if (std::optional<SourceGenome> G = unseenGenome(M, Seen, Exhausted, R))
    Pending.push_back({std::move(*G), {}, "random", Island});
}

using OperatorList =
    std::vector<std::pair<std::unique_ptr<MutationOperator>, double>>;

/// An operator drawn with probability proportional to its rate; null when
/// no operator has a positive rate.
MutationOperator *pickOperator(const OperatorList &Ops, Rng &R) {
  double Total = 0;
  for (const auto &[Op, Rate] : Ops)
    Total += Rate > 0 ? Rate : 0;
  if (!(Total > 0))
    return nullptr;
  double U = std::uniform_real_distribution<double>(0, Total)(R);
  MutationOperator *Last = nullptr;
  for (const auto &[Op, Rate] : Ops) {
    if (!(Rate > 0))
      continue;
    Last = Op.get();
    if (U < Rate)
      return Last;
    U -= Rate;
  }
  return Last; // rounding left U at Total
}

/// An elite of Island, or of the next island along the ring that has any.
const Elite *selectNear(const Archive &A, unsigned Island, Rng &R) {
  for (unsigned J = 0; J < A.islands(); ++J)
    if (const Elite *E = A.select((Island + J) % A.islands(), R))
      return E;
  return nullptr;
}

/// Arity parents for a child on Island, distinct when the archive allows.
std::vector<const Elite *> parentsFor(const Archive &A, unsigned Island,
                                      unsigned Arity, Rng &R) {
  std::vector<const Elite *> Parents;
  for (unsigned K = 0; K < Arity; ++K) {
    const Elite *E = selectNear(A, Island, R);
    for (unsigned D = 1; D < MaxDistinctParentDraws &&
                         std::count(Parents.begin(), Parents.end(), E);
         ++D)
      E = selectNear(A, Island, R);
    Parents.push_back(E);
  }
  return Parents;
}
} // namespace

double SourceSpaceModel::size() const {
  double N = double(std::max<size_t>(1, Files.size()));
  for (const KnobDomain &K : Knobs)
    N *= double(std::max<size_t>(1, K.Values.size()));
  return N;
}

std::string SourceGenome::key(const SourceSpaceModel &M) const {
  std::string Key = "file=" + std::to_string(File);
  // A knob the genome lacks has its first value, as a campaign would
  // compile it; an index out of range is kept visible rather than aliased.
  for (size_t I = 0; I < M.Knobs.size(); ++I) {
    uint32_t V = I < Knobs.size() ? Knobs[I] : 0;
    const KnobDomain &K = M.Knobs[I];
    Key += "," + K.Name + "=" +
           (V < K.Values.size() ? K.Values[V] : "?" + std::to_string(V));
  }
  if (!Text.empty())
    Key += ",text=" + hex64(fnv1a(Text));
  return Key;
}

Evolution::Evolution(SourceSpaceModel M, EvolutionOptions O)
    : Model(std::move(M)), Options(std::move(O)),
      Grid(Options.Islands, Options.Axes), R(Options.Seed) {}

void Evolution::addOperator(std::unique_ptr<MutationOperator> Op, double Rate) {
  Operators.emplace_back(std::move(Op), Rate);
}

void Evolution::request(unsigned Count) {
  for (unsigned I = 0; I < Count; ++I) {
    unsigned Island = NextIsland;
    NextIsland = (NextIsland + 1) % Grid.islands();
    MutationOperator *Op = Grid.best() ? pickOperator(Operators, R) : nullptr;
    if (Op) {
      // An operator that cannot serve the request (nothing to change, no
      // usable parent) declines it by not counting it in flight; a random
      // child takes its place so that the request is not lost.
      unsigned Before = Op->inFlight();
      Op->submit({parentsFor(Grid, Island, Op->arity(), R), Island}, R);
      if (Op->inFlight() > Before)
        continue;
    }
    addRandomChild(Model, Seen, Exhausted, Island, R, Pending);
  }
}

std::vector<Offspring> Evolution::ready() {
  std::vector<Offspring> Out;
  for (unsigned Round = 0;; ++Round) {
    std::vector<Offspring> Got = std::exchange(Pending, {});
    for (auto &[Op, Rate] : Operators)
      for (Offspring &C : Op->collect())
        Got.push_back(std::move(C));
    std::vector<unsigned> DroppedIslands;
    for (Offspring &C : Got) {
      if (Seen.insert(C.Genome.key(Model)).second)
        Out.push_back(std::move(C));
      else
        DroppedIslands.push_back(C.Island);
    }
    if (DroppedIslands.empty() || Round == MaxRetryRounds)
      return Out;
    // Repeats are asked for again from the operators; when they keep
    // repeating (a converged archive, a nearly exhausted space), the last
    // round asks for random genomes, which exist while the space has any
    // left.
    if (Round + 1 < MaxRetryRounds) {
      request(unsigned(DroppedIslands.size()));
      continue;
    }
    for (unsigned Island : DroppedIslands)
      addRandomChild(Model, Seen, Exhausted, Island, R, Pending);
  }
}

void Evolution::markSeen(const SourceGenome &G) { Seen.insert(G.key(Model)); }

void Evolution::report(const Elite &E) {
  markSeen(E.Genome);
  Grid.offer(E);
  ++Reports;
  if (Options.MigrationInterval && Reports % Options.MigrationInterval == 0)
    Grid.migrate();
}

unsigned Evolution::inFlight() const {
  unsigned N = unsigned(Pending.size());
  for (const auto &[Op, Rate] : Operators)
    N += Op->inFlight();
  return N;
}

} // namespace r3::search
