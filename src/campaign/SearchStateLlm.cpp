// The search state's side of the LLM operator: the session (one client and
// budget for all kernels, resumed with what the history already spent), the
// facts each prompt gives about its parent (source, device, recorded
// launch, measurements, the best so far, the lineage's failures), and the
// record of every call in the history. The API key is read from the
// environment here and handed to the client; nothing else ever sees it.
#include "campaign/SearchState.h"
#include "compile/Rewrite.h"

#include "campaign/Identity.h"
#include "support/Diff.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <unistd.h>

namespace r3 {

namespace {
namespace fs = std::filesystem;

/// The kernel's facts for its operator: a view of the coordinator.
class KernelFacts : public llm::LlmContext {
public:
  KernelFacts(SearchState &Co, KernelState &K) : Co(Co), K(K) {}
  Expected<llm::ParentFacts> describe(const search::Elite &Parent) override {
    return Co.describeParent(K, Parent);
  }

private:
  SearchState &Co;
  KernelState &K;
};

std::string ms(double V) {
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.4g ms", V);
  return Buf;
}

/// The host's cores and caches (sysconf; 0 where unknown).
std::string hostLimits() {
  std::string Out = std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) + " cores";
  const std::pair<int, const char *> Caches[] = {
      {_SC_LEVEL1_DCACHE_SIZE, "L1d"},
      {_SC_LEVEL2_CACHE_SIZE, "L2"},
      {_SC_LEVEL3_CACHE_SIZE, "L3"}};
  for (const auto &[Name, Label] : Caches)
    if (long Size = ::sysconf(Name); Size > 0)
      Out += std::string(", ") + Label + " " + formatBytes(uint64_t(Size));
  return Out;
}

std::string languageOf(const std::string &File, Backend B) {
  if (B == Backend::Cuda)
    return "CUDA";
  std::string Ext = fs::path(File).extension().string();
  return Ext == ".c" ? "C" : "C++";
}

std::string fenceOf(const std::string &Language) {
  return Language == "C" ? "c" : Language == "CUDA" ? "cuda" : "cpp";
}

std::string verifyFacts(const VerifySettings &V) {
  if (V.Tolerance == ToleranceKind::Exact)
    return "bitwise identical (the comparison is exact: keep the order of "
           "floating-point operations)";
  char Buf[160];
  std::snprintf(Buf, sizeof Buf, "within a %s tolerance of %g, compared as %s",
                toleranceKindName(V.Tolerance), V.Value,
                elementTypeName(V.Type));
  return Buf;
}

/// The folders a quoted include may come from: the source's own and the
/// kernel's -I folders.
std::vector<std::string> includeDirs(const KernelSpec &K,
                                     const std::string &File,
                                     const std::string &CampaignDir) {
  std::vector<std::string> Dirs = {fs::path(File).parent_path().string()};
  for (size_t I = 0; I < K.CFlags.size(); ++I) {
    std::string Dir;
    if (K.CFlags[I] == "-I" && I + 1 < K.CFlags.size())
      Dir = K.CFlags[++I];
    else if (K.CFlags[I].starts_with("-I"))
      Dir = K.CFlags[I].substr(2);
    if (!Dir.empty())
      Dirs.push_back((fs::path(CampaignDir) / Dir).lexically_normal().string());
  }
  return Dirs;
}

std::string clip(const std::string &S, size_t Max) {
  return S.size() <= Max ? S : S.substr(0, Max) + "\n[... cut]";
}
} // namespace

std::string describeLaunch(const KernelInfo &K, const LaunchInfo &L) {
  std::string Out;
  for (size_t I = 0; I < K.Params.size(); ++I) {
    const ParamInfo &P = K.Params[I];
    uint64_t V = 0;
    if (P.Offset + P.Size <= L.Params.size() && P.Size <= 8)
      std::memcpy(&V, L.Params.data() + P.Offset, P.Size);
    std::string What = std::to_string(V);
    for (size_t R = 0; R < L.Regions.size(); ++R)
      if (P.Size == 8 && V >= L.Regions[R].Base &&
          V < L.Regions[R].Base + L.Regions[R].Size)
        What = "a pointer into region " + std::to_string(R);
    Out += "- parameter " + std::to_string(I) + " (" + std::to_string(P.Size) +
           " bytes): " + What + "\n";
  }
  for (size_t R = 0; R < L.Regions.size(); ++R)
    Out += "- region " + std::to_string(R) + ": " +
           formatBytes(L.Regions[R].Size) +
           (L.Regions[R].Name.empty() ? "" : " (" + L.Regions[R].Name + ")") +
           (L.Regions[R].Changed ? ", written by the kernel" : ", read only") +
           "\n";
  return Out;
}

namespace {
/// Peak memory bandwidth, bytes a second, of GPUs r3 knows by name.
std::optional<double> peakBandwidth(const std::string &Name) {
  static const std::pair<const char *, double> Known[] = {
      {"H200", 4.8e12},   {"H100 NVL", 3.9e12}, {"H100 PCIe", 2.0e12},
      {"H100", 3.35e12},  {"GH200", 4.0e12},    {"A100-SXM4-80GB", 2.04e12},
      {"A100", 1.555e12}, {"L40S", 0.864e12},   {"V100", 0.9e12}};
  for (const auto &[Key, Bw] : Known)
    if (Name.find(Key) != std::string::npos)
      return Bw;
  return std::nullopt;
}
} // namespace

std::string limitsFacts(const KernelInfo &K, const LaunchInfo &L,
                        const DeviceInfo &D) {
  // The regions its pointer parameters point into: what it can read; those
  // the launch changed: what it wrote.
  std::set<size_t> Reached;
  for (const ParamInfo &P : K.Params) {
    uint64_t V = 0;
    if (P.Size != 8 || P.Offset + 8 > L.Params.size())
      continue;
    std::memcpy(&V, L.Params.data() + P.Offset, 8);
    for (size_t R = 0; R < L.Regions.size(); ++R)
      if (V >= L.Regions[R].Base && V - L.Regions[R].Base < L.Regions[R].Size)
        Reached.insert(R);
  }
  uint64_t Read = 0, Written = 0;
  for (size_t R : Reached) {
    Read += L.Regions[R].Size;
    Written += L.Regions[R].Changed ? L.Regions[R].Size : 0;
  }
  std::string Out;
  char Buf[256];
  std::snprintf(Buf, sizeof Buf, "- launch: grid %ux%ux%u, block %ux%ux%u",
                L.Grid[0], L.Grid[1], L.Grid[2], L.Block[0], L.Block[1],
                L.Block[2]);
  Out += Buf;
  if (L.DurationNs)
    Out += ", " + ms(*L.DurationNs / 1e6) + " in the application";
  Out += "\n";
  if (Reached.empty())
    return Out + "- memory: r3 recorded none that its pointers reach\n";
  Out += "- memory its pointers reach: " + formatBytes(Read) + " (" +
         formatBytes(Written) + " of it written by the launch)\n";
  if (L.DurationNs && *L.DurationNs > 0) {
    double Bw = double(Read + Written) / (*L.DurationNs / 1e9);
    std::snprintf(Buf, sizeof Buf,
                  "- if it read all of it and wrote what changed once: "
                  "%.0f GB/s",
                  Bw / 1e9);
    Out += Buf;
    if (auto Peak = peakBandwidth(D.Name)) {
      std::snprintf(Buf, sizeof Buf,
                    ", %.0f%% of this GPU's peak %.3g TB/s (near 100%%: "
                    "memory bound; far below: latency or compute bound)",
                    100 * Bw / *Peak, *Peak / 1e12);
      Out += Buf;
    }
    Out += "\n";
  }
  return Out;
}

std::string occupancyText(int64_t Registers, int64_t SharedBytes,
                          uint32_t Threads, int Major) {
  if (Major < 7 || Threads == 0 || Threads > 1024 || Registers <= 0)
    return "";
  // Volta to Hopper: 64K registers, 2048 threads and 32 blocks an SM;
  // registers allocated per warp in units of 256.
  const int64_t MaxThreads = 2048;
  const int64_t SharedPerSm = Major >= 9 ? 228 * 1024 : 164 * 1024;
  int64_t Warps = (Threads + 31) / 32;
  int64_t RegsPerWarp = (Registers * 32 + 255) / 256 * 256;
  int64_t ByRegs = 65536 / (RegsPerWarp * Warps);
  int64_t ByThreads = MaxThreads / (Warps * 32);
  int64_t ByShared = SharedBytes > 0 ? SharedPerSm / SharedBytes : 32;
  int64_t Blocks = std::min({ByRegs, ByThreads, ByShared, int64_t(32)});
  const char *Limit = Blocks == ByThreads  ? "threads"
                      : Blocks == ByRegs   ? "registers"
                      : Blocks == ByShared ? "shared memory"
                                           : "blocks";
  char Buf[160];
  std::snprintf(Buf, sizeof Buf,
                "at most %lld blocks of %u threads an SM (%.0f%% occupancy, "
                "limited by %s)",
                static_cast<long long>(Blocks), Threads,
                100.0 * Blocks * Warps * 32 / MaxThreads, Limit);
  return Buf;
}

Expected<std::string> llmApiKey(const Campaign &C) {
  if (!C.Llm.Given || C.Llm.ApiKeyEnv.empty())
    return std::string();
  const char *Key = std::getenv(C.Llm.ApiKeyEnv.c_str());
  if (!Key || !*Key)
    return makeError(C.Path, ": [llm] api_key_env names ", C.Llm.ApiKeyEnv,
                     ", which is not set in the environment (export it, or "
                     "remove api_key_env for a server that needs no key)");
  return std::string(Key);
}

Error SearchState::startLlm() {
  const LlmSpec &L = C.Llm;
  auto Op = std::find_if(C.Source.Operators.begin(), C.Source.Operators.end(),
                         [](const auto &P) { return P.first == "llm"; });
  if (!L.Given || Op == C.Source.Operators.end() || !(Op->second > 0))
    return Error::success();
  llm::ClientOptions O;
  R3_TRY(moveInto(llmApiKey(C), O.ApiKey));
  O.Endpoint = L.Endpoint;
  for (const LlmModelSpec &M : L.Models)
    O.Models.push_back({M.Name, M.Weight});
  O.Temperature = L.Temperature;
  O.MaxTokens = L.MaxTokens;
  O.Concurrency = L.Concurrency;
  O.TimeoutSeconds = L.TimeoutSeconds;
  O.Retries = L.Retries;
  O.BackoffSeconds = L.BackoffSeconds;
  O.MaxCalls = L.MaxCalls;
  O.MaxTotalTokens = L.MaxTotalTokens;
  O.Seed = C.Seed;
  auto Prompts = llm::loadPrompts(L.Prompts);
  if (!Prompts)
    return Prompts.takeError();
  auto Client = llm::ChatClient::create(std::move(O));
  if (!Client)
    return std::move(Client.takeError()).context(C.Path + ": [llm]");
  std::vector<LlmCallRow> Calls;
  R3_TRY(moveInto(H.llmCalls(), Calls));
  uint64_t Tokens = 0;
  for (const LlmCallRow &R : Calls)
    Tokens += R.TokensIn + R.TokensOut;
  (*Client)->charge(Calls.size(), Tokens);
  Llm = std::make_unique<llm::LlmSession>(std::move(*Client),
                                          std::move(*Prompts));
  return Error::success();
}

void SearchState::noteLlmStop(KernelState &K) {
  // A parent the operator cannot describe (its source no longer defines the
  // kernel, say) declines that request only; each reason is told once.
  if (K.Llm && !K.Llm->lastDecline().empty() && Llm &&
      Llm->unavailable().empty() &&
      K.LlmDeclines.insert(K.Llm->lastDecline()).second)
    Notes.push_back(K.Spec->Name + ": the llm operator declined a request: " +
                    K.Llm->lastDecline());
  if (!Llm || LlmStopNoted)
    return;
  if (std::string Why = Llm->unavailable(); !Why.empty()) {
    LlmStopNoted = true;
    Notes.push_back("the llm operator makes no more calls: " + Why);
  }
}

void SearchState::attachLlm(KernelState &K, double Rate) {
  if (!Llm)
    return;
  K.LlmFacts = std::make_unique<KernelFacts>(*this, K);
  auto Op = std::make_unique<llm::LlmOperator>(
      *Llm, static_cast<unsigned>(Kernels.size()), *K.LlmFacts);
  K.Llm = Op.get();
  K.Evo->addOperator(std::move(Op), Rate);
}

Error SearchState::recordLlmCalls(
    KernelState &K, const std::map<uint64_t, int64_t> &TagToVariant) {
  if (!K.Llm)
    return Error::success();
  for (llm::LlmCall &Call : K.Llm->takeCalls()) {
    LlmCallRow Row;
    Row.KernelId = K.Id;
    Row.ParentVariantId = Call.ParentVariant;
    if (auto It = TagToVariant.find(Call.Tag); It != TagToVariant.end())
      Row.VariantId = It->second;
    const llm::ChatResult &R = Call.Result;
    Row.Model = R.Model;
    Row.PromptHash = sha256Hex(Call.Prompt);
    R3_TRY(H.putPrompt(Row.PromptHash, Call.Prompt));
    Row.TokensIn = R.TokensIn;
    Row.TokensOut = R.TokensOut;
    Row.LatencyMs = R.LatencyMs;
    Row.Attempts = R.Attempts;
    Row.HttpStatus = R.HttpStatus;
    Row.Outcome = Call.Outcome;
    Row.Reason = Call.Reason;
    Row.Reply = R.Content;
    Row.Started = R.Started;
    Row.Finished = R.Finished;
    R3_TRY(H.addLlmCall(Row).takeError());
    if (Call.Outcome == "llm_invalid")
      K.LineageFailures.push_back(
          {{Call.ParentVariant}, "llm_invalid", Call.Reason});
    if (Call.Outcome != "ok" && Call.Outcome != "cancelled")
      Notes.push_back(K.Spec->Name + ": LLM call " + Call.Outcome + ": " +
                      clip(Call.Reason, 200));
  }
  return Error::success();
}

Error SearchState::rebuildLlm(KernelState &K) {
  std::vector<LlmCallRow> Calls;
  R3_TRY(moveInto(H.llmCalls(K.Id), Calls));
  for (const LlmCallRow &R : Calls)
    if (R.Outcome == "llm_invalid")
      K.LineageFailures.push_back(
          {{R.ParentVariantId.value_or(0)}, "llm_invalid", R.Reason});
  return Error::success();
}

void SearchState::noteFailure(KernelState &K, const VariantState &V,
                              const CandidateResult &R) {
  if (V.Recorded || R.Verified)
    return;
  K.LineageFailures.push_back(
      {V.Parents, failureKindName(R.Failure), R.Message});
}

std::string SearchState::failuresFor(const KernelState &K,
                                     int64_t Parent) const {
  // The lineage: the parent and its ancestors.
  std::set<int64_t> Lineage;
  std::vector<int64_t> Todo = {Parent};
  while (!Todo.empty()) {
    int64_t Id = Todo.back();
    Todo.pop_back();
    if (!Lineage.insert(Id).second)
      continue;
    for (const VariantState &V : K.Variants)
      if (V.Id == Id)
        Todo.insert(Todo.end(), V.Parents.begin(), V.Parents.end());
  }
  std::vector<const LineageFailure *> Mine;
  for (const LineageFailure &F : K.LineageFailures)
    if (std::any_of(F.Parents.begin(), F.Parents.end(),
                    [&](int64_t P) { return Lineage.count(P); }))
      Mine.push_back(&F);
  size_t N = std::min<size_t>(Mine.size(), C.Llm.FailuresInPrompt);
  std::string Out;
  for (size_t I = Mine.size() - N; I < Mine.size(); ++I)
    Out += "- " + Mine[I]->Kind + ": " + clip(Mine[I]->Message, 800) + "\n";
  return Out;
}

namespace {
/// A variant's rewrite knobs (compile/Rewrite.h) and its -D defines of the
/// others.
std::pair<std::map<std::string, std::string>, std::vector<std::string>>
splitKnobs(const KernelState &K, const search::SourceGenome &G) {
  std::map<std::string, std::string> Rewrites;
  std::vector<std::string> Defines;
  for (size_t I = 0; I < K.Model.Knobs.size() && I < G.Knobs.size(); ++I) {
    const search::KnobDomain &D = K.Model.Knobs[I];
    if (isRewriteKnob(D.Name))
      Rewrites[D.Name] = D.Values.at(G.Knobs[I]);
    else
      Defines.push_back("-D" + D.Name + "=" + D.Values.at(G.Knobs[I]));
  }
  return {Rewrites, Defines};
}

/// A variant's text as plain source: its rewrites written in, and the blank
/// lines the kernel alone leaves for dropped functions squeezed.
std::string plainText(const KernelState &K, const VariantState &V) {
  std::string T = resolve(V.Text, splitKnobs(K, V.Genome).first), Out;
  size_t Newlines = 0;
  for (char C : T) {
    Newlines = C == '\n' ? Newlines + 1 : 0;
    if (Newlines <= 2)
      Out += C;
  }
  return Out;
}

/// What r3's own rewrites found: the fastest variants that set rewrite
/// knobs, each with what it changed.
std::string rewriteFacts(const KernelState &K) {
  std::vector<const VariantState *> Found;
  for (const VariantState &V : K.Variants)
    if (!V.Recorded && V.BestMs && V.Text.find("R3_RW_") != std::string::npos) {
      auto [Rw, _] = splitKnobs(K, V.Genome);
      if (std::any_of(Rw.begin(), Rw.end(),
                      [](const auto &P) { return P.second != "0"; }))
        Found.push_back(&V);
    }
  std::sort(Found.begin(), Found.end(),
            [](auto *A, auto *B) { return *A->BestMs < *B->BestMs; });
  std::string Out;
  auto Base = K.baselineMs();
  for (size_t I = 0; I < Found.size() && I < 8; ++I) {
    std::vector<std::string> What;
    for (const auto &[Knob, Value] : splitKnobs(K, Found[I]->Genome).first)
      if (Value != "0") {
        auto It = K.RewriteSites.find(Knob);
        std::string Site = It == K.RewriteSites.end() ? Knob : It->second;
        if (Knob == GridStrideKnob)
          What.push_back(Value == "1" ? "a grid-stride loop"
                                      : "a grid-stride loop taking " + Value +
                                            " elements a thread each pass");
        else
          What.push_back(Knob.rfind("R3_RW_UNROLL", 0) == 0
                             ? (Value == "-1"
                                    ? "full unroll of the "
                                    : "unroll " + Value + " of the ") +
                                   Site
                             : (Value == "2" ? "const __restrict__ on "
                                             : "__restrict__ on ") +
                                   Site);
      }
    char Buf[64] = "";
    if (Base)
      std::snprintf(Buf, sizeof Buf, " (%.3gx)", *Base / *Found[I]->BestMs);
    Out += "- " + join(What, ", ") + ": " + ms(*Found[I]->BestMs) + Buf + "\n";
  }
  return Out;
}
} // namespace

std::string SearchState::bestFacts(const KernelState &K, int64_t Parent) const {
  const VariantState *Best = nullptr, *Mine = nullptr;
  for (const VariantState &V : K.Variants) {
    if (!V.Recorded && V.BestMs && (!Best || *V.BestMs < *Best->BestMs))
      Best = &V;
    if (V.Id == Parent)
      Mine = &V;
  }
  if (!Best || !Mine || Best->Id == Parent)
    return "";
  std::string Out = "It takes " + ms(*Best->BestMs);
  if (auto Base = K.baselineMs()) {
    char Buf[64];
    std::snprintf(Buf, sizeof Buf, " (%.3gx the recorded kernel's speed)",
                  *Base / *Best->BestMs);
    Out += Buf;
  }
  // What distinguishes it: its knobs, and its text as a diff against this
  // source (short where the two are close, which is where it helps most).
  // Rewrites are in the texts (plainText), not among the knobs.
  std::vector<std::string> Knobs;
  for (size_t I = 0; I < K.Model.Knobs.size() && I < Best->Genome.Knobs.size();
       ++I)
    if ((I >= Mine->Genome.Knobs.size() ||
         Best->Genome.Knobs[I] != Mine->Genome.Knobs[I]) &&
        !isRewriteKnob(K.Model.Knobs[I].Name))
      Knobs.push_back("-D" + K.Model.Knobs[I].Name + "=" +
                      K.Model.Knobs[I].Values.at(Best->Genome.Knobs[I]));
  if (!Knobs.empty())
    Out += "; it compiles with " + join(Knobs, " ");
  std::string Diff = unifiedDiff(plainText(K, *Mine), plainText(K, *Best),
                                 "this source", "the best");
  if (Diff.empty())
    return Out + "; its text is this source's.\n";
  return Out + ". It differs from this source as follows:\n```diff\n" +
         clip(Diff, 12000) + "```\n";
}

Expected<llm::ParentFacts>
SearchState::describeParent(KernelState &K, const search::Elite &Parent) {
  const VariantState *P = nullptr;
  for (const VariantState &V : K.Variants)
    if (V.Id == Parent.Id)
      P = &V;
  if (!P || P->Recorded)
    return makeError("variant ", Parent.Id, " has no source");
  llm::ParentFacts F;
  const std::string &File = K.Model.Files.at(P->Genome.File);
  std::string Name = llm::kernelBaseName(K.Spec->Name);
  // The model reads the parent as plain source, its rewrites written in;
  // its reply is a text of its own, which the rewrite knobs leave alone.
  std::string Text = plainText(K, *P);
  std::string Signature;
  R3_TRY(moveInto(llm::kernelSignature(Text, Name), Signature));
  const std::string &Original = K.FileTexts[K.Model.Files.front()];
  std::vector<std::string> Includes = llm::includeLines(Original);
  std::string Lang = languageOf(File, C.Target);
  std::vector<std::string> Knobs = splitKnobs(K, P->Genome).second;
  auto &V = F.Values;
  V["kernel"] = Name;
  V["language"] = Lang;
  V["fence"] = fenceOf(Lang);
  V["source"] = Text.ends_with("\n") ? Text : Text + "\n";
  V["signature"] = Signature;
  V["includes"] = Includes.empty() ? "none" : join(Includes, ", ");
  V["knobs"] = join(Knobs, " ");
  V["device"] =
      K.Device +
      (C.Target == Backend::Host ? " (" + hostLimits() + ")" : std::string());
  V["capture"] = K.LaunchFacts;
  V["limits"] = K.LimitFacts;
  V["rewrites"] = rewriteFacts(K);
  V["verify"] = verifyFacts(K.Spec->Verify);
  if (auto Base = K.baselineMs())
    V["baseline_ms"] = ms(*Base);
  if (P->BestMs) {
    V["parent_ms"] = ms(*P->BestMs);
    if (auto Base = K.baselineMs()) {
      char Buf[32];
      std::snprintf(Buf, sizeof Buf, "%.3gx", *Base / *P->BestMs);
      V["parent_speedup"] = Buf;
    }
  }
  V["compile_report"] = P->CompileReport;
  V["best"] = bestFacts(K, P->Id);
  V["failures"] = failuresFor(K, P->Id);
  F.Rules.Kernel = Name;
  F.Rules.Parent = Text;
  F.Rules.Includes = Includes;
  F.Rules.IncludeDirs = includeDirs(*K.Spec, File, C.Dir);
  F.Rules.Language = C.Target == Backend::Cuda ? llm::KernelLanguage::Cuda
                                               : llm::KernelLanguage::Host;
  return F;
}

Error SearchState::pumpLlm() {
  if (!Llm)
    return Error::success();
  unsigned Room = std::max(1u, C.Llm.Concurrency);
  for (KernelState &K : Kernels) {
    if (!K.Llm || !budgetLeft() || K.targetReached(C.Budget.TargetSpeedup))
      continue;
    std::vector<search::Offspring> Kids = takeChildren(
        K, K.Evo->archive().best() && K.openVariants() < Workers + Room);
    std::vector<VariantState *> Made;
    R3_TRY(moveInto(addVariants(K, Kids), Made));
    for (VariantState *V : Made)
      Queue.push_back({&K, V, CandidateRow{}, std::nullopt});
  }
  return Error::success();
}

bool SearchState::waiting() const {
  if (!budgetLeft() || !Llm)
    return false;
  for (const KernelState &K : Kernels)
    if (K.Llm && K.Llm->inFlight() > 0)
      return true;
  // A call that failed at once leaves nothing in flight, yet the operator
  // can still make children while it is available and has a parent.
  if (!Llm->unavailable().empty())
    return false;
  return std::any_of(Kernels.begin(), Kernels.end(), [&](const KernelState &K) {
    return K.Llm && K.Evo->archive().best() &&
           !K.targetReached(C.Budget.TargetSpeedup);
  });
}

Error SearchState::closeLlm() {
  if (!Llm)
    return Error::success();
  // cancelAll() returns once every call has its result; replies that
  // arrived too late make no variant, but their calls are kept.
  Llm->client().cancelAll();
  for (KernelState &K : Kernels)
    if (K.Llm)
      (void)K.Llm->collect();
  for (KernelState &K : Kernels)
    R3_TRY(recordLlmCalls(K, {}));
  return Error::success();
}

} // namespace r3
