// The candidates the search state sends (see SearchState.h): a variant and its
// settings made into a worker's job (the candidate, and the source with the
// flags and compiler settings it compiles with), the settings as the history
// stores them, the identity that keeps each candidate once, and which level
// an inner candidate is credited to.
#include "campaign/SearchState.h"

#include "campaign/Identity.h"
#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "compile/CompileCommands.h"
#include "compile/Rewrite.h"
#include "replay/LaunchRule.h"
#include "support/Machine.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace r3 {

namespace {
using nlohmann::json;
namespace fs = std::filesystem;

/// Which fields of the settings differ from the defaults: the level an inner
/// candidate is credited to.
std::string innerLevel(const InnerSettings &S) {
  InnerSettings D;
  bool Compiler = S.Compiler != D.Compiler;
  bool Launch = S.Block.has_value() || S.DynamicShared != D.DynamicShared ||
                S.CachePreference != D.CachePreference || S.GridX ||
                S.GridPerSm;
  if (Launch && !Compiler)
    return "launch";
  return Compiler && Launch ? "compiler+launch" : "compiler";
}
} // namespace

Expected<std::vector<uint32_t>>
kernelLaunches(const CaptureReader &R, uint32_t K, const KernelSpec &Spec) {
  if (Spec.Launches.empty())
    return launchesOf(viewOf(R), K);
  std::vector<uint32_t> Out;
  for (uint32_t Ordinal : Spec.Launches) {
    uint32_t L = 0;
    R3_TRY(moveInto(findLaunch(R, K, {LaunchNumbering::Ordinal, Ordinal}), L));
    Out.push_back(L);
  }
  return Out;
}

std::string SearchState::settingsJson(const InnerSettings &S) const {
  json J = json::object();
  writeSettingsJson(J, S.Compiler, C.Target == Backend::Cuda);
  if (C.Target == Backend::Cuda) {
    J["cache_preference"] = S.CachePreference;
    J["dynamic_shared"] = S.DynamicShared;
    if (S.Block)
      J["block"] = *S.Block;
    if (S.GridX)
      J["grid_x"] = S.GridX;
    if (S.GridPerSm)
      J["grid_per_sm"] = S.GridPerSm;
  }
  return J.dump();
}

std::vector<std::string> sourceFlags(const KernelSpec &Spec,
                                     const std::string &File) {
  std::vector<std::string> Flags = Spec.CFlags;
  if (!Spec.CompileCommands.empty()) {
    // The build's flags for the file (its include paths, defines and
    // standard); a file the database lacks compiles with the cflags alone,
    // and says so where it fails.
    auto Build = flagsFromCompileCommands(Spec.CompileCommands, File);
    if (Build)
      Flags.insert(Flags.end(), Build->begin(), Build->end());
  }
  Flags.push_back("-I" + fs::path(File).parent_path().string());
  return Flags;
}

/// The elements a thread of V's source takes each pass when the grid-stride
/// rewrite made it a grid-stride loop (Rewrite.h); 0 otherwise.
unsigned gridStrideOf(const KernelState &K, const VariantState &V) {
  if (V.Recorded)
    return 0;
  for (size_t I = 0; I < K.Model.Knobs.size() && I < V.Genome.Knobs.size(); ++I)
    if (K.Model.Knobs[I].Name == GridStrideKnob)
      return gridStrideElements(K.Model.Knobs[I].Values.at(V.Genome.Knobs[I]));
  return 0;
}

InnerSettings
SearchState::settingsOf(const KernelState &K, const VariantState &V,
                        const std::optional<search::Point> &P) const {
  InnerSettings S = P ? innerSettings(C, *V.Space, *P) : InnerSettings{};
  unsigned Per = gridStrideOf(K, V);
  // Any other grid would compute something else, unless the kernel or this
  // variant of it strides over its grid.
  if (!K.GridStride && !Per)
    S.GridX = S.GridPerSm = 0;
  // A coarsened variant's grid follows its block (gridRuleFor): the block
  // it runs with is part of its settings, so that r3 export and r3 run
  // apply the same launch.
  if (C.Target == Backend::Cuda && Per > 1 && !S.Block && !S.GridX &&
      !S.GridPerSm && K.Launches.size() == 1)
    S.Block = K.RecordedBlock;
  return S;
}

WorkerJob SearchState::makeJob(const KernelState &K, const VariantState &V,
                               const InnerSettings &S) const {
  WorkerJob J;
  J.Capture = K.Spec->Capture;
  Candidate &W = J.Work;
  W.Kernel = K.Mangled;
  W.Launches = K.Launches;
  W.Pipeline = S.Compiler.Pipeline;
  W.CodegenOpt = S.Compiler.CodegenOpt;
  if (S.Block)
    W.Block = S.Block;
  W.Warmup = C.Evaluation.Warmup;
  W.Repetitions = C.Evaluation.Repetitions;
  W.MinRepetitions = C.Evaluation.MinRepetitions;
  W.TargetCi = C.Evaluation.TargetCi;
  W.TimeoutSeconds = C.Evaluation.TimeoutSeconds;
  W.FlushL2 = C.Evaluation.FlushL2;
  W.Verify = K.Spec->Verify;
  J.Target = C.Target;
  if (C.Target == Backend::Cuda) {
    W.GridRule = K.Spec->GridRule;
    if (!C.Launch.DynamicShared.empty())
      W.DynamicShared = S.DynamicShared;
    W.Cache =
        parseCachePreference(S.CachePreference).value_or(CachePreference::None);
    W.GridPerSm = S.GridPerSm;
    if (S.GridX)
      W.Grid = Dim3{S.GridX, K.RecordedGrid[1], K.RecordedGrid[2]};
    W.GridRule = gridRuleFor(K.Spec->GridRule, W.Block ? gridStrideOf(K, V) : 0,
                             W.Grid || W.GridPerSm);
  }
  if (V.Recorded)
    return J;
  SourceJob Src;
  Src.Settings = S.Compiler;
  Src.Text = V.Text;
  const std::string &File = K.Model.Files.at(V.Genome.File);
  Src.FileName = File;
  Src.Flags = sourceFlags(*K.Spec, File);
  for (size_t I = 0; I < K.Model.Knobs.size() && I < V.Genome.Knobs.size(); ++I)
    Src.Flags.push_back("-D" + K.Model.Knobs[I].Name + "=" +
                        K.Model.Knobs[I].Values.at(V.Genome.Knobs[I]));
  J.Source = std::move(Src);
  return J;
}

Expected<std::optional<InFlight>>
SearchState::candidateJob(KernelState &K, VariantState &V,
                          const std::string &Level, const std::string &Operator,
                          std::optional<int64_t> Parent,
                          std::optional<search::Point> P) {
  InnerSettings S = settingsOf(K, V, P);
  InFlight F;
  F.Job = makeJob(K, V, S);
  // The application's own code first shows that it is deterministic
  // (Determinism.h): otherwise exact verification would fail everything.
  if (Level == "baseline" && C.Target == Backend::Cuda)
    F.Job.Work.DeterminismRuns = C.Evaluation.DeterminismRuns;
  std::vector<std::string> Ls;
  for (uint32_t L : K.Launches)
    Ls.push_back(std::to_string(L));
  std::string SourcePart =
      V.Recorded ? ""
                 : sha256Hex(V.Text + '\0' + join(F.Job.Source->Flags, "\n"));
  CandidateRow Row;
  Row.Identity = candidateIdentity({K.Mangled, K.Fingerprint, join(Ls, ","),
                                    SourcePart, settingsJson(S), Evaluation,
                                    backendName(C.Target), K.Device});
  Row.KernelId = K.Id;
  Row.VariantId = V.Id;
  Row.Level = P ? innerLevel(S) : Level;
  Row.Operator = Operator;
  Row.ParentId = Parent;
  Row.Point = P ? V.Space->describe(*P) : "";
  Row.PointJson = P ? pointJson(*P) : "";
  Row.SettingsJson = settingsJson(S);
  Row.State = CandidateState::Running;
  Row.Created = nowSeconds();
  std::optional<int64_t> Id;
  R3_TRY(moveInto(H.addCandidate(Row), Id));
  if (!Id)
    return std::optional<InFlight>();
  if (P)
    ++V.Issued;
  else
    V.SourceCandidate = *Id;
  ++Issued;
  F.JobId = NextJob++;
  F.Kernel = &K;
  F.Variant = &V;
  F.Candidate = *Id;
  F.Level = Row.Level;
  F.Point = P;
  return std::optional<InFlight>(std::move(F));
}

} // namespace r3
