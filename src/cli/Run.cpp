// `r3 run --use`: runs an unmodified application with the kernels a campaign
// tuned in place of its own, no rebuild.
//
// The kernels come from a campaign's history (each kernel's best verified
// candidate, exported as `r3 export` writes it into a temporary folder) or
// from folders `r3 export` wrote. Each becomes an entry of the plan
// (use/UsePlan.h): the tuned code (a cubin; on the host, LLVM bitcode
// compiled here from the exported source), the module the campaign recorded
// (so that a changed application is refused, not patched), the launch
// settings and the tolerance. A kernel is left alone when its campaign has
// no verified best, when the lower bound of its speedup is below
// --min-speedup, or when its best was specialized on the recorded launch's
// values. The application runs under the CUDA injection library (CUDA
// kernels) and with the host runtime's use-library named (host kernels);
// every process of it writes a report at exit, and the summary printed (on
// stderr, so that the application's output stays its own) adds them up.
#include "capture/KernelLookup.h"
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "cli/Export.h"
#include "cli/Installed.h"
#include "cli/Report.h"
#include "compile/host/HostJit.h"
#include "record/Launcher.h"
#include "replay/Verify.h"
#include "report/EndToEnd.h"
#include "support/FileUtil.h"
#include "support/StringUtil.h"
#include "use/UsePlan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace r3::cli {

namespace {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct RunOptions {
  std::vector<std::string> Uses, Kernels;
  double MinSpeedup = report::DefaultMinSpeedup;
  uint64_t VerifyLaunches = 0;
  std::string JsonPath;
  bool DryRun = false, TimeKernels = false, KeepOriginal = false;
  std::string Program;
  std::vector<std::string> Argv;
};

/// One kernel a --use source offers, and what r3 run decided about it.
struct Offer {
  std::string Kernel, Backend = "host", From;
  std::optional<double> Speedup, Lo, Hi;
  std::optional<use::KernelPlan> Plan; ///< empty: left alone
  std::string LeftAlone;               ///< why
  // What the application's processes did with it.
  bool Seen = false;
  use::Outcome What = use::Outcome::Replaced;
  uint64_t Launches = 0, Verified = 0, Processes = 0, Timed = 0, KernelNs = 0;
  Dim3 Grid{}, Block{}; ///< the last tuned launch's (CUDA)
  std::string Message;
};

Expected<RunOptions> parseOptions(const ParsedArgs &A) {
  RunOptions O;
  if (!A.Positional.empty())
    return makeError("unexpected argument '", A.Positional.front(),
                     "' (the application goes after '--')");
  if (A.Trailing.empty())
    return Error::make("no application to run: give it after '--', as in "
                       "r3 run --use history.db -- ./app ARGS");
  if (auto It = A.Values.find("--use"); It != A.Values.end())
    O.Uses = It->second;
  if (O.Uses.empty())
    return Error::make("--use DB|DIR is required: the campaign history, or a "
                       "folder r3 export wrote");
  if (auto It = A.Values.find("--kernel"); It != A.Values.end())
    O.Kernels = It->second;
  if (auto V = A.value("--min-speedup")) {
    auto S = parseDouble(*V);
    if (!S)
      return S.takeError().context("--min-speedup");
    if (!(*S > 0))
      return makeError("--min-speedup needs a positive number, got '", *V, "'");
    O.MinSpeedup = *S;
  }
  if (auto V = A.value("--verify-launches")) {
    auto N = parseUnsigned(*V);
    if (!N)
      return makeError("--verify-launches needs a count, got '", *V, "'");
    O.VerifyLaunches = *N;
  }
  O.JsonPath = A.value("--json").value_or("");
  O.DryRun = A.has("--dry-run");
  O.TimeKernels = A.has("--time-kernels");
  O.KeepOriginal = A.has("--keep-original");
  if (O.KeepOriginal && O.VerifyLaunches > 0)
    return Error::make("--keep-original runs the application's own kernels: "
                       "there is nothing to verify (drop --verify-launches)");
  R3_TRY(moveInto(resolveProgram(A.Trailing.front()), O.Program));
  O.Argv = A.Trailing;
  return O;
}

// --- the plan ---

std::string text(const json &S, const char *Key) {
  return S.contains(Key) && S[Key].is_string() ? S[Key].get<std::string>() : "";
}

std::optional<double> number(const json &S, const char *Key) {
  if (S.contains(Key) && S[Key].is_number())
    return S[Key].get<double>();
  return std::nullopt;
}

std::string speedupText(const Offer &O) {
  if (!O.Speedup)
    return "no speedup known";
  std::string T = formatSpeedup(O.Speedup);
  if (O.Lo && O.Hi) {
    char Buf[64];
    std::snprintf(Buf, sizeof Buf, " [%.3g, %.3g]", *O.Lo, *O.Hi);
    T += Buf;
  }
  return T;
}

Error toleranceOf(const json &S, use::KernelPlan &K) {
  VerifySettings V;
  const json &Verify = S.contains("verify") ? S["verify"] : json::object();
  std::string Tolerance = text(Verify, "tolerance");
  R3_TRY(parseTolerance(Tolerance.empty() ? "exact" : Tolerance, V));
  std::string Type = text(Verify, "dtype");
  for (ElementType T : {ElementType::Bytes, ElementType::F32, ElementType::F64})
    if (Type == elementTypeName(T))
      V.Type = T;
  K.Tolerance = static_cast<int>(V.Tolerance);
  K.ToleranceValue = V.Value;
  K.ElementType = static_cast<int>(V.Type);
  return Error::success();
}

/// The host kernel's tuned code: its exported source compiled to bitcode
/// with the campaign's flags (as the campaign compiled it), written to
/// Artifact (in r3 run's own folder, never the export's).
Error hostCode(const json &S, const std::string &Dir,
               const std::string &Artifact, use::KernelPlan &K) {
  if (S.value("recorded", false))
    return Error::success(); // the application's own bitcode
  std::string Source = text(S, "source");
  if (Source.empty())
    return Error::make("the export names no source file");
  std::vector<std::string> Flags;
  if (S.contains("flags") && S["flags"].is_array())
    for (const json &F : S["flags"])
      Flags.push_back(F.get<std::string>());
  std::vector<uint8_t> Bitcode;
  R3_TRY(moveInto(
      compileHostSource((fs::path(Dir) / Source).string(), K.Name, Flags),
      Bitcode));
  K.Artifact = Artifact;
  return writeFileAtomically(K.Artifact,
                             std::string(Bitcode.begin(), Bitcode.end()));
}

Error cudaCode(const json &S, const std::string &Dir, use::KernelPlan &K) {
  if (S.contains("files") && S["files"].is_array())
    for (const json &F : S["files"])
      if (F.is_string() && F.get<std::string>().ends_with(".cubin"))
        K.Artifact = (fs::path(Dir) / F.get<std::string>()).string();
  if (K.Artifact.empty())
    return Error::make("the export holds no cubin");
  const json &Run = S.contains("settings") && S["settings"].is_object()
                        ? S["settings"]
                        : json::object();
  if (Run.contains("block") && Run["block"].is_array()) {
    const json &B = Run["block"];
    for (size_t I = 0; I < 3; ++I)
      K.Block[I] = I < B.size() ? B[I].get<uint32_t>() : 1;
  }
  K.GridRule = text(S, "grid_rule");
  if (auto G = number(Run, "grid_x"); G && *G > 0)
    K.GridX = static_cast<uint32_t>(*G);
  if (auto G = number(Run, "grid_per_sm"); G && *G > 0)
    K.GridPerSm = static_cast<uint32_t>(*G);
  if (auto D = number(Run, "dynamic_shared"); D && *D > 0)
    K.DynamicShared = static_cast<int64_t>(*D);
  if (std::string C = text(Run, "cache_preference"); C != "none")
    K.CachePreference = C;
  return Error::success();
}

/// Decides about one exported kernel (its settings.json, in Dir).
/// Decides about one exported kernel (its settings S, in Dir); a host
/// kernel's compiled code goes to Artifact.
Offer planOffer(const json &S, const std::string &Dir, const std::string &From,
                const std::string &Artifact, const RunOptions &O) {
  Offer Of;
  Of.Kernel = text(S, "kernel");
  Of.Backend = text(S, "backend");
  Of.From = From;
  Of.Speedup = number(S, "speedup");
  if (S.contains("speedup_ci") && S["speedup_ci"].is_array() &&
      S["speedup_ci"].size() == 2) {
    Of.Lo = S["speedup_ci"][0].get<double>();
    Of.Hi = S["speedup_ci"][1].get<double>();
  }
  auto leave = [&](const std::string &Why) {
    Of.LeftAlone = Why;
    return Of;
  };
  if (Of.Backend != "host" && Of.Backend != "cuda")
    return leave("the export names no backend (export it again with this r3)");
  std::string Module = text(S, "module_sha256");
  if (Module.empty())
    return leave("the export does not identify the recorded module (is the "
                 "capture " +
                 text(S, "capture") + " still there?)");
  if (!Of.Speedup)
    return leave("its campaign has no baseline to compare with");
  double Bound = Of.Lo.value_or(*Of.Speedup);
  if (Bound < O.MinSpeedup) {
    char Buf[160];
    std::snprintf(Buf, sizeof Buf,
                  "its speedup's lower bound %.3f is below --min-speedup %.3g",
                  Bound, O.MinSpeedup);
    return leave(Buf);
  }
  const json &Run = S.contains("settings") && S["settings"].is_object()
                        ? S["settings"]
                        : json::object();
  if (std::string Sp = text(Run, "specialize"); !Sp.empty() && Sp != "none")
    return leave("its best is specialized on the recorded launch's values (" +
                 Sp + "), which other launches need not share");
  use::KernelPlan K;
  K.Name =
      text(S, "mangled_name").empty() ? Of.Kernel : text(S, "mangled_name");
  K.ModuleSha256 = Module;
  K.Pipeline = text(S, "pipeline");
  if (auto C = number(S, "codegen_opt"))
    K.CodegenOpt = static_cast<int>(*C);
  K.Speedup = *Of.Speedup;
  K.SpeedupLo = Of.Lo.value_or(0);
  K.SpeedupHi = Of.Hi.value_or(0);
  Error E = toleranceOf(S, K);
  if (!E)
    E = Of.Backend == "cuda" ? cudaCode(S, Dir, K)
                             : hostCode(S, Dir, Artifact, K);
  if (E)
    return leave("its tuned code is not usable: " + E.message());
  Of.Plan = std::move(K);
  return Of;
}

Expected<json> readSettings(const fs::path &Dir) {
  std::string Path = (Dir / "settings.json").string(), Text;
  R3_TRY(moveInto(readWholeFile(Path, "export's settings"), Text));
  json J = json::parse(Text, nullptr, false);
  if (!J.is_object() || !J.contains("kernel"))
    return makeError(Path, ": not the settings.json of r3 export");
  return J;
}

/// The kernels the --use sources offer, decided one by one.
struct Gathering {
  const RunOptions &O;
  std::string Work; ///< r3 run's own folder: exports, compiled code
  std::vector<Offer> Offers;
  std::vector<std::string> Names; ///< every kernel seen, wanted or not

  /// Whether the user may want Kernel (no --kernel: every one); notes its
  /// name. Any --kernel that would name it alone will do here:
  /// resolveKernelNames decides among all the kernels seen.
  bool wanted(const std::string &Kernel) {
    Names.push_back(Kernel);
    std::vector<KernelName> One = kernelNamesOf({Kernel});
    return O.Kernels.empty() ||
           std::any_of(O.Kernels.begin(), O.Kernels.end(),
                       [&](const std::string &Given) {
                         return bool(lookupKernel(One, Given, "", ""));
                       });
  }

  std::string nextArtifact() const {
    return (fs::path(Work) / (std::to_string(Offers.size()) + ".bc")).string();
  }

  void leaveAlone(const std::string &Kernel, const std::string &From,
                  const std::string &Why) {
    Offer Of;
    Of.Kernel = Kernel;
    Of.From = From;
    Of.LeftAlone = Why;
    Offers.push_back(std::move(Of));
  }

  /// The kernels of an export folder: the folder itself, or its subfolders.
  Error fromFolder(const std::string &Use) {
    std::vector<fs::path> Dirs;
    if (fs::exists(fs::path(Use) / "settings.json"))
      Dirs.push_back(Use);
    else
      for (const auto &E : fs::directory_iterator(Use))
        if (E.is_directory() && fs::exists(E.path() / "settings.json"))
          Dirs.push_back(E.path());
    if (Dirs.empty())
      return makeError(Use, ": neither a folder r3 export wrote (no "
                            "settings.json) nor a folder of such folders");
    std::sort(Dirs.begin(), Dirs.end());
    for (const fs::path &D : Dirs) {
      json S;
      R3_TRY(moveInto(readSettings(D), S));
      if (wanted(text(S, "kernel")))
        Offers.push_back(
            planOffer(S, D.string(), D.string(), nextArtifact(), O));
    }
    return Error::success();
  }

  /// The kernels of a campaign history: each best, exported under Work.
  Error fromHistory(const std::string &Use) {
    std::unique_ptr<History> H;
    R3_TRY(moveInto(History::open(Use, HistoryMode::ReadOnly), H));
    std::vector<EvaluatedCandidate> Evaluations;
    std::vector<KernelSummary> Kernels;
    R3_TRY(moveInto(H->evaluations(), Evaluations));
    R3_TRY(moveInto(summarizeKernels(*H, Evaluations), Kernels));
    for (const KernelSummary &K : Kernels) {
      const std::string &Name = K.Kernel.Name;
      if (!wanted(Name))
        continue;
      if (!K.Best) {
        leaveAlone(Name, Use, "its campaign has no verified candidate yet");
        continue;
      }
      std::string Dir =
          (fs::path(Work) / "export" / std::to_string(Offers.size())).string();
      auto S = exportBest(*H, Name, Dir);
      if (!S)
        leaveAlone(Name, Use,
                   "its best could not be exported: " + S.error().message());
      else
        Offers.push_back(planOffer(*S, Dir, Use, nextArtifact(), O));
    }
    return Error::success();
  }

  /// Each --kernel names one of the kernels seen (the rules of
  /// KernelLookup.h); the offers of the others are dropped.
  Error resolveKernelNames() {
    if (O.Kernels.empty())
      return Error::success();
    std::vector<KernelName> All = kernelNamesOf(Names);
    std::vector<std::string> Chosen;
    for (const std::string &Given : O.Kernels) {
      auto I =
          lookupKernel(All, Given, join(O.Uses, ", "),
                       O.Uses.size() == 1 ? "the campaign" : "the campaigns");
      if (!I)
        return makeError("option '--kernel': ", I.error().message());
      Chosen.push_back(All[*I].Mangled);
    }
    std::erase_if(Offers, [&](const Offer &Of) {
      return std::find(Chosen.begin(), Chosen.end(), Of.Kernel) == Chosen.end();
    });
    return Error::success();
  }
};

// --- running ---

int severity(use::Outcome O) {
  switch (O) {
  case use::Outcome::Replaced:
    return 0;
  case use::Outcome::Failed:
    return 1;
  case use::Outcome::Refused:
    return 2;
  case use::Outcome::VerifyFailed:
    return 3;
  }
  return 0;
}

/// Adds up the processes' reports into the offers.
void collectReports(const std::string &Dir, std::vector<Offer> &Offers) {
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(Dir, EC)) {
    std::string Name = E.path().filename().string();
    if (!Name.starts_with("report.") || Name.ends_with(".partial"))
      continue;
    auto Text = readWholeFile(E.path().string(), "report of a process");
    auto R = Text ? use::decodeReport(*Text, E.path().string())
                  : Expected<use::ProcessReport>(Text.takeError());
    if (!R) {
      printWarning(R.error().message());
      continue;
    }
    for (const use::KernelReport &K : R->Kernels)
      for (Offer &Of : Offers) {
        if (!Of.Plan || Of.Plan->Name != K.Name)
          continue;
        if (!Of.Seen || severity(K.What) > severity(Of.What)) {
          Of.What = K.What;
          Of.Message = K.Message;
        }
        Of.Seen = true;
        Of.Launches += K.Launches;
        Of.Verified += K.Verified;
        Of.Timed += K.Timed;
        Of.KernelNs += K.KernelNs;
        if (K.Grid[0]) {
          Of.Grid = K.Grid;
          Of.Block = K.Block;
        }
        ++Of.Processes;
      }
  }
}

std::string dimText(const Dim3 &D) {
  return std::to_string(D[0]) + "x" + std::to_string(D[1]) + "x" +
         std::to_string(D[2]);
}

/// Kept: the run was --keep-original, so a matched kernel kept its code.
std::string outcomeText(const Offer &Of, bool Kept) {
  if (!Of.Plan)
    return "left alone: " + Of.LeftAlone;
  if (!Of.Seen)
    return "not seen: no process of the application launched it";
  std::string Launches = std::to_string(Of.Launches) +
                         (Of.Launches == 1 ? " launch" : " launches");
  if (Of.Verified)
    Launches += " (" + std::to_string(Of.Verified) + " verified)";
  if (Of.Timed) {
    char Buf[96];
    std::snprintf(Buf, sizeof Buf, ", %.4g ms in the kernel (%.4g ms a launch)",
                  Of.KernelNs / 1e6, Of.KernelNs / 1e6 / Of.Timed);
    Launches += Buf;
  }
  if (Of.Grid[0] && !Kept)
    Launches += ", the last at grid " + dimText(Of.Grid) + ", block " +
                dimText(Of.Block);
  switch (Of.What) {
  case use::Outcome::Replaced:
    return (Kept ? "kept its own code, " : "replaced, ") + Launches;
  case use::Outcome::Refused:
    return "refused: " + Of.Message;
  case use::Outcome::Failed:
    return "not replaced: " + Of.Message;
  case use::Outcome::VerifyFailed:
    return "stopped: " + Of.Message;
  }
  return "";
}

void printSummary(const std::vector<Offer> &Offers, double WallS, bool Kept) {
  std::fprintf(stderr, "r3 run: the application ran %.3f s; %zu kernel%s:\n",
               WallS, Offers.size(), Offers.size() == 1 ? "" : "s");
  for (const Offer &Of : Offers)
    std::fprintf(stderr, "r3 run:   %s (%s, campaign %s): %s\n",
                 Of.Kernel.c_str(), Of.Backend.c_str(), speedupText(Of).c_str(),
                 outcomeText(Of, Kept).c_str());
}

json offerJson(const Offer &Of, bool Kept) {
  json J = {
      {"kernel", Of.Kernel},
      {"backend", Of.Backend},
      {"from", Of.From},
      {"speedup", Of.Speedup ? json(*Of.Speedup) : json(nullptr)},
      {"speedup_ci", Of.Lo ? json::array({*Of.Lo, *Of.Hi}) : json(nullptr)}};
  if (!Of.Plan) {
    J["outcome"] = "left-alone";
    J["message"] = Of.LeftAlone;
  } else if (!Of.Seen) {
    J["outcome"] = "not-seen";
  } else {
    J["outcome"] = use::outcomeName(Of.What);
    J["message"] = Of.Message.empty() ? json(nullptr) : json(Of.Message);
  }
  if (Kept && J["outcome"] == "replaced")
    J["outcome"] = "kept";
  J["launches"] = Of.Launches;
  J["verified"] = Of.Verified;
  J["timed_launches"] = Of.Timed;
  J["kernel_ms"] = Of.Timed ? json(Of.KernelNs / 1e6) : json(nullptr);
  J["processes"] = Of.Processes;
  // The last tuned launch's shape (CUDA): where grid_per_sm or the grid
  // rule set it.
  J["grid"] = Of.Grid[0] ? json(Of.Grid) : json(nullptr);
  J["block"] = Of.Grid[0] ? json(Of.Block) : json(nullptr);
  return J;
}

int exitCodeOf(const ExitStatus &S) {
  return S.How == ExitStatus::Kind::Exited ? S.Code : 128 + S.Code;
}

/// Writes the plan into Work and gives the application's environment for
/// it: none when nothing is planned.
Expected<std::vector<std::pair<std::string, std::string>>>
environmentFor(const use::Plan &P, const std::vector<Offer> &Offers,
               const std::string &Work) {
  std::vector<std::pair<std::string, std::string>> Env;
  if (P.Kernels.empty())
    return Env;
  bool Host = false, Cuda = false;
  for (const Offer &Of : Offers)
    if (Of.Plan)
      (Of.Backend == "cuda" ? Cuda : Host) = true;
  std::string PlanPath = (fs::path(Work) / "plan").string();
  std::string Reports = (fs::path(Work) / "reports").string();
  R3_TRY(writeFileAtomically(PlanPath, use::encodePlan(P)));
  fs::create_directories(Reports);
  Env.emplace_back(use::PlanEnv, PlanPath);
  Env.emplace_back(use::ReportDirEnv, Reports);
  if (Host) {
    std::string Library;
    R3_TRY(moveInto(installedFile(HostUseLibrary), Library));
    Env.emplace_back(use::HostLibraryEnv, Library);
  }
  if (Cuda) {
#ifdef R3_HAVE_CUDA
    std::string Library;
    R3_TRY(moveInto(installedFile(CudaInjectionLibrary), Library));
    Env.emplace_back("CUDA_INJECTION64_PATH", Library);
#else
    return Error::make("the campaign tuned CUDA kernels, but this r3 was "
                       "built without CUDA");
#endif
  }
  return Env;
}

int runApplication(RunOptions &O) {
  bool Disabled = [] {
    const char *D = std::getenv(use::DisableEnv);
    return D && std::string(D) == "1";
  }();
  auto Work = makeTemporaryFolder("r3-run");
  if (!Work)
    return fail(Work.error());
  struct Cleanup {
    std::string Dir;
    ~Cleanup() {
      std::error_code EC;
      fs::remove_all(Dir, EC);
    }
  } Clean{*Work};
  Gathering G{O, *Work, {}, {}};
  if (Disabled) {
    printWarning(std::string(use::DisableEnv) +
                 "=1: the application runs with its own kernels");
  } else {
    for (const std::string &Use : O.Uses) {
      Error E;
      if (fs::is_directory(Use))
        E = G.fromFolder(Use);
      else if (pathExists(Use))
        E = G.fromHistory(Use);
      else
        printWarning(Use + ": no such campaign history or export folder; the "
                           "application runs with its own kernels");
      if (E)
        return fail(E);
    }
    if (Error E = G.resolveKernelNames())
      return usageError(E.message(), "run");
  }
  std::vector<Offer> &Offers = G.Offers;
  use::Plan P;
  P.VerifyLaunches = O.VerifyLaunches;
  P.TimeKernels = O.TimeKernels;
  P.KeepOriginal = O.KeepOriginal;
  for (const Offer &Of : Offers)
    if (Of.Plan)
      P.Kernels.push_back(*Of.Plan);
  auto Env = environmentFor(P, Offers, *Work);
  if (!Env)
    return fail(Env.error());
  if (O.DryRun) {
    json Out = json::array();
    for (const Offer &Of : Offers)
      Out.push_back(offerJson(Of, O.KeepOriginal));
    std::printf("%s\n", Out.dump(2).c_str());
    return ExitSuccess;
  }
  auto Start = std::chrono::steady_clock::now();
  auto Pid = spawnProgram(O.Program, O.Argv, *Env);
  if (!Pid)
    return fail(Pid.error());
  // Like system(): ^C and ^\ reach the application, which decides.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGQUIT, SIG_IGN);
  auto Status = waitForProgram(*Pid);
  if (!Status)
    return fail(Status.error());
  double WallS =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  if (!Env->empty())
    collectReports((fs::path(*Work) / "reports").string(), Offers);
  printSummary(Offers, WallS, O.KeepOriginal);
  bool Problem = false;
  for (const Offer &Of : Offers)
    Problem |= Of.Plan && Of.Seen && Of.What != use::Outcome::Replaced;
  if (!O.JsonPath.empty()) {
    json Out = {{"application", O.Argv},
                {"exit", describeExit(*Status)},
                {"exit_code", exitCodeOf(*Status)},
                {"wall_s", WallS},
                {"min_speedup", O.MinSpeedup},
                {"verify_launches", O.VerifyLaunches},
                {"kernels", json::array()}};
    for (const Offer &Of : Offers)
      Out["kernels"].push_back(offerJson(Of, O.KeepOriginal));
    if (Error E = writeFileAtomically(O.JsonPath, Out.dump(2) + "\n"))
      printWarning(E.message());
  }
  if (!Status->succeeded()) {
    printError("the application ended with " + describeExit(*Status));
    return exitCodeOf(*Status);
  }
  if (Problem) {
    printError("a planned kernel was not replaced (see above)");
    return ExitFailure;
  }
  return ExitSuccess;
}

int runRun(const ParsedArgs &A) {
  auto O = parseOptions(A);
  if (!O)
    return usageError(O.error().message(), "run");
  return runApplication(*O);
}
} // namespace

CommandSpec runCommand() {
  return {
      "run",
      "run an application with the kernels a campaign tuned, no rebuild",
      "--use HISTORY.db|EXPORT_DIR [options] -- APP [ARGS...]",
      "Runs the unmodified application with each kernel's best verified\n"
      "candidate in place of its own code: CUDA kernels through the\n"
      "injection library (the tuned cubin and its launch settings at every\n"
      "launch), host kernels of an application built with r3 host-flags\n"
      "through the host runtime (the tuned code compiled as the campaign\n"
      "compiled it). A kernel is matched by name and by the module the\n"
      "capture recorded: an application rebuilt with a changed kernel is\n"
      "refused, not patched. A kernel is left alone when its campaign has no\n"
      "verified best, when its speedup's lower bound is below --min-speedup,\n"
      "or when its best is specialized on the recorded launch. At exit r3\n"
      "prints (on stderr) what was replaced and how many launches each.\n"
      "Exit status: the application's; 1 when it succeeded but a planned\n"
      "kernel was refused or could not be loaded. R3_RUN_DISABLE=1, or a\n"
      "missing database, runs the application untouched with a warning.",
      {{"--use", "", Arity::Value, "DB|DIR",
        "a campaign history, or a folder r3 export wrote (or a folder of "
        "them); may be repeated"},
       {"--kernel", "-k", Arity::Value, "NAME",
        "replace only this kernel (mangled name, as r3 report shows it); may "
        "be repeated"},
       {"--min-speedup", "", Arity::Value, "X",
        "leave a kernel alone when its speedup's lower bound is below X "
        "(default 1.02)"},
       {"--verify-launches", "", Arity::Value, "N",
        "run the original and the tuned code on the same inputs for the first "
        "N launches of each replaced kernel and stop if their outputs differ "
        "beyond the campaign's tolerance (default 0)"},
       {"--time-kernels", "", Arity::Flag, "",
        "time every launch of the planned kernels (CUPTI activity on the GPU, "
        "the clock on the host) and print their total"},
       {"--keep-original", "", Arity::Flag, "",
        "match, count and time the planned kernels but run the application's "
        "own code: the comparison run of a benchmark"},
       {"--json", "", Arity::Value, "FILE",
        "also write the summary as JSON to FILE"},
       {"--dry-run", "", Arity::Flag, "",
        "print what would be replaced (JSON) and run nothing"}},
      true,
      runRun};
}

} // namespace r3::cli
