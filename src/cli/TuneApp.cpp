// `r3 tune --app -- APP ARGS`: from an application's command line to a tuned
// application, unattended. The steps, each a function below:
//   1. profile the application (record/Profile.h) and state the ceiling;
//   2. choose the tunable kernels that cover --cover of the kernels' time
//      (app/ProfileModel.h), naming those left out and why;
//   3. record one representative launch of each into one capture (r3 record,
//      run as a child of this r3);
//   4. find each kernel's source and flags (app/KernelSource.h) and, on CUDA,
//      run the determinism check to set the tightest tolerance that covers
//      the kernel's own run-to-run spread;
//   5. write the campaign, every choice explained (app/AppCampaign.h);
//      --dry-run stops here;
//   6. run it (r3 tune, a child), then measure the application end to end
//      with the tuned kernels against its own code (TuneAppMeasure.cpp).
// Everything goes into one folder (-o, default r3-app); a folder that already
// holds a campaign is never overwritten: --resume goes on with it (r3 tune
// to the campaign's end, then the end-to-end runs still missing), which is
// what each segment of `r3 slurm submit --app` runs. A stop signal (USR1,
// TERM) is passed on to the campaign, which checkpoints; any other step
// finishes first, and r3 then exits 75 as r3 tune does.
#include "cli/TuneApp.h"

#include "app/AppCampaign.h"
#include "campaign/Campaign.h"
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "cli/Profile.h"
#include "support/FileUtil.h"
#include "support/Paths.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace r3::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
/// A file opened for a child's output (appended), closed on destruction.
struct OutputFile {
  int Fd = -1;
  ~OutputFile() {
    if (Fd >= 0)
      ::close(Fd);
  }
  Error open(const std::string &Path) {
    Fd = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return Fd < 0 ? errnoError("cannot write '" + Path + "'")
                  : Error::success();
  }
};
} // namespace

namespace {
volatile std::sig_atomic_t StopSignal = 0;
/// The child that checkpoints on a stop (r3 tune), while it runs.
std::atomic<pid_t> Checkpointer{0};

void onAppStop(int Signal) {
  StopSignal = Signal;
  if (pid_t P = Checkpointer.load())
    ::kill(P, SIGUSR1);
}

void installAppStopHandlers() {
  struct sigaction A = {};
  A.sa_handler = onAppStop;
  A.sa_flags = SA_RESTART;
  sigemptyset(&A.sa_mask);
  for (int S : {SIGUSR1, SIGTERM})
    ::sigaction(S, &A, nullptr);
}
} // namespace

int appStopSignal() { return StopSignal; }

int stoppedBefore(const AppPlan &P, const std::string &Step) {
  std::fprintf(stderr,
               "r3: stopped by signal %d before %s; 'r3 tune --app --resume "
               "-o %s -- ...' goes on\n",
               static_cast<int>(StopSignal), Step.c_str(), P.OutDir.c_str());
  return 75;
}

Expected<ExitStatus> runSelf(const std::vector<std::string> &Args,
                             const std::string &Log, const std::string &Stdout,
                             bool Checkpoints) {
  std::vector<std::string> Argv = {"r3"};
  Argv.insert(Argv.end(), Args.begin(), Args.end());
  OutputFile L, O;
  if (!Log.empty())
    R3_TRY(L.open(Log));
  if (!Stdout.empty()) {
    std::error_code Ec;
    fs::remove(Stdout, Ec);
    R3_TRY(O.open(Stdout));
  }
  auto Pid =
      spawnProgram(selfExecutable(), Argv, {}, O.Fd >= 0 ? O.Fd : L.Fd, L.Fd);
  if (!Pid)
    return Pid.takeError();
  if (Checkpoints) {
    Checkpointer = *Pid;
    if (StopSignal) // it came before the child could hear it
      ::kill(*Pid, SIGUSR1);
  }
  auto S = waitForProgram(*Pid);
  Checkpointer = 0;
  return S;
}

Expected<AppPlan> parseAppPlan(const ParsedArgs &A) {
  if (!A.Positional.empty())
    return makeError("--app takes the application after '--', not a campaign "
                     "file ('",
                     A.Positional.front(), "')");
  AppPlan P;
  R3_TRY(moveInto(profileRequest(A), P.Run));
  if (auto V = A.value("--cover")) {
    auto C = parseDouble(*V);
    if (!C || !(*C > 0) || *C > 1)
      return makeError("option '--cover' expects a share of the kernels' "
                       "time above 0 and at most 1, such as 0.9, got ",
                       quoteShort(*V));
    P.Cover = *C;
  }
  if (auto V = A.value("--compile-commands")) {
    if (!fs::is_regular_file(*V))
      return makeError("--compile-commands '", *V, "' is not a file");
    P.Database = fs::absolute(*V).lexically_normal().string();
  }
  P.SourceDir = A.value("--source-dir").value_or(".");
  if (!fs::is_directory(P.SourceDir))
    return makeError("--source-dir '", P.SourceDir, "' is not a folder");
  P.OutDir = A.value("--output").value_or("r3-app");
  P.Resume = A.has("--resume");
  if (fs::exists(fs::path(P.OutDir) / "campaign.toml") && !P.Resume)
    return makeError("'", P.OutDir,
                     "' already holds a campaign.toml: --resume goes on with "
                     "it, or choose another folder with -o");
  P.DryRun = A.has("--dry-run");
  if (P.DryRun && P.Resume)
    return Error::make("--dry-run writes a new campaign; --resume goes on "
                       "with one: give one of them");
  P.Measure = !A.has("--no-measure");
  if (auto V = A.value("--measure-runs")) {
    auto N = parseInteger(*V, 1, 100);
    if (!N)
      return N.takeError().context("option '--measure-runs'");
    P.MeasureRuns = static_cast<unsigned>(*N);
  }
  if (auto V = A.value("--budget")) {
    auto N = parseInteger(*V, 1, INT64_MAX);
    if (!N)
      return N.takeError().context("option '--budget'");
    P.Budget = static_cast<uint64_t>(*N);
  }
  P.Workers = A.value("--workers").value_or("");
  return P;
}

/// --resume: the campaign OutDir holds, if it was written for this
/// application's command line; empty when there is none yet.
Expected<std::string> resumedCampaign(const AppPlan &P) {
  fs::path Dir = P.OutDir;
  std::string Path = (Dir / "campaign.toml").string();
  if (!pathExists(Path))
    return std::string();
  std::string Text;
  R3_TRY(moveInto(readWholeFile((Dir / "profile.json").string(), "profile"),
                  Text));
  json J = json::parse(Text, nullptr, false);
  if (!J.is_object() || !J["command"].is_array())
    return makeError((Dir / "profile.json").string(),
                     ": not the profile r3 tune --app writes (no command)");
  if (J["command"] != json(P.Run.Argv))
    return makeError("--resume: the campaign in '", P.OutDir,
                     "' was written for '",
                     join(J["command"].get<std::vector<std::string>>(), " "),
                     "', not for '", join(P.Run.Argv, " "),
                     "': give its command line, or another folder with -o");
  return Path;
}

namespace {

/// The error of a child r3 that failed: what it was doing, how it ended and
/// the end of its log.
Error childFailure(const std::string &What, const ExitStatus &S,
                   const std::string &Log) {
  auto Text = readWholeFile(Log, "log");
  std::string Tail = Text ? lastLines(*Text, 8) : "";
  return makeError(What, " failed (", describeExit(S), "); ", Log,
                   Tail.empty() ? "" : " ends with:\n", Tail);
}


/// A regular expression that matches Name alone.
std::string exactPattern(const std::string &Name) {
  std::string Out = "^";
  for (char C : Name) {
    if (!std::isalnum(static_cast<unsigned char>(C)) && C != '_')
      Out += '\\';
    Out += C;
  }
  return Out + "$";
}

/// Step 2: the kernels to tune, or why there are none.
Expected<app::Selection> chooseKernels(const app::ProfileModel &M,
                                       double Cover) {
  app::Selection S = app::selectByCover(M, Cover);
  if (!S.Chosen.empty())
    return S;
  std::string Why;
  for (const app::KernelShare &K : M.Kernels)
    Why += "\n  " + K.Display + ": " + K.Untunable;
  return makeError("no kernel of '", M.Command.front(),
                   "' can be tuned by r3:", Why);
}

/// Step 3: one launch of each chosen kernel into OutDir/app.h5.
Expected<uint64_t> recordKernels(const AppPlan &P, const app::Selection &S) {
  uint64_t Fewest = UINT64_MAX;
  std::vector<std::string> Args = {
      "record", "--backend", P.Run.Source == Backend::Cuda ? "cuda" : "host"};
  for (const app::KernelShare &K : S.Chosen) {
    Fewest = std::min(Fewest, K.Launches);
    Args.insert(Args.end(), {"-k", exactPattern(K.Name)});
  }
  uint64_t Launch = app::representativeLaunch(Fewest);
  std::string Capture = (fs::path(P.OutDir) / "app.h5").string();
  Args.insert(Args.end(),
              {"--launch", std::to_string(Launch), "-o", Capture, "--"});
  Args.insert(Args.end(), P.Run.Argv.begin(), P.Run.Argv.end());
  std::string Log = (fs::path(P.OutDir) / "record.log").string();
  auto S2 = runSelf(Args, Log);
  if (!S2)
    return S2.takeError();
  if (!S2->succeeded())
    return childFailure("recording the chosen kernels", *S2, Log);
  return Launch;
}

/// Step 4, CUDA: the determinism check of the recorded code, and the
/// tolerance it calls for.
Error checkDeterminism(const AppPlan &P, app::AppKernel &K) {
  std::string Log = (fs::path(P.OutDir) / "determinism.log").string();
  std::string Json = (fs::path(P.OutDir) / "determinism.json").string();
  std::string Cmd =
      "r3 replay app.h5 --kernel " + K.Profile.Name + " --check-determinism 5";
  auto S =
      runSelf({"replay", (fs::path(P.OutDir) / "app.h5").string(), "--kernel",
               K.Profile.Name, "--check-determinism", "5", "--format", "json"},
              Log, Json);
  if (!S)
    return S.takeError();
  auto Text = readWholeFile(Json, "determinism check");
  json J = Text ? json::parse(*Text, nullptr, false) : json();
  if (J.is_discarded() || !J.is_object())
    return childFailure("the determinism check of " + K.Profile.Display, *S,
                        Log);
  if (J["nondeterminism"].is_string()) {
    std::string N = J["nondeterminism"].get<std::string>();
    const std::string Mark = "a tolerance that covers it: ";
    size_t At = N.find(Mark);
    if (At == std::string::npos)
      return makeError("the determinism check of ", K.Profile.Display,
                       " proposed no tolerance: ", N);
    K.Verify = split(N.substr(At + Mark.size()), ',');
    for (std::string &L : K.Verify)
      L = trim(L);
    K.VerifyWhy =
        "The recorded code's outputs vary from run to run (" + N.substr(0, At) +
        "):\n# the tightest tolerance that covers that spread (`" + Cmd + "`).";
    return Error::success();
  }
  if (!J.value("verified", false))
    return makeError("the recorded code of ", K.Profile.Display,
                     " does not reproduce its recorded outputs: ",
                     J.value("message", std::string("(no message)")), "; see ",
                     Log);
  K.Verify = {"tolerance = \"exact\""};
  K.VerifyWhy = "The recorded code gave the recorded outputs bit for bit in "
                "5 runs (`" +
                Cmd + "`): exact.";
  return Error::success();
}

/// Step 4: the flags of the kernel's source (K.Source), from Db, the
/// build's compilation database, when there is one.
Error sourceFlags(const AppPlan &P, const std::optional<app::SourceTree> &Db,
                  app::AppKernel &K) {
  if (!K.Source)
    return Error::success();
  if (!Db) {
    K.CFlags = {"-I" + fs::path(K.Source->File).parent_path().string()};
    return Error::success();
  }
  if (std::find(Db->Files.begin(), Db->Files.end(), K.Source->File) ==
      Db->Files.end())
    return makeError(P.Database, " has no entry for ", K.Source->File,
                     ", where kernel ", K.Profile.Display, " is defined (line ",
                     K.Source->Line, "): is it the build of this application?");
  K.Database = P.Database;
  return Error::success();
}

Expected<std::vector<app::AppKernel>>
studyKernels(const AppPlan &P, const app::Selection &S, uint64_t Launch) {
  // The tree is scanned, and the database read, once for all kernels.
  auto Tree = app::treeUnder(P.SourceDir);
  if (!Tree)
    return Tree.takeError();
  std::optional<app::SourceTree> Db;
  if (!P.Database.empty())
    R3_TRY(moveInto(app::treeOfDatabase(P.Database), Db));
  std::vector<std::string> Names;
  for (const app::KernelShare &Share : S.Chosen)
    Names.push_back(app::baseName(Share.Display));
  std::vector<std::optional<app::Definition>> Sources;
  R3_TRY(moveInto(
      app::findDefinitions(*Tree, Names, P.Run.Source == Backend::Cuda),
      Sources));
  std::vector<app::AppKernel> Out;
  for (size_t I = 0; I < S.Chosen.size(); ++I) {
    app::AppKernel K;
    K.Profile = S.Chosen[I];
    K.Launch = Launch;
    K.Source = Sources[I];
    R3_TRY(sourceFlags(P, Db, K));
    if (P.Run.Source == Backend::Cuda) {
      R3_TRY(checkDeterminism(P, K));
    } else {
      K.Verify = {"tolerance = \"exact\""};
      K.VerifyWhy = "Host kernels replay deterministically: outputs must "
                    "match the recording bit\n# for bit.";
    }
    std::fprintf(
        stderr, "r3: %s: %s\n", K.Profile.Display.c_str(),
        K.Source
            ? (K.Source->File + ":" + std::to_string(K.Source->Line)).c_str()
            : "no source found: its recorded code is tuned");
    Out.push_back(std::move(K));
  }
  return Out;
}

/// Step 5: the campaign and the profile beside it; the campaign is checked
/// by the parser r3 tune uses.
Expected<std::string> writeCampaign(const AppPlan &P,
                                    const app::AppCampaignSpec &Spec) {
  fs::path Dir = P.OutDir;
  R3_TRY(writeFileAtomically((Dir / "profile.json").string(),
                             app::profileJson(Spec.Profile).dump(2) + "\n"));
  std::string Path = (Dir / "campaign.toml").string();
  R3_TRY(writeFileAtomically(Path, app::campaignText(Spec)));
  if (auto C = loadCampaign(Path); !C)
    return makeError("the written campaign does not parse (a bug in r3; "
                     "the file is kept): ",
                     C.error().message());
  return Path;
}

/// Steps 1 to 5: the campaign, written into P.OutDir; its path.
Expected<std::string> prepareCampaign(const AppPlan &P) {
  auto Prof = profileApplication(P.Run);
  if (!Prof)
    return Prof.takeError();
  app::ProfileModel M = app::profileModel(*Prof, P.Run, 1.5);
  printProfile(M);
  auto S = chooseKernels(M, P.Cover);
  if (!S)
    return S.takeError();
  std::error_code Ec;
  fs::create_directories(P.OutDir, Ec);
  if (Ec)
    return makeError("cannot create '", P.OutDir, "': ", Ec.message());
  if (appStopSignal())
    return std::string();
  std::fprintf(stderr,
               "r3: tuning %zu kernel%s covering %.1f%% of the "
               "kernels' time; recording them\n",
               S->Chosen.size(), S->Chosen.size() == 1 ? "" : "s",
               S->Covered * 100);
  auto Launch = recordKernels(P, *S);
  if (!Launch)
    return Launch.takeError();
  if (appStopSignal())
    return std::string();
  app::AppCampaignSpec Spec;
  Spec.Profile = M;
  Spec.Cover = P.Cover;
  Spec.Chosen = *S;
  Spec.Evaluations = P.Budget.value_or(60 * S->Chosen.size());
  R3_TRY(moveInto(studyKernels(P, *S, *Launch), Spec.Kernels));
  return writeCampaign(P, Spec);
}


int tuneApp(const AppPlan &P) {
  installAppStopHandlers();
  std::string Path;
  if (P.Resume) {
    if (Error E = moveInto(resumedCampaign(P), Path))
      return fail(E);
    if (!Path.empty())
      std::fprintf(stderr, "r3: going on with %s\n", Path.c_str());
  }
  if (Path.empty()) {
    if (Error E = moveInto(prepareCampaign(P), Path))
      return fail(E);
    if (Path.empty())
      return stoppedBefore(P, "the campaign was written");
    std::fprintf(stderr, "r3: wrote %s\n", Path.c_str());
  }
  if (P.DryRun)
    return ExitSuccess;
  if (appStopSignal())
    return stoppedBefore(P, "tuning");
  std::vector<std::string> Tune = {"tune", Path};
  if (!P.Workers.empty())
    Tune.insert(Tune.end(), {"--workers", P.Workers});
  auto T = runSelf(Tune, "", "", true);
  if (!T)
    return fail(T.error());
  if (!T->succeeded())
    return T->How == ExitStatus::Kind::Exited ? T->Code : ExitFailure;
  if (!P.Measure)
    return ExitSuccess;
  if (appStopSignal())
    return stoppedBefore(P, "the end-to-end measurement");
  return measureApp(P);
}
} // namespace

int runTuneApp(const ParsedArgs &A) {
  auto P = parseAppPlan(A);
  if (!P)
    return usageError(P.error().message(), "tune");
  return tuneApp(*P);
}

} // namespace r3::cli
