// The embedded mutation operators of the outer loop, which need no LLM: knob
// mutation (a point mutation of a genome: one knob, or the source file, set
// to another value; now and then two at once, so that a pair of knobs that
// only pays off together can be reached) and uniform crossover (each gene from
// one of two parents, so that good settings found in different lineages can
// meet). Both finish inside submit(); they copy what they need from the
// request there, so the parents may change afterwards.
#include "search/evolve/Evolution.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace r3::search {

namespace {
/// How often a knob mutation changes two genes instead of one.
constexpr double TwoGeneProbability = 0.1;

/// G with one knob index per model knob, each in range (a genome from a
/// history written under another model may lack some or have extra).
SourceGenome normalized(SourceGenome G, const SourceSpaceModel &M) {
  G.Knobs.resize(M.Knobs.size(), 0);
  for (size_t I = 0; I < M.Knobs.size(); ++I)
    if (G.Knobs[I] >= M.Knobs[I].Values.size())
      G.Knobs[I] = 0;
  if (G.File >= std::max<size_t>(1, M.Files.size())) {
    G.File = 0;
    G.Text.clear();
  }
  return G;
}

/// A gene of a genome: a knob index, or FileGene for the source file.
constexpr size_t FileGene = ~size_t(0);

/// The genes that have more than one value, the file last (so that it is
/// picked with probability 1/(k+1) among k knobs).
std::vector<size_t> mutableGenes(const SourceSpaceModel &M) {
  std::vector<size_t> Genes;
  for (size_t I = 0; I < M.Knobs.size(); ++I)
    if (M.Knobs[I].Values.size() > 1)
      Genes.push_back(I);
  if (M.Files.size() > 1)
    Genes.push_back(FileGene);
  return Genes;
}

/// An index in [0, N) other than Current; N > 1.
uint32_t otherValue(uint32_t Current, size_t N, Rng &R) {
  std::uniform_int_distribution<uint32_t> Pick(0, uint32_t(N - 2));
  uint32_t V = Pick(R);
  return V >= Current ? V + 1 : V;
}

/// Sets gene Gene of G to another value. A rewritten text belongs to its
/// file, so a change of file drops it.
void mutateGene(SourceGenome &G, size_t Gene, const SourceSpaceModel &M,
                Rng &R) {
  if (Gene == FileGene) {
    G.File = otherValue(G.File, M.Files.size(), R);
    G.Text.clear();
    return;
  }
  G.Knobs[Gene] = otherValue(G.Knobs[Gene], M.Knobs[Gene].Values.size(), R);
}

/// The children of a synchronous operator, kept until collected.
class SynchronousOperator : public MutationOperator {
public:
  std::vector<Offspring> collect() override { return std::exchange(Ready, {}); }
  unsigned inFlight() const override { return unsigned(Ready.size()); }

protected:
  std::vector<Offspring> Ready;
};

/// The rewrite operator's knobs (compile/Rewrite.h's names).
std::vector<size_t> rewriteGenes(const SourceSpaceModel &M) {
  std::vector<size_t> Genes;
  for (size_t I = 0; I < M.Knobs.size(); ++I)
    if (M.Knobs[I].Values.size() > 1 && M.Knobs[I].Name.rfind("R3_RW_", 0) == 0)
      Genes.push_back(I);
  return Genes;
}

/// A point mutation over some of the genes: all of them ("knob"), or the
/// rewrite operator's ("rewrite").
class KnobMutation final : public SynchronousOperator {
public:
  KnobMutation(const SourceSpaceModel &M, std::vector<size_t> G,
               std::string_view Name)
      : Model(M), Genes(std::move(G)), Name(Name) {}
  std::string_view name() const override { return Name; }
  unsigned arity() const override { return 1; }

  void submit(const MutationRequest &Req, Rng &R) override {
    if (Genes.empty() || Req.Parents.empty() || !Req.Parents[0])
      return;
    const Elite &Parent = *Req.Parents[0];
    SourceGenome Child = normalized(Parent.Genome, Model);
    for (size_t Gene : pickGenes(R))
      mutateGene(Child, Gene, Model, R);
    Ready.push_back(
        {std::move(Child), {Parent.Id}, std::string(Name), Req.Island});
  }

private:
  /// One gene, or with TwoGeneProbability two distinct ones.
  std::vector<size_t> pickGenes(Rng &R) const {
    std::vector<size_t> Picked;
    size_t Count =
        Genes.size() > 1 && std::bernoulli_distribution(TwoGeneProbability)(R)
            ? 2
            : 1;
    std::sample(Genes.begin(), Genes.end(), std::back_inserter(Picked), Count,
                R);
    return Picked;
  }

  SourceSpaceModel Model;
  std::vector<size_t> Genes;
  std::string_view Name;
};

class Crossover final : public SynchronousOperator {
public:
  explicit Crossover(const SourceSpaceModel &M) : Model(M) {}
  std::string_view name() const override { return "crossover"; }
  unsigned arity() const override { return 2; }

  void submit(const MutationRequest &Req, Rng &R) override {
    if (Req.Parents.size() < 2 || !Req.Parents[0] || !Req.Parents[1] ||
        mutableGenes(Model).empty())
      return;
    const Elite &A = *Req.Parents[0], &B = *Req.Parents[1];
    SourceGenome Child =
        cross(normalized(A.Genome, Model), normalized(B.Genome, Model), R);
    Ready.push_back({std::move(Child), {A.Id, B.Id}, "crossover", Req.Island});
  }

private:
  /// Each knob from A or B; the file and its text together from one of them.
  static SourceGenome cross(const SourceGenome &A, const SourceGenome &B,
                            Rng &R) {
    std::bernoulli_distribution FromA(0.5);
    SourceGenome Child = FromA(R) ? A : B;
    for (size_t I = 0; I < Child.Knobs.size(); ++I)
      Child.Knobs[I] = FromA(R) ? A.Knobs[I] : B.Knobs[I];
    return Child;
  }

  SourceSpaceModel Model;
};
} // namespace

std::unique_ptr<MutationOperator> makeKnobMutation(const SourceSpaceModel &M) {
  return std::make_unique<KnobMutation>(M, mutableGenes(M), "knob");
}

std::unique_ptr<MutationOperator>
makeRewriteMutation(const SourceSpaceModel &M) {
  return std::make_unique<KnobMutation>(M, rewriteGenes(M), "rewrite");
}

std::unique_ptr<MutationOperator> makeCrossover(const SourceSpaceModel &M) {
  return std::make_unique<Crossover>(M);
}

} // namespace r3::search
