// `r3 replay`: run recorded launches again in isolation, verify and time them.
// Everything the user typed is validated here, before a replay server starts;
// the server (a child process, ServerClient.h) compiles and runs each launch,
// and this file prints its results: a table, or one JSON object per launch.
#include "cli/Replay.h"
#include "support/Clock.h"
#include "capture/CaptureReader.h"
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "compile/CompileCommands.h"
#include "compile/host/HostJit.h"
#include "replay/ServerClient.h"
#include "replay/Stats.h"
#include "replay/Verify.h"
#include "support/FileUtil.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace r3::cli {

namespace {
using nlohmann::json;

Error parseMaxMemory(const ParsedArgs &A, std::optional<uint64_t> &Out) {
  auto V = A.value("--max-memory");
  if (!V)
    return Error::success();
  if (*V == "none") {
    Out = 0;
    return Error::success();
  }
  Out = parseSize(*V);
  if (!Out)
    return makeError("option '--max-memory' expects a size such as 16G or "
                     "512M, or 'none', got '",
                     *V, "'");
  return Error::success();
}

Expected<uint32_t> countOption(const ParsedArgs &A, std::string_view Name,
                               uint32_t Default, uint32_t Min) {
  auto V = A.value(Name);
  if (!V)
    return Default;
  auto N = parseUnsigned(*V);
  if (!N || *N < Min || *N > 1000000)
    return makeError("option '", Name, "' expects an integer from ", Min,
                     " to 1000000, got '", *V, "'");
  return static_cast<uint32_t>(*N);
}

Expected<double> secondsOption(const ParsedArgs &A, std::string_view Name,
                               double Default) {
  auto V = A.value(Name);
  if (!V)
    return Default;
  double S = 0;
  auto R = std::from_chars(V->data(), V->data() + V->size(), S);
  if (R.ec != std::errc() || R.ptr != V->data() + V->size() || !(S > 0) ||
      std::isinf(S))
    return makeError("option '", Name,
                     "' expects a positive number of seconds, got '", *V, "'");
  return S;
}

Error parseVerify(const ParsedArgs &A, VerifySettings &S) {
  if (auto T = A.value("--tolerance"))
    R3_TRY(parseTolerance(*T, S));
  std::string DType, Poison;
  R3_TRY(moveInto(choiceValue(A, "--dtype", {"f32", "f64"}, ""), DType));
  R3_TRY(moveInto(choiceValue(A, "--poison", {"auto", "on", "off"}, "auto"),
                  Poison));
  S.Type = DType == "f32"   ? ElementType::F32
           : DType == "f64" ? ElementType::F64
                            : ElementType::Bytes;
  S.Poison = Poison == "on"    ? PoisonMode::On
             : Poison == "off" ? PoisonMode::Off
                               : PoisonMode::Auto;
  if (S.Tolerance != ToleranceKind::Exact && S.Type == ElementType::Bytes)
    return makeError("option '--tolerance ", *A.value("--tolerance"),
                     "' needs --dtype f32|f64: the element type the outputs "
                     "are compared as");
  return Error::success();
}

Error parsePipelines(const ParsedArgs &A, std::vector<std::string> &Out) {
  auto It = A.Values.find("--pipeline");
  if (It == A.Values.end())
    return Error::success();
  for (const std::string &P : It->second) {
    if (Error E = checkPipeline(P))
      return makeError("option '--pipeline': ", E.message());
    Out.push_back(P);
  }
  return Error::success();
}

Error parseCompiler(const ParsedArgs &A, Candidate &C) {
  if (auto O = A.value("--codegen-opt")) {
    auto N = parseUnsigned(*O);
    if (!N || *N > 3)
      return makeError("option '--codegen-opt' expects 0, 1, 2 or 3, got '", *O,
                       "'");
    C.CodegenOpt = static_cast<int>(*N);
  }
  return Error::success();
}

Error parseLaunch(const ParsedArgs &A, ReplayPlan &P) {
  auto V = A.value("--launch");
  if (!V || *V == "all")
    return Error::success();
  P.Launch = parseLaunchRef(*V);
  if (!P.Launch)
    return makeError("option '--launch' expects a launch of the kernel (N), "
                     "the capture's launch N (@N) or 'all', got '",
                     *V, "'");
  return Error::success();
}

/// --min-repetitions and --target-ci: adaptive repetitions between the
/// minimum and --repetitions (the minimum defaults to 6, or to the maximum
/// when that is smaller).
Error parseRepetitionRule(const ParsedArgs &A, Candidate &C) {
  C.MinRepetitions = std::min<uint32_t>(6, C.Repetitions);
  if (A.has("--min-repetitions")) {
    R3_TRY(moveInto(countOption(A, "--min-repetitions", C.MinRepetitions, 1),
                    C.MinRepetitions));
    if (C.MinRepetitions > C.Repetitions)
      return makeError("option '--min-repetitions' (", C.MinRepetitions,
                       ") must not exceed --repetitions (", C.Repetitions,
                       ")");
  }
  if (auto T = A.value("--target-ci")) {
    double Pct = 0;
    auto Rc = std::from_chars(T->data(), T->data() + T->size(), Pct);
    if (Rc.ec != std::errc() || Rc.ptr != T->data() + T->size() ||
        !(Pct > 0) || Pct > 100)
      return makeError("option '--target-ci' expects a percentage such as "
                       "1, got '",
                       *T, "'");
    C.TargetCi = Pct / 100;
  }
  return Error::success();
}

/// Parses and checks every option; nothing is opened yet.
Expected<ReplayPlan> parsePlan(const ParsedArgs &A) {
  if (A.Positional.size() != 1)
    return makeError("expected one capture file, got ", A.Positional.size(),
                     " arguments");
  ReplayPlan P;
  P.Capture = A.Positional[0];
  P.Kernel = A.value("--kernel");
  P.Source = A.value("--source");
  P.CFlags = splitCommandLine(A.value("--cflags").value_or(""));
  R3_TRY(parseLaunch(A, P));
  Candidate &C = P.Base;
  R3_TRY(moveInto(countOption(A, "--repetitions", C.Repetitions, 1),
                  C.Repetitions));
  R3_TRY(moveInto(countOption(A, "--warmup", C.Warmup, 0), C.Warmup));
  R3_TRY(parseRepetitionRule(A, C));
  if (A.has("--check-determinism"))
    R3_TRY(moveInto(countOption(A, "--check-determinism", 5, 2),
                    C.DeterminismRuns));
  R3_TRY(moveInto(secondsOption(A, "--timeout", C.TimeoutSeconds),
                  C.TimeoutSeconds));
  R3_TRY(parseVerify(A, C.Verify));
  R3_TRY(parseCompiler(A, C));
  R3_TRY(parsePipelines(A, P.Pipelines));
  R3_TRY(parseMaxMemory(A, P.MaxMemory));
  if (auto T = A.value("--noise-threshold")) {
    double Pct = 0;
    auto Rc = std::from_chars(T->data(), T->data() + T->size(), Pct);
    if (Rc.ec != std::errc() || Rc.ptr != T->data() + T->size() || !(Pct > 0) ||
        Pct > 1000)
      return makeError("option '--noise-threshold' expects a percentage "
                       "such as 5, got '",
                       *T, "'");
    P.NoiseThreshold = Pct / 100;
  }
  std::string Format;
  R3_TRY(
      moveInto(choiceValue(A, "--format", {"table", "json"}, "table"), Format));
  P.Json = Format == "json";
  return P;
}

/// Options that mean something only to the CUDA backend, or not yet.
Error checkHostOptions(const ParsedArgs &A, const std::string &Capture) {
  for (const char *Cuda :
       {"--block", "--grid-rule", "--grid-x", "--grid-per-sm",
        "--max-registers", "--launch-bounds", "--flush-l2", "--toolchain",
        "--cache-dir", "--fast-math", "--dynamic-shared", "--cache-preference",
        "--check-determinism"})
    if (A.has(Cuda))
      return makeError("option '", Cuda, "' applies to CUDA captures; ",
                       Capture, " is a host capture");
  if (A.has("--specialize"))
    return Error::make("option '--specialize' is not built yet for the host "
                       "backend");
  if (auto It = A.Values.find("--source");
      It != A.Values.end() && It->second.size() > 1)
    return makeError("option '--source' is given ", It->second.size(),
                     " times; several sources are replayed in one run for "
                     "CUDA captures only");
  if (A.has("--compile-commands"))
    return Error::make("option '--compile-commands' is not built yet for the "
                       "host backend; pass the flags with --cflags");
  return Error::success();
}

std::vector<std::string> kernelNames(const CaptureReader &R) {
  std::vector<std::string> Names;
  for (const KernelInfo &K : R.kernels())
    Names.push_back(K.Name);
  return Names;
}

SelectedLaunch selected(const CaptureReader &R, uint32_t L) {
  const LaunchInfo &Info = R.launches()[L];
  return {L, Info.Kernel, Info.Ordinal};
}

/// The launches to replay, in capture order: --launch N is launch N of the
/// --kernel (or of the one kernel that has a launch N), --launch @N the
/// capture's launch N.
Expected<LaunchSelection> selectLaunches(const CaptureReader &R,
                                         const ReplayPlan &P) {
  std::optional<uint32_t> K;
  if (P.Kernel)
    R3_TRY(moveInto(findKernel(R, *P.Kernel), K));
  if (P.Launch) {
    uint32_t L = 0;
    R3_TRY(moveInto(K ? findLaunch(R, *K, *P.Launch)
                      : findLaunch(viewOf(R), *P.Launch),
                    L));
    return LaunchSelection{selected(R, L)};
  }
  LaunchSelection Out;
  for (uint32_t L = 0; L < R.launches().size(); ++L)
    if (!K || R.launches()[L].Kernel == *K)
      Out.push_back(selected(R, L));
  if (Out.empty())
    return makeError(R.path(), ": no recorded launch to replay");
  return Out;
}

/// The bitcode of --source, or the failure to show for each launch.
Expected<CandidateResult> compileSource(const ReplayPlan &P,
                                        const std::string &Kernel,
                                        std::vector<uint8_t> &Bitcode) {
  if (!pathExists(*P.Source))
    return makeError("option '--source': no such file '", *P.Source, "'");
  auto B = compileHostSource(*P.Source, Kernel, P.CFlags);
  if (!B)
    return failedResult(FailureKind::CompileError, B.takeError().message());
  Bitcode = std::move(*B);
  CandidateResult Ok;
  Ok.Verified = true;
  return Ok;
}

} // namespace

namespace replay {
json optionalJson(const std::optional<int64_t> &V) {
  return V ? json(*V) : json(nullptr);
}

json resultJson(const std::string &Kernel, const SelectedLaunch &Launch,
                const CandidateResult &R, double EvalMs, double NoiseThreshold,
                const json &Extra) {
  TimingStats S = computeStatsMs(R.TimesNs);
  json Times = json::array();
  for (uint64_t Ns : R.TimesNs)
    Times.push_back(static_cast<double>(Ns) / 1e6);
  bool Timed = S.Count > 0;
  bool Noisy =
      Timed && S.Median > 0 && (S.CiHigh - S.CiLow) / S.Median > NoiseThreshold;
  json J = {
      {"kernel", Kernel},
      {"launch", Launch.Ordinal},
      {"capture_launch", Launch.Launch},
      {"verified", R.Verified},
      {"failure", R.Failure == FailureKind::None
                      ? json(nullptr)
                      : json(failureKindName(R.Failure))},
      {"message", R.Message},
      {"median_ms", Timed ? json(S.Median) : json(nullptr)},
      {"ci95_ms", Timed ? json::array({S.CiLow, S.CiHigh}) : json(nullptr)},
      {"min_ms", Timed ? json(S.Min) : json(nullptr)},
      {"noisy", Noisy},
      {"times_ms", Times},
      {"repetitions", S.Count},
      {"timer", R.Timer.empty() ? json(nullptr) : json(R.Timer)},
      {"event_median_ms", R.EventTimesNs.empty()
                              ? json(nullptr)
                              : json(computeStatsMs(R.EventTimesNs).Median)},
      {"busy_ms", R.BusyMs},
      {"nondeterminism",
       R.Nondeterminism.empty() ? json(nullptr) : json(R.Nondeterminism)},
      {"registers", optionalJson(R.Registers)},
      {"spills", optionalJson(R.Spills)},
      {"shared_bytes", optionalJson(R.SharedBytes)},
      {"compile_ms", R.CompileMs},
      {"eval_ms", EvalMs},
      {"pipeline", R.Pipeline.empty() ? json(nullptr) : json(R.Pipeline)},
      {"codegen_opt", R.Pipeline.empty() ? json(nullptr) : json(R.CodegenOpt)},
      {"poisoned", R.Poisoned},
      {"sandbox", R.Sandbox.empty() ? json(nullptr) : json(R.Sandbox)}};
  for (const auto &[K, V] : Extra.items())
    J[K] = V;
  return J;
}

/// A duration given in ms, in the unit that suits it: "73 ns", "1.25 ms".
std::string duration(const json &Ms) {
  if (Ms.is_null())
    return "-";
  double V = Ms.get<double>();
  char Buf[32];
  if (V < 1e-3)
    std::snprintf(Buf, sizeof(Buf), "%.0f ns", V * 1e6);
  else if (V < 1)
    std::snprintf(Buf, sizeof(Buf), "%.3g us", V * 1e3);
  else if (V < 1000)
    std::snprintf(Buf, sizeof(Buf), "%.3g ms", V);
  else
    std::snprintf(Buf, sizeof(Buf), "%.3g s", V / 1e3);
  return Buf;
}

void printTableHeader(const std::string &Capture, const std::string &Backend,
                      const json &First) {
  std::string Sandbox =
      First["sandbox"].is_null() ? "-" : First["sandbox"].get<std::string>();
  std::printf("replay of %s (%s backend, sandbox: %s)\n", Capture.c_str(),
              Backend.c_str(), Sandbox.c_str());
  std::printf("%-16s %-6s %-13s %-9s %-21s %-9s %-5s %-10s %-8s %s\n", "kernel",
              "launch", "result", "median", "95% ci", "min", "reps", "compile",
              "poisoned", "pipeline");
}

void printTableRow(const json &J) {
  std::string Result =
      J["verified"].get<bool>() ? "verified" : J["failure"].get<std::string>();
  std::string Ci = J["ci95_ms"].is_null()
                       ? "-"
                       : "[" + duration(J["ci95_ms"][0]) + ", " +
                             duration(J["ci95_ms"][1]) + "]";
  std::string Pipeline =
      J["pipeline"].is_null() ? "-" : J["pipeline"].get<std::string>();
  std::string Compile = duration(J["compile_ms"]);
  if (J["noisy"].get<bool>())
    Pipeline += "  (noisy: the 95% CI is wider than the noise threshold)";
  std::printf("%-16s %-6llu %-13s %-9s %-21s %-9s %-5zu %-10s %-8s %s\n",
              J["kernel"].get<std::string>().c_str(),
              J["launch"].get<unsigned long long>(), Result.c_str(),
              duration(J["median_ms"]).c_str(), Ci.c_str(),
              duration(J["min_ms"]).c_str(), J["repetitions"].get<size_t>(),
              Compile.c_str(), J["poisoned"].get<bool>() ? "yes" : "no",
              Pipeline.c_str());
  std::string Message = J["message"];
  if (!Message.empty())
    std::printf("  %s\n", Message.c_str());
  if (J.contains("nondeterminism") && J["nondeterminism"].is_string() &&
      J["verified"].get<bool>())
    std::printf("  not deterministic (within the tolerance): %s\n",
                J["nondeterminism"].get<std::string>().c_str());
}

void Printer::print(const std::string &Kernel, const SelectedLaunch &Launch,
                    const CandidateResult &R, double EvalMs,
                    const json &Extra) {
  json J = resultJson(Kernel, Launch, R, EvalMs, NoiseThreshold, Extra);
  if (Json) {
    std::printf("%s\n", J.dump().c_str());
  } else {
    if (!HeaderDone)
      printTableHeader(Capture, Backend, J);
    HeaderDone = true;
    printTableRow(J);
  }
  std::fflush(stdout);
}

} // namespace replay

namespace {
using namespace replay;

/// Replays one launch in the server: the candidate's result, or why the
/// replay cannot go on.
Expected<CandidateResult> replayLaunch(ServerClient &Client,
                                       const ReplayPlan &P,
                                       const std::string &Kernel,
                                       uint32_t Launch,
                                       std::vector<uint8_t> *Bitcode) {
  Candidate C = P.Base;
  C.Kernel = Kernel;
  C.Launches = {Launch};
  if (Bitcode) {
    C.Code = CodeKind::Bitcode;
    C.Image = *Bitcode;
  }
  return Client.evaluate(C);
}

/// The results of every selected launch under one pipeline. Source
/// candidates compile once per kernel (Sources caches them); a compile error
/// is every launch's result.
using SourceCache =
    std::map<uint32_t, std::pair<CandidateResult, std::vector<uint8_t>>>;

Expected<bool> replayPipeline(ServerClient &Client, const CaptureReader &R,
                              const ReplayPlan &P, const LaunchSelection &Sel,
                              SourceCache &Sources, Printer &Out) {
  bool AllVerified = true;
  for (const SelectedLaunch &One : Sel) {
    uint32_t Launch = One.Launch, K = One.Kernel;
    auto Start = std::chrono::steady_clock::now();
    const std::string &Kernel = R.kernels()[K].Name;
    std::vector<uint8_t> *Bitcode = nullptr;
    CandidateResult Res;
    if (P.Source) {
      if (!Sources.count(K)) {
        auto &Slot = Sources[K];
        R3_TRY(moveInto(compileSource(P, Kernel, Slot.second), Slot.first));
      }
      Res = Sources[K].first;
      Bitcode = &Sources[K].second;
    }
    if (!P.Source || Res.Verified)
      R3_TRY(moveInto(replayLaunch(Client, P, Kernel, Launch, Bitcode), Res));
    if (Res.Sandbox.empty())
      Res.Sandbox = Client.opened().Sandbox;
    Out.print(Kernel, One, Res, msSince(Start));
    AllVerified &= Res.Verified;
  }
  return AllVerified;
}

/// Each pipeline is one candidate per launch, all in one server (which a
/// crash or a timeout restarts), as a campaign evaluates them.
Expected<bool> replayAll(const CaptureReader &R, const ReplayPlan &P,
                         const LaunchSelection &Sel) {
  ServerOptions O;
  O.CapturePath = P.Capture;
  O.AddressSpaceBytes =
      P.MaxMemory ? *P.MaxMemory : defaultAddressSpaceLimit(R);
  auto Client = ServerClient::create(std::move(O));
  if (!Client)
    return Client.takeError();
  Printer Out{P.Json, P.Capture, "host", P.NoiseThreshold};
  SourceCache Sources;
  std::vector<std::string> Pipelines = P.Pipelines;
  if (Pipelines.empty())
    Pipelines.push_back(P.Base.Pipeline);
  bool AllVerified = true;
  ReplayPlan Each = P;
  for (const std::string &Pipeline : Pipelines) {
    Each.Base.Pipeline = Pipeline;
    bool Verified = false;
    R3_TRY(moveInto(replayPipeline(**Client, R, Each, Sel, Sources, Out),
                    Verified));
    AllVerified &= Verified;
  }
  return AllVerified;
}

int runReplay(const ParsedArgs &A) {
  auto P = parsePlan(A);
  if (!P)
    return usageError(P.error().message(), "replay");
  auto R = CaptureReader::open(P->Capture);
  if (!R)
    return fail(R.takeError());
  bool Cuda = (*R)->header().Source == Backend::Cuda;
  if (!Cuda)
    if (Error E = checkHostOptions(A, P->Capture))
      return usageError(E.message(), "replay");
  auto Sel = selectLaunches(**R, *P);
  if (!Sel)
    return fail(Sel.takeError());
  if (P->Source && !P->Kernel && (*R)->kernels().size() > 1)
    return usageError("option '--source' needs --kernel: the capture has " +
                          std::to_string((*R)->kernels().size()) +
                          " kernels (" + join(kernelNames(**R), ", ") + ")",
                      "replay");
  if (Cuda) {
#ifdef R3_HAVE_CUDA
    if (Error E = checkCudaReplayOptions(A, **R, *P))
      return usageError(E.message(), "replay");
    auto Verified = replayCuda(A, **R, *P, *Sel);
    if (!Verified)
      return fail(Verified.takeError());
    return *Verified ? ExitSuccess : ExitFailure;
#else
    return fail(makeError(P->Capture, ": a CUDA capture; this r3 was built "
                                      "without the CUDA backend"));
#endif
  }
  auto Verified = replayAll(**R, *P, *Sel);
  if (!Verified)
    return fail(Verified.takeError());
  return *Verified ? ExitSuccess : ExitFailure;
}
} // namespace

CommandSpec replayCommand() {
  CommandSpec C{
      "replay",
      "replay recorded launches (or a variant of the kernel), verify and time "
      "them",
      "CAPTURE.h5 [options]",
      "Without --source the recorded module is replayed: the fidelity "
      "baseline. Each launch runs in a sandboxed replay server; a candidate "
      "that crashes or runs past its timeout is reported as such. --pipeline "
      "may be repeated: each pipeline is one more candidate, evaluated in the "
      "same server. --kernel takes the mangled or demangled name, or the "
      "name alone (jacobi2d, react for ns::react) when one kernel has it. "
      "--launch N is the kernel's launch N, counted from 0 in the order the "
      "application launched it: the number r3 record --launch takes and "
      "r3 inspect shows; --launch @N is the capture's launch N (in the "
      "order recorded, whatever its kernel). Exit status 0 when every "
      "replayed launch verified, 1 otherwise.",
      {{"--kernel", "", Arity::Value, "NAME", "the kernel to replay"},
       {"--launch", "", Arity::Value, "N|@N|all",
        "which recorded launch: the kernel's launch N, or the capture's @N "
        "(default all)"},
       {"--source", "", Arity::Value, "FILE",
        "compile the kernel from this source"},
       {"--block", "", Arity::Value, "X[,Y,Z]",
        "launch with another block size"},
       {"--grid-rule", "", Arity::Value, "RULE",
        "how the grid follows --block: keep-threads (default), keep-grid, "
        "or 'x=ceil(arg2 / block_x);y=...'"},
       {"--grid-x", "", Arity::Value, "N",
        "launch N blocks in x: for a kernel that strides over its grid "
        "(CUDA)"},
       {"--grid-per-sm", "", Arity::Value, "N",
        "launch N blocks in x per multiprocessor of the GPU: for a kernel "
        "that strides over its grid (CUDA)"},
       {"--dynamic-shared", "", Arity::Value, "BYTES",
        "launch with this much dynamic shared memory (CUDA)"},
       {"--cache-preference", "", Arity::Value, "none|shared|l1|equal",
        "the kernel's shared memory / L1 preference (CUDA)"},
       {"--specialize", "", Arity::Value, "args|dims|none",
        "fold recorded values in as constants (CUDA)"},
       {"--toolchain", "", Arity::Value, "llvm|nvrtc|nvcc",
        "which compiler builds --source (CUDA; default llvm)"},
       {"--cache-dir", "", Arity::Value, "DIR",
        "the compile cache (CUDA; default $R3_CACHE_DIR or ~/.cache/r3)"},
       {"--repetitions", "", Arity::Value, "N",
        "the most timed repetitions (default 20)"},
       {"--min-repetitions", "", Arity::Value, "N",
        "the fewest; between the two, stop once the median is precise "
        "(default 6)"},
       {"--target-ci", "", Arity::Value, "PERCENT",
        "stop once the median's 95% CI is this narrow (default 1)"},
       {"--warmup", "", Arity::Value, "N", "untimed warm-up runs (default 2)"},
       {"--check-determinism", "", Arity::Value, "RUNS",
        "first run the kernel RUNS times and compare its outputs with the "
        "recording, saying how far they differ (CUDA)"},
       {"--flush-l2", "", Arity::Flag, "",
        "flush the L2 cache before each run"},
       {"--timeout", "", Arity::Value, "SECONDS",
        "kill a run that takes longer (default 10)"},
       {"--tolerance", "", Arity::Value, "abs:X|rel:X|ulp:N",
        "how far outputs may differ (default exact)"},
       {"--dtype", "", Arity::Value, "f32|f64",
        "the element type outputs are compared as"},
       {"--poison", "", Arity::Value, "auto|on|off",
        "fill outputs with 0xff before every run (default auto)"},
       {"--noise-threshold", "", Arity::Value, "PERCENT",
        "flag a median whose 95% CI is wider than this (default 5)"},
       {"--max-memory", "", Arity::Value, "SIZE|none",
        "the replay server's address-space limit (default 8G + 4x the "
        "largest launch)"},
       {"--format", "", Arity::Value, "table|json", "output format"}},
      false,
      runReplay};
  return withVariantCompilerOptions(std::move(C));
}

} // namespace r3::cli
