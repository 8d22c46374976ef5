// `r3 replay` of a CUDA capture. Without --source the recorded module (the
// cubin the application loaded) is replayed as it is: the fidelity baseline.
// With --source, each --pipeline is compiled here by the variant compiler
// (no GPU needed; its stages cached) and the cubin is sent to the replay
// server, which owns the GPU. --block changes the launch; --grid-rule says
// how the grid follows (LaunchRule.h). Each result carries the compile
// report and the in-application duration of the launch beside the replay's.
#include "cli/Diagnostics.h"
#include "cli/Replay.h"
#include "cli/VariantOptions.h"
#include "compile/cuda/CudaCompiler.h"
#include "compile/cuda/VariantOptions.h"
#include "replay/LaunchRule.h"
#include "replay/ServerClient.h"
#include "replay/Stats.h"
#include "support/Clock.h"
#include "support/FileUtil.h"
#include "support/Paths.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <map>

namespace r3::cli {

namespace {
using nlohmann::json;
using namespace replay;

/// The CUDA-only options of a replay.
struct CudaPlan {
  std::optional<uint32_t> DynamicShared; ///< --dynamic-shared
  CachePreference Cache = CachePreference::None;
  std::optional<Dim3> Block; ///< of the candidate being evaluated
  /// --block, repeatable: each is one more candidate (launch-only variants
  /// compile nothing more).
  std::vector<Dim3> Blocks;
  GridRule Rule;
  std::string RuleText; ///< --grid-rule as given; empty: keep-threads
  /// --grid-x, --grid-per-sm: a grid-stride kernel's grid in x, as blocks
  /// or as blocks per multiprocessor of the replaying GPU; 0: as the
  /// recording or the rule give it.
  uint32_t GridX = 0, GridPerSm = 0;
  /// --source, repeatable for CUDA captures: each is one more variant,
  /// evaluated in the same server; empty: the recorded module.
  std::vector<std::string> Sources;
  std::vector<std::string> Flags; ///< the front end's, for every source
  CompileSettings Settings;       ///< all but the pipeline (--pipeline)
  std::string CacheDir;
};

Error needsSource(const ParsedArgs &A, const ReplayPlan &P) {
  if (P.Source)
    return Error::success();
  for (const char *O :
       {"--pipeline", "--codegen-opt", "--max-registers", "--launch-bounds",
        "--specialize", "--cflags", "--compile-commands", "--toolchain",
        "--fast-math", "--nvcc-options"})
    if (A.has(O))
      return makeError("option '", O,
                       "' needs --source: without it the recorded module (a "
                       "cubin) is replayed as it is");
  return Error::success();
}

/// --dynamic-shared BYTES and --cache-preference none|shared|l1|equal.
Error parseLaunchExtras(const ParsedArgs &A, CudaPlan &C) {
  R3_TRY(moveInto(boundedOption(A, "--dynamic-shared", 0, 1u << 30),
                  C.DynamicShared));
  std::string Cache;
  R3_TRY(moveInto(choiceValue(A, "--cache-preference",
                              {"none", "shared", "l1", "equal"}, "none"),
                  Cache));
  C.Cache = *parseCachePreference(Cache);
  std::optional<uint32_t> N;
  R3_TRY(moveInto(boundedOption(A, "--grid-x", 1, 0x7fffffffu), N));
  C.GridX = N.value_or(0);
  R3_TRY(moveInto(boundedOption(A, "--grid-per-sm", 1, 1024), N));
  C.GridPerSm = N.value_or(0);
  if (C.GridX && C.GridPerSm)
    return Error::make("options '--grid-x' and '--grid-per-sm' both set the "
                       "grid in x: give one");
  return Error::success();
}

Error parseCompile(const ParsedArgs &A, const ReplayPlan &P,
                   const CaptureReader &R, CudaPlan &C) {
  if (!P.Source)
    return Error::success();
  C.Sources = A.Values.find("--source")->second;
  for (const std::string &S : C.Sources)
    if (!pathExists(S))
      return makeError("option '--source': no such file '", S, "'");
  R3_TRY(moveInto(parseCompilerFlags(A, C.Sources.front()), C.Flags));
  R3_TRY(parseCompilerSettings(A, C.Settings));
  if (R.header().Device.ComputeMajor <= 0)
    return makeError(R.path(), ": the capture does not say which compute "
                               "capability it was recorded on");
  C.CacheDir = A.value("--cache-dir").value_or(defaultCacheDir());
  return Error::success();
}

Expected<CudaPlan> parseCudaPlan(const ParsedArgs &A, const ReplayPlan &P,
                                 const CaptureReader &R) {
  R3_TRY(needsSource(A, P));
  if (A.has("--max-memory"))
    return Error::make("option '--max-memory' applies to host captures: a "
                       "CUDA replay server takes the address space the "
                       "driver needs");
  CudaPlan C;
  if (auto It = A.Values.find("--block"); It != A.Values.end())
    for (const std::string &B : It->second) {
      Dim3 D;
      R3_TRY(moveInto(parseDim3(B, "option '--block'"), D));
      C.Blocks.push_back(D);
    }
  C.RuleText = A.value("--grid-rule").value_or("");
  R3_TRY(moveInto(
      parseGridRule(C.RuleText.empty() ? "keep-threads" : C.RuleText), C.Rule));
  R3_TRY(parseLaunchExtras(A, C));
  if (A.has("--grid-rule") && C.Blocks.empty())
    return Error::make("option '--grid-rule' needs --block: the grid follows "
                       "a changed block size");
  R3_TRY(parseCompile(A, P, R, C));
  return C;
}

/// The launch shape a candidate runs with: the recorded one, or the new
/// block with the grid its rule gives.
Expected<std::pair<Dim3, Dim3>> shapeOf(const CudaPlan &C, const LaunchInfo &L,
                                        const KernelInfo &K,
                                        const std::vector<std::string> &Names) {
  if (!C.Block)
    return std::pair<Dim3, Dim3>{L.Grid, L.Block};
  LaunchValues V{L.Grid, L.Block, *C.Block, paramValues(L, K, Names)};
  Dim3 G;
  R3_TRY(moveInto(applyGridRule(C.Rule, V), G));
  return std::pair<Dim3, Dim3>{G, *C.Block};
}

json dimJson(const Dim3 &D) { return json::array({D[0], D[1], D[2]}); }

json reportJson(const CudaCompileReport &R, CudaToolchain T) {
  return {{"toolchain", cudaToolchainName(T)},
          {"ptx_bytes", R.PtxBytes},
          {"frontend_ms", R.FrontendMs},
          {"opt_ms", R.OptMs},
          {"codegen_ms", R.CodegenMs},
          {"link_ms", R.LinkMs},
          {"cached",
           {{"frontend", R.FrontendCached},
            {"ptx", R.PtxCached},
            {"cubin", R.CubinCached}}}};
}

/// The report of a cubin reused within one run: every stage skipped.
CudaCompileReport reusedReport(CudaCompileReport R) {
  R.CompileMs = R.FrontendMs = R.OptMs = R.CodegenMs = R.LinkMs = 0;
  R.FrontendCached = R.PtxCached = R.CubinCached = true;
  return R;
}

/// What the application measured for this launch and for every launch of
/// its kernel, beside the replay's own times.
json appJson(const LaunchInfo &L, const KernelInfo &K) {
  json J = {
      {"in_app_ms", L.DurationNs ? json(*L.DurationNs / 1e6) : json(nullptr)}};
  if (!K.AppDurationsNs.empty()) {
    TimingStats S = computeStatsMs(K.AppDurationsNs);
    J["in_app_median_ms"] = S.Median;
    J["in_app_launches"] = K.AppDurationsNs.size();
  }
  return J;
}

class CudaReplay {
public:
  CudaReplay(const CaptureReader &R, const ReplayPlan &P, const CudaPlan &C,
             ServerClient &Client)
      : R(R), P(P), C(C),
        Client(Client), Out{P.Json, P.Capture, "cuda", P.NoiseThreshold} {}
  Expected<bool> run(const LaunchSelection &Sel);

private:
  Expected<CandidateResult> evaluate(const std::string *Source,
                                     const std::string &Pipeline,
                                     uint32_t Launch, uint32_t K, json &Extra);
  Expected<std::optional<CandidateResult>>
  compile(Candidate &Cand, const std::string &Source,
          const std::string &Pipeline, uint32_t Launch, const KernelInfo &K,
          json &Extra, std::vector<std::string> &Names);

  const CaptureReader &R;
  const ReplayPlan &P;
  CudaPlan C;
  ServerClient &Client;
  Printer Out;
  std::map<std::string, CudaCompiled> Compiles; ///< by source and pipeline
};

/// Compiles the candidate's code into Cand; a compile error is the result.
Expected<std::optional<CandidateResult>>
CudaReplay::compile(Candidate &Cand, const std::string &Source,
                    const std::string &Pipeline, uint32_t Launch,
                    const KernelInfo &K, json &Extra,
                    std::vector<std::string> &Names) {
  CompileSettings Settings = C.Settings;
  Settings.Pipeline = Pipeline;
  CudaCompileOptions O;
  R3_TRY(moveInto(cudaCompileOptions({Source, C.Flags, K.Name}, Settings,
                                     {&R, Launch, C.Block, C.RuleText},
                                     C.CacheDir),
                  O));
  // A launch-only candidate (another block, the same source and pipeline)
  // reuses the cubin this run already has: nothing is compiled or even
  // looked up again. A specialized kernel depends on its launch.
  std::string Key =
      O.Specialize ? "" : Source + '\n' + Pipeline + '\n' + K.Name;
  auto Hit = Key.empty() ? Compiles.end() : Compiles.find(Key);
  CudaCompiled Done;
  if (Hit != Compiles.end()) {
    Done = Hit->second;
    Done.Report = reusedReport(Done.Report);
  } else {
    auto Compiled = compileCudaKernelIsolated(O);
    if (!Compiled)
      return std::optional<CandidateResult>(failedResult(
          FailureKind::CompileError, Compiled.takeError().message()));
    Done = std::move(*Compiled);
    if (!Key.empty())
      Compiles[Key] = Done;
  }
  const CudaCompileReport &Rep = Done.Report;
  Extra.update(reportJson(Rep, O.Settings.Toolchain));
  Names = Rep.ParamNames;
  Cand.Code = CodeKind::Cubin;
  Cand.Image = std::move(Done.Cubin);
  Cand.Pipeline = Rep.Pipeline;
  Cand.CodegenOpt = Rep.CodegenOpt;
  Extra["compile_ms"] = Rep.CompileMs;
  Extra["spills"] = Rep.Spills >= 0 ? json(Rep.Spills) : json(nullptr);
  return std::optional<CandidateResult>();
}

Expected<CandidateResult> CudaReplay::evaluate(const std::string *Source,
                                               const std::string &Pipeline,
                                               uint32_t Launch, uint32_t K,
                                               json &Extra) {
  const LaunchInfo &L = R.launches()[Launch];
  const KernelInfo &Kernel = R.kernels()[K];
  Candidate Cand = P.Base;
  Cand.Kernel = Kernel.Name;
  Cand.Launches = {Launch};
  Cand.DynamicShared = C.DynamicShared;
  Cand.Cache = C.Cache;
  std::vector<std::string> Names;
  double CompileMs = 0;
  if (Source) {
    Extra["source"] = *Source;
    std::optional<CandidateResult> Failed;
    R3_TRY(
        moveInto(compile(Cand, *Source, Pipeline, Launch, Kernel, Extra, Names),
                 Failed));
    if (Failed)
      return std::move(*Failed);
    CompileMs = Extra["compile_ms"].get<double>();
  }
  std::pair<Dim3, Dim3> Shape;
  auto S = shapeOf(C, L, Kernel, Names);
  if (!S)
    return failedResult(FailureKind::InvalidLaunch, S.takeError().message());
  Shape = *S;
  // A grid-stride kernel's grid in x: as given, or per multiprocessor of
  // the GPU the replay server runs on (which sets it).
  if (C.GridX)
    Shape.first[0] = C.GridX;
  if (C.Block || C.GridX) {
    Cand.Grid = Shape.first;
    Cand.Block = Shape.second;
  }
  Cand.GridPerSm = C.GridPerSm;
  Extra["grid"] = C.GridPerSm ? json(nullptr) : dimJson(Shape.first);
  if (C.GridPerSm)
    Extra["grid_per_sm"] = C.GridPerSm;
  Extra["block"] = dimJson(Shape.second);
  CandidateResult Res;
  R3_TRY(moveInto(Client.evaluate(Cand), Res));
  Res.CompileMs += CompileMs;
  Extra["compile_ms"] = Res.CompileMs;
  Extra["load_ms"] = Res.LoadMs;
  Extra["restore_ms"] = Res.RestoreMs;
  Extra["verify_ms"] = Res.VerifyMs;
  if (P.Source && Res.Pipeline.empty())
    Res.Pipeline = Cand.Pipeline;
  return Res;
}

Expected<bool> CudaReplay::run(const LaunchSelection &Sel) {
  std::vector<std::string> Pipelines = P.Pipelines;
  if (Pipelines.empty())
    Pipelines.push_back("");
  std::vector<const std::string *> Sources;
  for (const std::string &S : C.Sources)
    Sources.push_back(&S);
  if (Sources.empty())
    Sources.push_back(nullptr);
  std::vector<std::optional<Dim3>> Blocks(C.Blocks.begin(), C.Blocks.end());
  if (Blocks.empty())
    Blocks.push_back(std::nullopt);
  bool All = true;
  for (const std::string *Source : Sources)
    for (const std::string &Pipeline : Pipelines)
      for (const std::optional<Dim3> &Block : Blocks)
        for (const SelectedLaunch &One : Sel) {
          uint32_t Launch = One.Launch, K = One.Kernel;
          C.Block = Block;
          auto Start = std::chrono::steady_clock::now();
          json Extra = appJson(R.launches()[Launch], R.kernels()[K]);
          CandidateResult Res;
          R3_TRY(moveInto(evaluate(Source, Pipeline, Launch, K, Extra), Res));
          if (Res.Sandbox.empty())
            Res.Sandbox = Client.opened().Sandbox;
          Extra["server_starts"] = Client.starts();
          Out.print(R.kernels()[K].Name, One, Res, msSince(Start), Extra);
          All &= Res.Verified;
        }
  return All;
}
} // namespace

Error checkCudaReplayOptions(const ParsedArgs &A, const CaptureReader &R,
                             const ReplayPlan &P) {
  return parseCudaPlan(A, P, R).takeError();
}

Expected<bool> replayCuda(const ParsedArgs &A, const CaptureReader &R,
                          const ReplayPlan &P, const LaunchSelection &Sel) {
  CudaPlan C;
  R3_TRY(moveInto(parseCudaPlan(A, P, R), C));
  ReplayPlan Plan = P;
  Plan.Base.FlushL2 = A.has("--flush-l2");
  ServerOptions O;
  O.CapturePath = P.Capture; // no address-space limit: the server drops it
  auto Client = ServerClient::create(O);
  if (!Client)
    return Client.takeError();
  return CudaReplay(R, Plan, C, **Client).run(Sel);
}

} // namespace r3::cli
