// The outer loop of a campaign: evolution of source variants with a
// MAP-Elites archive split into islands. A source variant is a genome (which
// source file, which value of each knob, or a rewritten text); its fitness is
// the best verified time its inner loop found (lower is better); its
// behaviour descriptor places it in a cell of its island's archive (defaults:
// registers and shared memory per thread from the compile report). Each cell
// keeps its fittest variant, so the archive holds good variants of many
// kinds rather than one lineage; parents are drawn from it, children come
// from mutation operators, and every few variants each island sends its best
// to the next island (a ring).
#pragma once

#include "search/Space.h"
#include "support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace r3::search {

/// A preprocessor knob of the source: -DName=Value for one of Values.
struct KnobDomain {
  std::string Name;
  std::vector<std::string> Values;
};

/// What the outer loop may vary.
struct SourceSpaceModel {
  /// The source files; File 0 of a genome is the kernel's own source.
  std::vector<std::string> Files;
  std::vector<KnobDomain> Knobs;
  /// How many genomes the knobs and files allow (LLM rewrites aside).
  double size() const;
};

/// One source variant. Text, when not empty, replaces the file's text (an
/// LLM rewrite); knobs still apply.
struct SourceGenome {
  uint32_t File = 0;
  std::vector<uint32_t> Knobs; ///< per knob, an index into its Values
  std::string Text;
  /// The canonical text of the genome, unique per genome: "file=0,TILE=16,
  /// UNROLL=4" (and ",text=<64-bit hash>" when Text is set).
  std::string key(const SourceSpaceModel &M) const;
  friend bool operator==(const SourceGenome &, const SourceGenome &) = default;
};

/// A source variant whose inner loop has produced a fitness.
struct Elite {
  int64_t Id = 0; ///< the campaign's id of the variant
  SourceGenome Genome;
  double Fitness = 0;             ///< best verified ms
  std::vector<double> Descriptor; ///< one value per axis
  unsigned Island = 0;
};

/// One axis of the behaviour grid: values are clamped into [Min, Max] and
/// split into Bins equal bins.
struct DescriptorAxis {
  std::string Name; ///< "registers", "shared_bytes", "knob:TILE", ...
  double Min = 0, Max = 1;
  unsigned Bins = 8;
};

/// A child an operator produced, with its lineage.
struct Offspring {
  SourceGenome Genome;
  std::vector<int64_t> Parents; ///< variant ids
  std::string Operator; ///< "knob", "rewrite", "crossover", "llm", "random"
  unsigned Island = 0;
  /// The operator's id of the work that made it (the LLM call), 0 if none.
  uint64_t Tag = 0;
};

/// What an operator is asked for. The parents point into the archive and are
/// valid only during submit(): an operator that works later copies them.
struct MutationRequest {
  std::vector<const Elite *> Parents; ///< arity() of them, drawn uniformly
  unsigned Island = 0;
};

/// A way of making a child variant. Operators may be asynchronous (an LLM
/// call takes seconds): submit() starts work, collect() returns what is
/// ready. The knob operators finish inside submit(). An operator that cannot
/// serve a request declines it by not counting it in inFlight(), and the loop
/// makes a random child instead; a request that fails later leaves
/// inFlight() and yields nothing, and the loop goes on with the next
/// request.
class MutationOperator {
public:
  virtual ~MutationOperator() = default;
  virtual std::string_view name() const = 0;
  /// How many parents a request carries (1 for mutation, 2 for crossover).
  virtual unsigned arity() const = 0;
  virtual void submit(const MutationRequest &Req, Rng &R) = 0;
  /// The children ready now; each returned once.
  virtual std::vector<Offspring> collect() = 0;
  /// How many submitted requests have not been collected yet.
  virtual unsigned inFlight() const = 0;
};

/// Changes one or two knobs (or the file) of the parent to other values.
std::unique_ptr<MutationOperator> makeKnobMutation(const SourceSpaceModel &M);
/// Changes one or two of the rewrite operator's knobs (names starting
/// R3_RW_, compile/Rewrite.h) of the parent; declines where there are none.
std::unique_ptr<MutationOperator> makeRewriteMutation(const SourceSpaceModel &M);
/// Each knob (and the file) from one of two parents, uniformly.
std::unique_ptr<MutationOperator> makeCrossover(const SourceSpaceModel &M);

/// A MAP-Elites grid per island.
class Archive {
public:
  Archive(unsigned Islands, std::vector<DescriptorAxis> Axes);
  /// Offers E to its island's cell; true when it became that cell's elite.
  bool offer(const Elite &E);
  /// An elite of the island drawn uniformly over its occupied cells (not
  /// over fitness: MAP-Elites' selection), if it has any.
  const Elite *select(unsigned Island, Rng &R) const;
  /// Each island's best elite is offered to the next island (a ring).
  void migrate();
  /// The cell index of a descriptor (row-major over the axes).
  size_t cellOf(const std::vector<double> &Descriptor) const;
  /// The elites of an island by cell.
  const std::map<size_t, Elite> &cells(unsigned Island) const;
  const Elite *best() const; ///< over all islands
  unsigned islands() const { return unsigned(Grids.size()); }
  const std::vector<DescriptorAxis> &axes() const { return Axes; }

private:
  std::vector<DescriptorAxis> Axes;
  std::vector<std::map<size_t, Elite>> Grids;
};

struct EvolutionOptions {
  unsigned Islands = 2;
  unsigned MigrationInterval = 10; ///< variants reported between migrations
  std::vector<DescriptorAxis> Axes;
  uint64_t Seed = 1;
};

/// The outer loop: asks operators for children of archive elites and keeps
/// the archive. Children that repeat a genome already produced are dropped
/// here (the campaign's identity hash catches the rest).
class Evolution {
public:
  Evolution(SourceSpaceModel M, EvolutionOptions O);
  /// An operator, chosen with probability proportional to Rate.
  void addOperator(std::unique_ptr<MutationOperator> Op, double Rate);
  /// Starts making Count children (round robin over islands). Before any
  /// variant has a fitness, children are random genomes ("random"
  /// operator); so are those of a request an operator declined.
  void request(unsigned Count);
  /// The children ready now, without repeats of genomes already seen.
  /// Repeats are asked for again a few times, the last time as random
  /// genomes; with the knob operators, empty and inFlight() == 0 once every
  /// genome of a space of up to 65536 genomes has been seen.
  std::vector<Offspring> ready();
  /// Records a genome as produced (resume: every variant in the history),
  /// so it is not produced again.
  void markSeen(const SourceGenome &G);
  /// A variant's result; offers it to the archive and migrates every
  /// MigrationInterval reports.
  void report(const Elite &E);
  const Archive &archive() const { return Grid; }
  const SourceSpaceModel &model() const { return Model; }
  /// Requests not yet answered by any operator.
  unsigned inFlight() const;

private:
  SourceSpaceModel Model;
  EvolutionOptions Options;
  Archive Grid;
  Rng R;
  std::vector<std::pair<std::unique_ptr<MutationOperator>, double>> Operators;
  std::vector<Offspring> Pending;
  std::set<std::string> Seen;
  unsigned Reports = 0, NextIsland = 0;
  /// No genome of the knob space is left unseen (Seen only grows).
  bool Exhausted = false;
};

} // namespace r3::search
