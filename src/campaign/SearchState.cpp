// The search state and its updates (see SearchState.h): candidates
// made from the search, results applied to it, and a resume that rebuilds it
// from the history by applying the committed results again in commit order.
// Live and resumed results go through the same code (applyEvaluation), so a
// resumed search is the search that was running.
#include "campaign/SearchState.h"
#include "support/FileUtil.h"

#include "campaign/KernelBudget.h"

#include "campaign/Identity.h"
#include "campaign/Worker.h"
#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "replay/Stats.h"
#include "support/Machine.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace r3 {

namespace {
using nlohmann::json;
namespace fs = std::filesystem;

/// A source variant's compile report, for the prompts of its children.
std::string compileReport(const CandidateResult &R,
                          const std::string &Occupancy) {
  std::string Out;
  auto add = [&](const char *Name, std::optional<int64_t> V) {
    if (V)
      Out += (Out.empty() ? "" : ", ") + std::string(Name) + " " +
             std::to_string(*V);
  };
  add("registers", R.Registers);
  add("spills", R.Spills);
  add("shared bytes", R.SharedBytes);
  if (!Occupancy.empty())
    Out += ": " + Occupancy;
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%scompiled in %.0f ms",
                Out.empty() ? "" : ", ", R.CompileMs);
  return Out + Buf;
}

bool isSourceLevel(const std::string &Level) {
  return Level == "baseline" || Level == "source";
}

Expected<std::string> readText(const std::string &Path) {
  return readWholeFile(Path, "source file");
}

std::string genomeJson(const search::SourceGenome &G) {
  json J = {{"file", G.File}, {"knobs", G.Knobs}};
  if (!G.Text.empty())
    J["text_hash"] = sha256Hex(G.Text);
  return J.dump();
}

Expected<search::SourceGenome> parseGenome(const VariantRow &V) {
  search::SourceGenome G;
  try {
    json J = json::parse(V.GenomeJson);
    G.File = J.at("file").get<uint32_t>();
    G.Knobs = J.at("knobs").get<std::vector<uint32_t>>();
  } catch (const json::exception &E) {
    return makeError("variant ", V.Id, ": bad genome '", V.GenomeJson,
                     "': ", E.what());
  }
  return G;
}

} // namespace

std::string pointJson(const search::Point &P) { return json(P.Values).dump(); }

Expected<search::Point> parsePointJson(const std::string &Text) {
  search::Point P;
  try {
    P.Values = json::parse(Text).get<std::vector<std::vector<uint32_t>>>();
  } catch (const json::exception &E) {
    return makeError("bad point '", Text, "': ", E.what());
  }
  return P;
}

std::optional<double> KernelState::baselineMs() const {
  return Times.referenceBaselineMs();
}

double KernelState::deviceScale(const std::string &Device) const {
  return Times.scale(Device);
}

bool KernelState::targetReached(const std::optional<double> &Target) const {
  std::optional<report::Estimate> S = Times.speedup();
  return Target && S && S->Value >= *Target;
}

SearchState::SearchState(const Campaign &C, History &H, unsigned Workers)
    : C(C), H(H), Inner(innerSpace(C)), LaunchOnly(launchSpace(C)),
      Workers(Workers) {
  const EvaluationSpec &E = C.Evaluation;
  Evaluation = json{{"warmup", E.Warmup},
                    {"repetitions", E.Repetitions},
                    {"min_repetitions", E.MinRepetitions},
                    {"target_ci", E.TargetCi},
                    {"timeout", E.TimeoutSeconds},
                    {"flush_l2", E.FlushL2}}
                   .dump();
  Started = nowSeconds();
}

Expected<bool> SearchState::load() {
  std::optional<CampaignRow> Row;
  R3_TRY(moveInto(H.campaign(), Row));
  bool Resumed = Row.has_value();
  if (!Row)
    R3_TRY(H.putCampaign({C.Path, C.Text, backendName(C.Target), C.Seed,
                          nowSeconds(), "running"}));
  else
    R3_TRY(H.setCampaignState("running"));
  R3_TRY(H.addEvent(Resumed ? "resume" : "start", C.Path));
  R3_TRY(H.addEvent("budget", std::to_string(C.Budget.Evaluations)));
  R3_TRY(startLlm());
  for (const KernelSpec &K : C.Kernels)
    R3_TRY(loadKernel(K));
  std::vector<CandidateRow> All;
  R3_TRY(moveInto(H.candidates(), All));
  Issued = All.size();
  CommittedAtStart = Committed;
  return Resumed;
}

Error SearchState::loadKernel(const KernelSpec &Spec) {
  auto R = CaptureReader::open(Spec.Capture);
  if (!R)
    return R.takeError();
  uint32_t Index = 0;
  R3_TRY(moveInto(findKernel(**R, Spec.Name), Index));
  std::vector<uint32_t> Launches;
  R3_TRY(moveInto(kernelLaunches(**R, Index, Spec), Launches));
  KernelState &K = Kernels.emplace_back();
  K.Spec = &Spec;
  auto It = (*R)->kernels().begin() + Index;
  K.Mangled = It->Name;
  K.Launches = std::move(Launches);
  if (!K.Launches.empty()) {
    K.LaunchFacts = describeLaunch(*It, (*R)->launches()[K.Launches.front()]);
    if (K.Launches.size() > 1)
      K.LaunchFacts += "(" + std::to_string(K.Launches.size()) +
                       " launches are recorded; a variant must pass every "
                       "one; this is the first)\n";
  }
  R3_TRY(moveInto(captureFingerprint(Spec.Capture), K.Fingerprint));
  const DeviceInfo &Dev = (*R)->header().Device;
  K.Device = C.Target == Backend::Cuda
                 ? Dev.Name + " sm_" + std::to_string(Dev.ComputeMajor) +
                       std::to_string(Dev.ComputeMinor) + " driver " +
                       std::to_string(Dev.DriverVersion)
                 : hostCpuName();
  R3_TRY(
      moveInto(H.putKernel({0, Spec.Name, Spec.Capture, K.Fingerprint}), K.Id));
  if (!Spec.Source.empty())
    K.Model = sourceSpace(Spec);
  for (const std::string &F : K.Model.Files)
    R3_TRY(moveInto(readText(F), K.FileTexts[F]));
  auto Ops = C.Source.Operators;
  if (Ops.empty())
    Ops = {{"knob", 0.7}, {"crossover", 0.3}};
  bool Rewrite = std::any_of(Ops.begin(), Ops.end(), [](const auto &O) {
    return O.first == "rewrite" && O.second > 0;
  });
  if (Spec.Extract && !Spec.Source.empty())
    R3_TRY(extractKernel(K, **R, Index));
  Rewrite &= !Spec.Source.empty() && C.Source.Strategy != "none";
  bool Grid = C.Target == Backend::Cuda &&
              (!C.Launch.GridX.empty() || !C.Launch.GridPerSm.empty());
  K.GridStride = Grid && Spec.GridStride.value_or(false);
  bool Recognise = Grid && !Spec.GridStride && !Spec.Source.empty();
  if (Rewrite || Recognise)
    R3_TRY(analyzeSource(K, **R, Index, Rewrite, Recognise));
  if (!K.Launches.empty()) {
    const LaunchInfo &First = (*R)->launches()[K.Launches.front()];
    K.RecordedGrid = First.Grid;
    K.RecordedBlock = First.Block;
    if (C.Target == Backend::Cuda)
      K.LimitFacts = limitsFacts(*It, First, Dev);
  }
  K.ComputeMajor = Dev.ComputeMajor;
  if (!Spec.Source.empty() && C.Source.Strategy != "none") {
    search::EvolutionOptions O;
    O.Islands = std::max(1u, C.Source.Islands);
    O.MigrationInterval = C.Source.MigrationInterval;
    O.Axes = C.Source.Descriptors;
    O.Seed = C.Seed * 7919 + Kernels.size();
    K.Evo = std::make_unique<search::Evolution>(K.Model, O);
    for (const auto &[Name, Rate] : Ops) {
      if (Name == "llm")
        attachLlm(K, Rate);
      else
        K.Evo->addOperator(Name == "crossover" ? search::makeCrossover(K.Model)
                           : Name == "rewrite"
                               ? search::makeRewriteMutation(K.Model)
                               : search::makeKnobMutation(K.Model),
                           Rate);
    }
  }
  return rebuild(K);
}

std::unique_ptr<search::Strategy>
SearchState::makeInner(unsigned Salt, const search::Space &Space) const {
  search::StrategyOptions O;
  O.Seed = C.Seed * 1000003 + Salt;
  auto S = search::makeStrategy(C.Compiler.Strategy, Space, O);
  if (!S) // validated with the campaign; random is the safe fallback
    return search::makeRandomSearch(Space, O);
  return std::move(*S);
}

VariantState &SearchState::addVariantState(KernelState &K, VariantRow Row,
                                           search::SourceGenome G) {
  VariantState &V = K.Variants.emplace_back();
  V.Id = Row.Id;
  V.Recorded = Row.GenomeKey == "recorded";
  V.Genome = std::move(G);
  V.SourceHash = Row.SourceHash;
  V.Operator = Row.Operator;
  V.Island = static_cast<unsigned>(Row.Island);
  try {
    V.Parents = json::parse(Row.ParentsJson).get<std::vector<int64_t>>();
  } catch (const json::exception &) {
  }
  V.Space = C.Target == Backend::Cuda && V.Recorded ? &LaunchOnly : &Inner;
  V.Inner = makeInner(static_cast<unsigned>(K.Id * 65537 + Row.Id), *V.Space);
  // Without an outer loop, the recorded code (and on CUDA the source as
  // written) share the whole budget.
  V.Budget = !K.Evo ? ~0u : C.Budget.InnerEvaluations;
  if (!V.Recorded && K.Evo)
    K.Evo->markSeen(V.Genome);
  return V;
}

Error SearchState::rebuild(KernelState &K) {
  std::vector<VariantRow> Rows;
  R3_TRY(moveInto(H.variants(K.Id), Rows));
  if (Rows.empty()) {
    VariantRow V;
    V.KernelId = K.Id;
    V.GenomeKey = "recorded";
    V.GenomeJson = "{}";
    V.Operator = "original";
    V.Created = nowSeconds();
    std::optional<int64_t> Id;
    R3_TRY(moveInto(H.addVariant(V), Id));
    V.Id = Id.value_or(0);
    Rows.push_back(V);
  }
  std::map<int64_t, VariantState *> ById;
  for (VariantRow &Row : Rows) {
    search::SourceGenome G;
    if (Row.GenomeKey != "recorded")
      R3_TRY(moveInto(parseGenome(Row), G));
    VariantState &V = addVariantState(K, Row, G);
    if (!V.Recorded) {
      std::optional<std::string> Text;
      R3_TRY(moveInto(H.source(Row.SourceHash), Text));
      V.Text = Text.value_or("");
    }
    ById[V.Id] = &V;
  }
  std::vector<CandidateRow> Cands;
  R3_TRY(moveInto(H.candidates(K.Id), Cands));
  for (const CandidateRow &Row : Cands) {
    VariantState *V = ById[Row.VariantId];
    if (!V)
      return makeError(H.path(), ": candidate ", Row.Id,
                       " names an unknown variant ", Row.VariantId);
    std::optional<search::Point> P;
    if (!isSourceLevel(Row.Level)) {
      search::Point Pt;
      R3_TRY(moveInto(parsePointJson(Row.PointJson), Pt));
      P = Pt;
      ++V->Issued;
    } else {
      V->SourceCandidate = Row.Id;
    }
    if (Row.State == CandidateState::Queued ||
        Row.State == CandidateState::Running) {
      if (P)
        V->Inner->markPending(*P);
      Queue.push_back({&K, V, Row, P});
    }
  }
  // A variant stored without its source candidate (made beside another
  // and killed before its turn) gets it now; otherwise it would stay open
  // for ever and hold the outer loop back.
  for (VariantState &V : K.Variants)
    if (!V.Recorded && !V.SourceCandidate)
      Queue.push_back({&K, &V, CandidateRow{}, std::nullopt});
  // The baselines before the evaluations, which are compared over their
  // own device's (KernelState::deviceScale).
  std::vector<BaselineRow> Bs;
  R3_TRY(moveInto(H.baselines(K.Id), Bs));
  for (const BaselineRow &B : Bs)
    K.Times.addBaselineRow(B.Device, {B.MedianMs, B.CiLoMs, B.CiHiMs});
  std::vector<EvaluatedCandidate> Evals;
  R3_TRY(moveInto(H.evaluations(K.Id), Evals));
  for (const EvaluatedCandidate &E : Evals) {
    VariantState *V = ById[E.Candidate.VariantId];
    std::optional<search::Point> P;
    if (!isSourceLevel(E.Candidate.Level)) {
      search::Point Pt;
      R3_TRY(moveInto(parsePointJson(E.Candidate.PointJson), Pt));
      P = Pt;
    }
    R3_TRY(applyEvaluation(K, *V, E.Candidate.Level, P, E.Candidate.Id,
                           E.Evaluation));
  }
  return rebuildLlm(K);
}

static double descriptorValue(const std::string &Axis, const VariantState &V,
                              const search::SourceSpaceModel &M,
                              const CandidateResult &R) {
  if (Axis == "registers")
    return static_cast<double>(R.Registers.value_or(0));
  if (Axis == "shared_bytes")
    return static_cast<double>(R.SharedBytes.value_or(0));
  if (Axis == "spills")
    return static_cast<double>(R.Spills.value_or(0));
  if (Axis == "source_bytes")
    return static_cast<double>(V.Text.size());
  if (Axis.starts_with("knob:"))
    for (size_t I = 0; I < M.Knobs.size() && I < V.Genome.Knobs.size(); ++I)
      if (M.Knobs[I].Name == Axis.substr(5))
        return V.Genome.Knobs[I];
  return 0;
}

Error SearchState::applyEvaluation(KernelState &K, VariantState &V,
                                   const std::string &Level,
                                   const std::optional<search::Point> &P,
                                   int64_t CandidateId,
                                   const EvaluationRow &E) {
  ++K.Evaluations;
  ++Committed;
  const bool Ok = E.Result.Verified;
  if (!Ok)
    ++K.Failures;
  V.FailuresInRow = Ok ? 0 : V.FailuresInRow + 1;
  if (isSourceLevel(Level)) {
    V.SourceDone = true;
    // A wrong result may be the compiler's (another toolchain, pipeline or
    // fast-math setting may verify), and so may a compile error when the
    // campaign has another toolchain; a crash or a hang is the source's.
    FailureKind F = E.Result.Failure;
    bool OtherToolchain = C.Compiler.Toolchains.size() > 1;
    bool CompilersMayDiffer =
        F == FailureKind::WrongResult ||
        (F == FailureKind::CompileError && OtherToolchain);
    V.Dead = !Ok && (V.Recorded || !CompilersMayDiffer);
    V.CompileReport = compileReport(
        E.Result,
        C.Target == Backend::Cuda && E.Result.Registers
            ? occupancyText(*E.Result.Registers,
                            E.Result.SharedBytes.value_or(0),
                            K.RecordedBlock[0] * K.RecordedBlock[1] *
                                K.RecordedBlock[2],
                            K.ComputeMajor)
            : "");
    noteFailure(K, V, E.Result);
    for (const search::DescriptorAxis &A : C.Source.Descriptors)
      V.Descriptor.push_back(descriptorValue(A.Name, V, K.Model, E.Result));
  }
  // Times from several devices are compared on one scale: each over its
  // own device's baseline (deviceScale).
  double Ms = E.MedianMs * K.deviceScale(E.Device);
  if (!isSourceLevel(Level) && P) {
    ++V.Done;
    V.Inner->observe(*P, Ok ? std::optional<double>(Ms) : std::nullopt);
  }
  if (Ok && (!V.BestMs || Ms < *V.BestMs)) {
    V.BestMs = Ms;
    V.BestCandidate = CandidateId;
  }
  if (!V.BestMs && V.FailuresInRow >= RetireAfterFailures)
    V.Dead = true; // its settings keep failing: retired
  if (Ok) { // the kernel's best and speedup: the report's rule
    report::Estimate T{E.MedianMs, E.CiLoMs, E.CiHiMs};
    if (Level == "baseline")
      K.Times.addBaselineEvaluation(E.Device, T);
    K.Times.addTime(E.Device, T, CandidateId);
  }
  auto Speedup = K.Times.speedup();
  K.Remaining.push_back(Speedup && Speedup->Value > 0 ? 1 / Speedup->Value
                                                      : 1);
  bool InnerOver = V.Done >= V.Issued && (V.Issued >= V.Budget || V.Exhausted);
  if (V.SourceDone && (V.Dead || InnerOver))
    reportVariant(K, V);
  return Error::success();
}

void SearchState::reportVariant(KernelState &K, VariantState &V) {
  if (V.Reported)
    return;
  V.Reported = true;
  if (V.Recorded || !K.Evo || V.Dead || !V.BestMs)
    return;
  search::Elite E;
  E.Id = V.Id;
  E.Genome = V.Genome;
  E.Fitness = *V.BestMs;
  E.Descriptor = V.Descriptor;
  E.Descriptor.resize(K.Evo->archive().axes().size(), 0);
  E.Island = V.Island;
  K.Evo->report(E);
  if (Error Err = saveArchive(K))
    Notes.push_back("cannot save the archive: " + Err.message());
}

Error SearchState::saveArchive(KernelState &K) {
  std::vector<ArchiveRow> Rows;
  const search::Archive &A = K.Evo->archive();
  for (unsigned I = 0; I < A.islands(); ++I)
    for (const auto &[Cell, E] : A.cells(I))
      Rows.push_back({K.Id, I, static_cast<int64_t>(Cell), E.Id, E.Fitness,
                      json(E.Descriptor).dump()});
  return H.putArchive(K.Id, Rows);
}

bool SearchState::budgetLeft() const { return Issued < C.Budget.Evaluations; }

Expected<std::optional<InFlight>> SearchState::innerJob(KernelState &K) {
  for (VariantState &V : K.Variants) {
    while (V.SourceDone && !V.Dead && !V.Exhausted && V.Issued < V.Budget) {
      if (V.Proposed.empty()) {
        // One batch for this round's share of the idle slots (kernels take
        // turns), never beyond the variant's budget.
        unsigned Share = (RoundLeft + Kernels.size() - 1) / Kernels.size();
        uint64_t Room = std::min<uint64_t>(V.Budget - V.Issued,
                                           C.Budget.Evaluations - Issued);
        for (search::Point &P :
             V.Inner->propose(static_cast<unsigned>(
                 std::clamp<uint64_t>(Share, 1, std::max<uint64_t>(1, Room)))))
          V.Proposed.push_back(std::move(P));
      }
      if (V.Proposed.empty()) {
        V.Exhausted = true;
        if (V.Done >= V.Issued)
          reportVariant(K, V);
        break;
      }
      search::Point P = std::move(V.Proposed.front());
      V.Proposed.pop_front();
      std::optional<InFlight> F;
      R3_TRY(
          moveInto(candidateJob(K, V, "compiler", std::string(V.Inner->name()),
                                V.SourceCandidate, P),
                   F));
      if (F)
        return F;
      // The same settings were evaluated already (a changed campaign file):
      // the strategy must not propose them again.
      V.Inner->observe(P, std::nullopt);
    }
  }
  return std::optional<InFlight>();
}

/// The candidate a new variant derives from: its first parent's best (or
/// its source candidate), which the report's lineage follows.
static std::optional<int64_t> parentCandidate(const KernelState &K,
                                              const VariantState &V) {
  for (const VariantState &P : K.Variants)
    if (!V.Parents.empty() && P.Id == V.Parents.front())
      return P.BestCandidate ? P.BestCandidate : P.SourceCandidate;
  return std::nullopt;
}

unsigned KernelState::openVariants() const {
  unsigned N = 0;
  for (const VariantState &V : Variants)
    N += !V.Reported && !V.Recorded;
  return N;
}

Error SearchState::seedInitial(KernelState &K) {
  if (C.Target != Backend::Cuda || K.Variants.size() != 1)
    return Error::success(); // host campaigns start from the evolution's
  std::vector<search::Offspring> Kids(1);
  Kids[0].Genome.Knobs.assign(K.Model.Knobs.size(), 0);
  Kids[0].Operator = "initial";
  std::vector<VariantState *> Made;
  R3_TRY(moveInto(addVariants(K, Kids), Made));
  for (VariantState *V : Made)
    Queue.push_back({&K, V, CandidateRow{}, std::nullopt});
  return Error::success();
}

Expected<std::optional<InFlight>> SearchState::newVariantJob(KernelState &K) {
  bool Initial = K.Variants.size() == 1 && !K.Model.Files.empty();
  if (!K.Evo && !Initial)
    return std::optional<InFlight>();
  if (K.Evo && K.openVariants() > Workers)
    return std::optional<InFlight>();
  if (Initial) {
    R3_TRY(seedInitial(K));
    if (!Queue.empty())
      return requeued();
  }
  if (!K.Evo)
    return std::optional<InFlight>();
  std::vector<search::Offspring> Kids = takeChildren(K, true);
  bool NoKids = Kids.empty();
  std::vector<VariantState *> Made;
  R3_TRY(moveInto(addVariants(K, Kids), Made));
  if (NoKids) {
    // The source level is exhausted: its remaining budget goes to the inner
    // loop of the best variant.
    VariantState *Best = nullptr;
    for (VariantState &V : K.Variants)
      if (V.BestMs && !V.Exhausted && (!Best || *V.BestMs < *Best->BestMs))
        Best = &V;
    if (Best && Best->Issued >= Best->Budget && K.Evo->inFlight() == 0) {
      Best->Budget += C.Budget.InnerEvaluations;
      return innerJob(K);
    }
    return std::optional<InFlight>();
  }
  std::optional<InFlight> First;
  for (VariantState *V : Made) {
    std::optional<InFlight> F;
    R3_TRY(moveInto(candidateJob(K, *V, "source", V->Operator,
                                 parentCandidate(K, *V), std::nullopt),
                    F));
    if (F && !First)
      First = std::move(F);
    else if (F) // more children than asked for (asynchronous operators)
      Queue.push_back({&K, V, CandidateRow{}, std::nullopt});
  }
  return First;
}

std::vector<search::Offspring> SearchState::takeChildren(KernelState &K,
                                                         bool Ask) {
  // LLM calls take seconds: the children of calls finished since the last
  // look come first, and one more is asked for only while the client has
  // room (after taking what finished, so that a failed call frees its place).
  std::vector<search::Offspring> Kids = K.Evo->ready();
  if (!Ask || (K.Llm && K.Llm->inFlight() >= std::max(1u, C.Llm.Concurrency)))
    return Kids;
  K.Evo->request(1);
  noteLlmStop(K);
  for (search::Offspring &Kid : K.Evo->ready())
    Kids.push_back(std::move(Kid));
  return Kids;
}

Expected<std::vector<VariantState *>>
SearchState::addVariants(KernelState &K, std::vector<search::Offspring> &Kids) {
  std::vector<VariantState *> Made;
  std::map<uint64_t, int64_t> Tags;
  for (search::Offspring &Kid : Kids) {
    VariantRow Row;
    Row.KernelId = K.Id;
    Row.GenomeKey = Kid.Genome.key(K.Model);
    Row.GenomeJson = genomeJson(Kid.Genome);
    std::string Text = Kid.Genome.Text.empty()
                           ? K.FileTexts[K.Model.Files.at(Kid.Genome.File)]
                           : Kid.Genome.Text;
    Row.SourceHash = sha256Hex(Text);
    R3_TRY(H.putSource(Row.SourceHash, Text));
    Row.ParentsJson = json(Kid.Parents).dump();
    Row.Operator = Kid.Operator;
    Row.Island = Kid.Island;
    Row.Created = nowSeconds();
    std::optional<int64_t> Id;
    R3_TRY(moveInto(H.addVariant(Row), Id));
    if (!Id)
      continue;
    Row.Id = *Id;
    VariantState &V = addVariantState(K, Row, Kid.Genome);
    V.Text = Text;
    Made.push_back(&V);
    if (Kid.Tag)
      Tags[Kid.Tag] = *Id;
  }
  R3_TRY(recordLlmCalls(K, Tags));
  return Made;
}

Expected<std::optional<InFlight>> SearchState::baselineJob(KernelState &K,
                                                           unsigned W) {
  InFlight F;
  F.JobId = NextJob++;
  F.Worker = W;
  F.Kernel = &K;
  F.Variant = &K.Variants.front();
  F.Level = "baseline";
  F.Job = makeJob(K, K.Variants.front(), InnerSettings{});
  return std::optional<InFlight>(std::move(F));
}

Expected<std::optional<InFlight>> SearchState::requeued() {
  Requeued Q = std::move(Queue.front());
  Queue.pop_front();
  KernelState &K = *Q.Kernel;
  VariantState &V = *Q.Variant;
  InFlight F;
  F.JobId = NextJob++;
  F.Kernel = &K;
  F.Variant = &V;
  if (Q.Row.Id == 0) { // a child made beside the one dispatched
    F.Level = "source";
    return candidateJob(K, V, "source", V.Operator, parentCandidate(K, V),
                        std::nullopt);
  }
  F.Candidate = Q.Row.Id;
  F.Level = Q.Row.Level;
  F.Point = Q.Point;
  F.Job = makeJob(K, V, settingsOf(K, V, Q.Point));
  return std::optional<InFlight>(std::move(F));
}

void SearchState::beginRound(unsigned Idle) {
  RoundLeft = std::max(1u, Idle);
  for (KernelState &K : Kernels)
    for (VariantState &V : K.Variants) {
      for (const search::Point &P : V.Proposed)
        V.Inner->forget(P);
      V.Proposed.clear();
    }
}

std::vector<size_t> SearchState::kernelTurns() const {
  std::vector<KernelOutlook> Outlook;
  for (const KernelState &K : Kernels) {
    if (!K.Spec->Share)
      break;
    Outlook.push_back({*K.Spec->Share, K.Remaining, K.InFlight});
  }
  if (Outlook.size() == Kernels.size()) {
    // Every kernel's recorded code first, whatever its share: the
    // end-to-end prediction and the report start from its baseline.
    std::vector<size_t> Order = kernelOrder(Outlook);
    std::stable_partition(Order.begin(), Order.end(), [&](size_t I) {
      return !Kernels[I].Variants.front().SourceCandidate;
    });
    return Order;
  }
  std::vector<size_t> Turns;
  for (size_t I = 0; I < Kernels.size(); ++I)
    Turns.push_back((NextKernel + I) % Kernels.size());
  return Turns;
}

Expected<std::optional<InFlight>> SearchState::next(unsigned W) {
  std::optional<InFlight> F;
  // Each worker measures the baseline when it starts and again every
  // BaselineInterval evaluations, so speedups are ratios taken side by side.
  auto Since = SinceBaseline.find(W);
  bool Due = Since == SinceBaseline.end() ||
             Since->second >= std::max(1u, C.Evaluation.BaselineInterval);
  KernelState &Next = Kernels[NextKernel % Kernels.size()];
  if (Due && Next.Variants.front().SourceDone) {
    SinceBaseline[W] = 0;
    NextKernel = (NextKernel + 1) % Kernels.size();
    R3_TRY(moveInto(baselineJob(Next, W), F));
  }
  if (!F && !Queue.empty())
    R3_TRY(moveInto(requeued(), F));
  std::vector<size_t> Turns = kernelTurns();
  for (size_t I = 0; !F && budgetLeft() && I < Kernels.size(); ++I) {
    KernelState &K = Kernels[Turns[I]];
    if (K.targetReached(C.Budget.TargetSpeedup))
      continue;
    VariantState &Recorded = K.Variants.front();
    if (!Recorded.SourceCandidate)
      // The recorded code itself comes first: the baseline, and the parent
      // of every inner-loop candidate of the recorded source.
      R3_TRY(moveInto(candidateJob(K, Recorded, "baseline", "original",
                                   std::nullopt, std::nullopt),
                      F));
    if (!F)
      R3_TRY(moveInto(innerJob(K), F));
    if (!F)
      R3_TRY(moveInto(newVariantJob(K), F));
    if (F)
      NextKernel = (Turns[I] + 1) % Kernels.size();
  }
  if (F) {
    F->Worker = W;
    ++F->Kernel->InFlight;
    F->Job.Id = F->JobId;
    if (F->Candidate)
      R3_TRY(H.setCandidateState(*F->Candidate, CandidateState::Running, W));
    RoundLeft = std::max(1u, RoundLeft - 1);
  }
  return F;
}

Error SearchState::apply(InFlight &F, const WorkerResult &R, unsigned W,
                         const std::string &WorkerDevice) {
  TimingStats S = computeStatsMs(R.Result.TimesNs);
  KernelState &K = *F.Kernel;
  // A job lost with a dead worker stays counted: it only damps the kernel's
  // exploration term (KernelBudget.h).
  K.InFlight -= K.InFlight > 0;
  if (!F.Candidate) {
    if (!R.Result.Verified) {
      Notes.push_back("the baseline of " + K.Spec->Name + " failed on worker " +
                      std::to_string(W) + ": " + R.Result.Message);
      return Error::success();
    }
    K.Times.addBaselineRow(WorkerDevice, {S.Median, S.CiLow, S.CiHigh});
    return H
        .addBaseline({0, K.Id, W, WorkerDevice, S.Median, S.CiLow, S.CiHigh,
                      R.Finished, Committed, R.Result.BusyMs, R.Started})
        .takeError();
  }
  if (!R.Result.Nondeterminism.empty()) {
    if (!R.Result.NondeterminismCovered)
      return makeError(
          K.Spec->Name,
          ": the recorded kernel's outputs differ from run to run, so no "
          "candidate could verify exactly: ",
          R.Result.Nondeterminism, ". Set that in [kernel.verify] of ",
          C.Path,
          " if such differences are acceptable (r3 never loosens "
          "verification by itself)");
    Notes.push_back(K.Spec->Name + ": not deterministic, within the "
                                   "campaign's tolerance: " +
                    R.Result.Nondeterminism);
  }
  EvaluationRow E;
  E.CandidateId = *F.Candidate;
  E.Worker = W;
  E.Device = WorkerDevice;
  E.Result = R.Result;
  E.MedianMs = S.Median;
  E.CiLoMs = S.CiLow;
  E.CiHiMs = S.CiHigh;
  E.MinMs = S.Min;
  E.EvalMs = R.EvalMs;
  E.Started = R.Started;
  E.Finished = R.Finished;
  R3_TRY(H.addEvaluation(E).takeError());
  if (auto It = SinceBaseline.find(W); It != SinceBaseline.end())
    ++It->second;
  if (F.Level == "baseline")
    SinceBaseline[W] = 0; // this worker has just measured it
  if (F.Level == "baseline" && R.Result.Verified) {
    K.Times.addBaselineRow(WorkerDevice, {S.Median, S.CiLow, S.CiHigh});
    // The evaluation holds its device time already.
    R3_TRY(H.addBaseline({0, K.Id, W, WorkerDevice, S.Median, S.CiLow, S.CiHigh,
                          R.Finished, Committed, 0, R.Started})
               .takeError());
  }
  std::optional<report::BestTime> Before = K.Times.best();
  R3_TRY(applyEvaluation(K, *F.Variant, F.Level, F.Point, *F.Candidate, E));
  std::optional<report::BestTime> After = K.Times.best();
  std::optional<report::Estimate> Speedup = K.Times.speedup();
  if (Before && After && After->Id != Before->Id && After->Id == *F.Candidate &&
      Speedup) {
    char Line[256];
    std::snprintf(Line, sizeof Line, "%s: new best %.4g ms (%.3gx), %s %s",
                  K.Spec->Name.c_str(), After->Time.Value, Speedup->Value,
                  F.Level.c_str(),
                  F.Point ? F.Variant->Space->describe(*F.Point).c_str()
                          : F.Variant->Genome.key(K.Model).c_str());
    Notes.push_back(Line);
  }
  return Error::success();
}

void SearchState::giveBack(InFlight &F) {
  if (!F.Candidate)
    return;
  CandidateRow Row;
  Row.Id = *F.Candidate;
  Row.Level = F.Level;
  Queue.push_front({F.Kernel, F.Variant, Row, F.Point});
}

std::optional<std::string> SearchState::finished(size_t InFlightCount) const {
  bool AllReached = !Kernels.empty();
  for (const KernelState &K : Kernels)
    AllReached &= K.targetReached(C.Budget.TargetSpeedup);
  if (AllReached && InFlightCount == 0)
    return "the target speedup is reached for every kernel";
  if (!budgetLeft() && Queue.empty() && InFlightCount == 0)
    return "the evaluation budget (" + std::to_string(C.Budget.Evaluations) +
           ") is spent";
  return std::nullopt;
}

TuneProgress SearchState::progress() const {
  TuneProgress P;
  P.Done = Committed;
  P.Budget = C.Budget.Evaluations;
  P.ElapsedSeconds = nowSeconds() - Started;
  uint64_t ThisRun = Committed - CommittedAtStart;
  if (P.ElapsedSeconds > 1)
    P.PerMinute = ThisRun * 60.0 / P.ElapsedSeconds;
  if (P.PerMinute > 0 && P.Budget > P.Done)
    P.EtaSeconds = (P.Budget - P.Done) * 60.0 / P.PerMinute;
  for (const KernelState &K : Kernels) {
    P.Failures += K.Failures;
    // The figures r3 report shows: the best's own device's baseline and
    // time where several devices measured one.
    std::optional<report::BestTime> Best = K.Times.best();
    std::optional<report::Estimate> Base = K.Times.baseline();
    P.Kernels.push_back(
        {K.Spec->Name, K.Evaluations, K.Failures,
         Base ? std::optional(Base->Value) : std::nullopt,
         Best ? std::optional(Best->Time.Value) : std::nullopt});
  }
  return P;
}

std::vector<std::string> SearchState::takeNotes() {
  std::vector<std::string> Out;
  Out.swap(Notes);
  return Out;
}

} // namespace r3
