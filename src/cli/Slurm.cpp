// `r3 slurm`: a campaign as a chain of Slurm jobs. `submit` writes the batch
// script next to the campaign's database (campaign.slurm, from the template
// share/r3/scheduler/campaign.slurm or the user's own) and submits it with
// sbatch; each segment runs `r3 tune` (`r3 tune --app --resume` for
// `submit --app -- APP ARGS`, whose folder holds the chain's files from
// the start) under srun until the warning signal,
// checkpoints (exit 75) and lets the chain go on: by requeueing itself, as
// the next of a dependency chain, or as the next task of an array run one
// at a time. `status` shows the chain's jobs beside `r3 status`; `cancel`
// ends it cleanly. The jobs submitted for a campaign are listed in
// campaign.slurm.jobs and recorded as events in the history.
#include "cli/Args.h"
#include "cli/Command.h"
#include "cli/Diagnostics.h"
#include "cli/TuneApp.h"
#include "campaign/Campaign.h"
#include "history/History.h"
#include "support/FileUtil.h"
#include "support/Paths.h"
#include "record/Launcher.h"
#include "support/Process.h"
#include "support/StringUtil.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <tuple>
#include <sys/wait.h>

namespace r3::cli {

namespace {
namespace fs = std::filesystem;

/// Where a campaign's chain keeps its files: beside its database.
struct ChainFiles {
  std::string Campaign, Database, Dir, Script, Jobs, Stop, Log;
};

/// The chain files of the campaign whose database is Database (Campaign:
/// its file, when known).
ChainFiles chainFiles(const std::string &Database,
                      const std::string &Campaign = "") {
  ChainFiles F;
  if (!Campaign.empty())
    F.Campaign = fs::absolute(Campaign).lexically_normal().string();
  F.Database = fs::absolute(Database).lexically_normal().string();
  F.Dir = fs::path(F.Database).parent_path().string();
  F.Script = (fs::path(F.Dir) / "campaign.slurm").string();
  F.Jobs = F.Script + ".jobs";
  F.Stop = F.Script + ".cancelled";
  F.Log = F.Script + ".log";
  return F;
}

ChainFiles chainFiles(const Campaign &C) {
  return chainFiles(C.Database, C.Path);
}

Error needSlurm(const char *Program) {
  if (resolveProgram(Program))
    return Error::success();
  return makeError(Program, " is not on PATH: r3 slurm needs Slurm's "
                            "commands (sbatch, squeue, scontrol, scancel), "
                            "as a login node of a Slurm cluster has them");
}

/// Runs a Slurm command; its output, or an error quoting it verbatim.
Expected<std::string> slurm(const std::vector<std::string> &Argv,
                            const char *What) {
  R3_TRY(needSlurm(Argv[0].c_str()));
  ChildResult R;
  R3_TRY(moveInto(runCapturing(Argv), R));
  if (!WIFEXITED(R.Status) || WEXITSTATUS(R.Status) != 0)
    return makeError(Argv[0], " refused ", What, " (",
                     describeStatus(R.Status),
                     "): ", trimmedDiagnostics(R.Output));
  return R.Output;
}

/// A Slurm time limit: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (as
/// sbatch(1) lists them), in seconds; "UNLIMITED" is refused, since the
/// warning signal needs a limit to count back from.
Expected<long> slurmSeconds(const std::string &T) {
  static const std::regex Forms(
      R"(^(?:(\d+)-(\d+)(?::(\d+)(?::(\d+))?)?|(\d+)(?::(\d+)(?::(\d+))?)?)$)");
  std::smatch M;
  auto Bad = [&] {
    return makeError("--time '", T,
                     "' is not a Slurm time limit (MM, MM:SS, HH:MM:SS, "
                     "D-HH, D-HH:MM or D-HH:MM:SS)");
  };
  if (!std::regex_match(T, M, Forms))
    return Bad();
  // Each field fits in 9 digits, so that the sum below cannot overflow.
  for (size_t I = 1; I < M.size(); ++I)
    if (M[I].length() > 9)
      return Bad();
  auto N = [&](int I) { return M[I].matched ? std::stol(M[I].str()) : 0L; };
  long S;
  if (M[1].matched) {
    if (N(2) > 23 || N(3) > 59 || N(4) > 59)
      return Bad();
    S = ((N(1) * 24 + N(2)) * 60 + N(3)) * 60 + N(4);
  } else if (M[7].matched) { // HH:MM:SS
    if (N(6) > 59 || N(7) > 59)
      return Bad();
    S = (N(5) * 60 + N(6)) * 60 + N(7);
  } else { // MM or MM:SS
    if (M[6].matched && N(6) > 59)
      return Bad();
    S = N(5) * 60 + N(6);
  }
  if (S <= 0)
    return Bad();
  return S;
}

std::string shellQuote(const std::string &S) {
  if (!S.empty() && S.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
                                        "KLMNOPQRSTUVWXYZ0123456789_-./=:,@%+") ==
                        std::string::npos)
    return S;
  std::string Out = "'";
  for (char Ch : S)
    Out += Ch == '\'' ? std::string("'\\''") : std::string(1, Ch);
  return Out + "'";
}

std::vector<std::string> readJobs(const ChainFiles &F) {
  std::vector<std::string> Ids;
  std::ifstream In(F.Jobs);
  for (std::string Line; std::getline(In, Line);)
    if (!trim(Line).empty())
      Ids.push_back(trim(Line));
  return Ids;
}

/// The chain's jobs Slurm still has queued or running (array tasks count
/// as their array); with Running, only those running, by their own ids
/// ("123", or "123_4" for an array task). This user's jobs are listed
/// whole: squeue -j fails outright once the ids are forgotten.
Expected<std::vector<std::string>> activeJobs(const ChainFiles &F,
                                              bool Running = false) {
  std::vector<std::string> Ids = readJobs(F), Active;
  if (Ids.empty())
    return Active;
  std::string Out;
  R3_TRY(moveInto(slurm({"squeue", "-h", "--me", "-o", "%i %F %T"},
                        "to list the chain's jobs"),
                  Out));
  for (const std::string &Line : split(Out, '\n')) {
    std::istringstream L(Line);
    std::string Id, ArrayId, State;
    L >> Id >> ArrayId >> State;
    if (Running && State != "RUNNING")
      continue;
    for (const std::string &J : Ids) {
      if (J != Id && J != ArrayId && Id.rfind(J + "_", 0) != 0)
        continue;
      const std::string &Name = Running ? Id : J;
      if (std::find(Active.begin(), Active.end(), Name) == Active.end())
        Active.push_back(Name);
    }
  }
  return Active;
}

Expected<std::unique_ptr<History>> openHistory(const std::string &Db) {
  return History::open(Db, pathExists(Db) ? HistoryMode::Open
                                          : HistoryMode::Create);
}

/// The r3 the batch scripts run: this one.
std::string selfExe() {
  std::string Exe = selfExecutable();
  return Exe.empty() ? std::string("r3") : Exe;
}

struct SubmitPlan {
  std::string Chain = "requeue", Until = "complete", Time, JobName;
  /// submit --app: r3 tune's whole argument list (--app ... -- APP ARGS);
  /// empty: the campaign file and TuneArgs.
  std::vector<std::string> App;
  long Seconds = 0, Margin = 300;
  unsigned Nodes = 1, GpusPerNode = 0, MaxSegments = 0, Tasks = 1;
  std::optional<unsigned> Ntasks, CpusPerTask;
  std::vector<std::string> Directives, SrunArgs, TuneArgs;
  std::string Template;
  bool DryRun = false, Force = false;
};

Expected<unsigned> countOption(const ParsedArgs &A, const char *Name,
                               unsigned Default, unsigned Min = 1) {
  auto V = A.value(Name);
  if (!V)
    return Default;
  auto N = parseInteger(*V, Min, 100000);
  if (!N)
    return makeError(Name, " wants a whole number from ", Min,
                     " to 100000, not ", quoteShort(*V));
  return static_cast<unsigned>(*N);
}

/// What to submit: a campaign's chain (Cuda: a CUDA campaign or
/// application; Name: the jobs' default name; Host: what a host campaign
/// is called in messages; F: the chain's files).
Expected<SubmitPlan> submitPlan(const ParsedArgs &A, bool Cuda,
                                const std::string &Name,
                                const std::string &Host, const ChainFiles &F) {
  SubmitPlan P;
  if (!A.value("--time"))
    return makeError("r3 slurm submit needs --time (the job's time limit, "
                     "e.g. --time 1-00:00:00)");
  P.Time = *A.value("--time");
  R3_TRY(moveInto(slurmSeconds(P.Time), P.Seconds));
  unsigned Margin;
  R3_TRY(moveInto(countOption(A, "--signal-margin", 300, 1), Margin));
  P.Margin = Margin;
  if (P.Margin >= P.Seconds)
    return makeError("--signal-margin ", P.Margin,
                     " s leaves nothing of --time ", P.Time,
                     " to run the campaign in");
  R3_TRY(moveInto(choiceValue(A, "--chain", {"requeue", "dependency", "array"},
                              "requeue"),
                  P.Chain));
  R3_TRY(moveInto(choiceValue(A, "--until", {"complete", "budget"}, "complete"),
                  P.Until));
  if (P.Until == "budget" && !A.has("--max-segments"))
    return makeError("--until budget stops the chain after --max-segments "
                     "segments: give --max-segments");
  // A requeue chain runs until the campaign is complete unless bounded; a
  // dependency or array chain submits its segments at once, 10 by default.
  R3_TRY(moveInto(countOption(A, "--max-segments",
                              P.Chain == "requeue" ? 1000 : 10),
                  P.MaxSegments));
  R3_TRY(moveInto(countOption(A, "--nodes", 1), P.Nodes));
  R3_TRY(moveInto(countOption(A, "--gpus-per-node", 0, 0), P.GpusPerNode));
  if (A.has("--ntasks")) {
    unsigned N;
    R3_TRY(moveInto(countOption(A, "--ntasks", 1), N));
    P.Ntasks = N;
  }
  if (A.has("--cpus-per-task")) {
    unsigned N;
    R3_TRY(moveInto(countOption(A, "--cpus-per-task", 1), N));
    P.CpusPerTask = N;
  }
  if (!Cuda && P.GpusPerNode)
    return makeError("--gpus-per-node is for CUDA campaigns; ", Host,
                     " (use --ntasks and --cpus-per-task)");
  if (Cuda && P.Ntasks)
    return makeError("--ntasks is for host campaigns; a CUDA campaign runs "
                     "one rank per GPU (--nodes and --gpus-per-node)");
  P.JobName = A.value("--job-name").value_or(Name);
  P.DryRun = A.has("--dry-run");
  P.Force = A.has("--force");
  P.Template = A.value("--template").value_or(shareDir() +
                                              "/scheduler/campaign.slurm");
  // The tasks: one process on one node (its workers over pipes, a GPU
  // each); across nodes rank 0 coordinates and every GPU gets a rank.
  unsigned Tasks = 1;
  if (Cuda && P.Nodes > 1)
    Tasks = P.Nodes * std::max(1u, P.GpusPerNode) + 1;
  else if (!Cuda && P.Ntasks)
    Tasks = *P.Ntasks;
  auto D = [&](const std::string &Line) {
    P.Directives.push_back("#SBATCH " + Line);
  };
  D("--job-name=" + P.JobName);
  D("--time=" + P.Time);
  D("--signal=B:USR1@" + std::to_string(P.Margin));
  D("--open-mode=append");
  D("--output=" + F.Log);
  D("--nodes=" + std::to_string(P.Nodes));
  D("--ntasks=" + std::to_string(Tasks));
  if (P.GpusPerNode)
    D("--gpus-per-node=" + std::to_string(P.GpusPerNode));
  if (P.CpusPerTask)
    D("--cpus-per-task=" + std::to_string(*P.CpusPerTask));
  for (const char *O : {"--partition", "--account", "--qos", "--constraint"})
    if (auto V = A.value(O))
      D(std::string(O) + "=" + *V);
  if (P.Chain == "requeue")
    D("--requeue");
  if (P.Chain == "array")
    D("--array=0-" + std::to_string(P.MaxSegments - 1) + "%1");
  if (auto It = A.Values.find("--sbatch-arg"); It != A.Values.end())
    for (const std::string &V : It->second)
      D(V);
  P.Tasks = Tasks;
  if (Tasks > 1)
    P.SrunArgs.push_back("--mpi=pmix");
  if (Cuda && Tasks > 1)
    P.SrunArgs.push_back("--gpu-bind=none"); // r3 picks each rank's GPU
  if (auto It = A.Values.find("--srun-arg"); It != A.Values.end()) {
    if (Tasks == 1)
      return makeError("--srun-arg is for segments of several tasks; one "
                       "task runs r3 in the batch script itself");
    for (const std::string &V : It->second)
      P.SrunArgs.push_back(V);
  }
  if (Tasks > 1 && A.has("--workers"))
    return makeError("--workers is for segments of one task: across ",
                     Tasks, " tasks every rank but rank 0 is a worker");
  for (const char *O : {"--budget", "--workers", "--grace", "--seed"})
    if (auto V = A.value(O)) {
      P.TuneArgs.push_back(O);
      P.TuneArgs.push_back(*V);
    }
  return P;
}

/// `submit --app`: r3 tune --app --resume with the tune --app options given,
/// the paths made absolute (the jobs run where they were submitted, but a
/// template may cd elsewhere).
Expected<std::vector<std::string>> appTuneArgs(const ParsedArgs &A,
                                               const AppPlan &App) {
  auto Abs = [](const std::string &Path) {
    return fs::absolute(Path).lexically_normal().string();
  };
  std::vector<std::string> W = {"--app", "--resume", "-o", Abs(App.OutDir)};
  if (A.has("--cover"))
    W.insert(W.end(), {"--cover", *A.value("--cover")});
  if (!App.Database.empty())
    W.insert(W.end(), {"--compile-commands", App.Database});
  W.insert(W.end(), {"--source-dir", Abs(App.SourceDir)});
  if (App.Budget)
    W.insert(W.end(), {"--budget", std::to_string(*App.Budget)});
  if (!App.Workers.empty())
    W.insert(W.end(), {"--workers", App.Workers});
  if (!App.Measure)
    W.push_back("--no-measure");
  else
    W.insert(W.end(), {"--measure-runs", std::to_string(App.MeasureRuns)});
  for (const char *O : {"--grace", "--seed", "--kernel"})
    if (A.has(O))
      return makeError("option '", O,
                       "' is not for --app (edit the campaign that r3 tune "
                       "--app writes instead)");
  W.push_back("--");
  W.insert(W.end(), App.Run.Argv.begin(), App.Run.Argv.end());
  return W;
}

Expected<std::string> batchScript(const SubmitPlan &P, const ChainFiles &F) {
  std::string Text;
  R3_TRY(moveInto(readWholeFile(P.Template, "batch template"), Text));
  bool UsesTune = Text.find("@TUNE@") != std::string::npos;
  auto Words = [](const std::vector<std::string> &Ws) {
    std::string Out;
    for (const std::string &W : Ws)
      Out += (Out.empty() ? "" : " ") + shellQuote(W);
    return Out;
  };
  std::vector<std::pair<std::string, std::string>> Fill = {
      {"@DIRECTIVES@", join(P.Directives, "\n")},
      {"@R3@", shellQuote(selfExe())},
      {"@CAMPAIGN@", shellQuote(F.Campaign)},
      {"@CHAIN@", P.Chain},
      {"@MAX_SEGMENTS@", std::to_string(P.MaxSegments)},
      {"@MARGIN@", std::to_string(P.Margin)},
      {"@JOBS_FILE@", shellQuote(F.Jobs)},
      {"@STOP_FILE@", shellQuote(F.Stop)},
      {"@TASKS@", std::to_string(P.Tasks)},
      // One task runs in the batch script itself: signals reach r3 alone.
      {"@LAUNCH@", P.Tasks > 1 ? "srun " + Words(P.SrunArgs) + " " : ""},
      // r3 tune's arguments: the campaign ($campaign in the script) and
      // its options, or those of --app.
      {"@TUNE@", !P.App.empty()       ? Words(P.App)
                 : P.TuneArgs.empty() ? std::string("\"$campaign\"")
                                      : "\"$campaign\" " + Words(P.TuneArgs)},
      {"@TUNE_ARGS@", Words(P.TuneArgs)}};
  for (const auto &[Key, Value] : Fill)
    for (size_t At = Text.find(Key); At != std::string::npos;
         At = Text.find(Key, At + Value.size()))
      Text.replace(At, Key.size(), Value);
  if (Text.find("@DIRECTIVES@") != std::string::npos ||
      Text.find("#SBATCH") == std::string::npos)
    return makeError(P.Template, ": a template needs @DIRECTIVES@");
  if (!P.App.empty() && !UsesTune)
    return makeError(P.Template, ": a template for --app needs @TUNE@ (r3 "
                                 "tune's whole argument list, as "
                                 "share/r3/scheduler/campaign.slurm has it)");
  return Text;
}

/// "123" from sbatch --parsable ("123" or "123;cluster"), past warnings.
Expected<std::string> parsableId(const std::string &Out) {
  static const std::regex Id(R"(^(\d+)(;\S+)?$)");
  for (const std::string &Line : split(Out, '\n')) {
    std::smatch M;
    std::string L = trim(Line);
    if (std::regex_match(L, M, Id))
      return M[1].str();
  }
  return makeError("sbatch printed no job id: ", trimmedDiagnostics(Out));
}

/// `submit --app ... -- APP ARGS`: the chain of `r3 tune --app --resume`
/// in the application's folder (-o).
Expected<std::pair<SubmitPlan, ChainFiles>> appSubmission(const ParsedArgs &A) {
  if (A.Positional.size() != 1)
    return makeError("'r3 slurm submit --app' takes the application after "
                     "'--', not a campaign file ('",
                     A.Positional.back(), "')");
  // The segments go on with what the folder holds: the plan is checked as
  // --resume will read it.
  ParsedArgs T = A;
  T.Positional.clear();
  T.Values.erase("--dry-run");
  T.Values["--resume"];
  AppPlan App;
  R3_TRY(moveInto(parseAppPlan(T), App));
  R3_TRY(resumedCampaign(App).takeError()); // a campaign of another command
  fs::path Dir = fs::absolute(App.OutDir).lexically_normal();
  ChainFiles F = chainFiles((Dir / "history.db").string(),
                            (Dir / "campaign.toml").string());
  SubmitPlan P;
  std::string Program = fs::path(App.Run.Program).filename().string();
  R3_TRY(moveInto(submitPlan(A, App.Run.Source == Backend::Cuda,
                             "r3-app-" + Program,
                             Program + " is a host application", F),
                  P));
  if (P.Tasks > 1 || P.Nodes > 1)
    return Error::make("--app runs on one node with one task (its campaign's "
                       "workers share the node's GPUs): leave out --nodes "
                       "and --ntasks");
  R3_TRY(moveInto(appTuneArgs(A, App), P.App));
  return std::pair<SubmitPlan, ChainFiles>(std::move(P), std::move(F));
}

int runSubmit(const ParsedArgs &A) {
  SubmitPlan Plan;
  ChainFiles F;
  if (A.has("--app")) {
    auto S = appSubmission(A);
    if (!S)
      return usageError(S.error().message(), "slurm");
    std::tie(Plan, F) = std::move(*S);
  } else {
    if (A.Positional.size() != 2)
      return usageError("'r3 slurm submit' takes one campaign file, or --app "
                        "and the application after '--'",
                        "slurm");
    auto C = loadCampaign(A.Positional[1]);
    if (!C)
      return fail(C.error());
    F = chainFiles(*C);
    auto S = submitPlan(A, C->Target == Backend::Cuda,
                        "r3-" + fs::path(C->Path).stem().string(),
                        C->Path + " is a host campaign", F);
    if (!S)
      return usageError(S.error().message(), "slurm");
    Plan = std::move(*S);
  }
  SubmitPlan *P = &Plan;
  auto Script = batchScript(*P, F);
  if (!Script)
    return fail(Script.error());
  if (P->DryRun) {
    std::printf("%s", Script->c_str());
    return ExitSuccess;
  }
  if (Error E = needSlurm("sbatch"))
    return fail(E);
  std::error_code Ec;
  fs::create_directories(F.Dir, Ec); // --app: the folder it will fill
  if (Ec)
    return fail(makeError("cannot create '", F.Dir, "': ", Ec.message()));
  // One chain a campaign: a second would run the same history twice.
  auto Active = activeJobs(F);
  if (!Active)
    return fail(Active.error());
  if (!Active->empty() && !P->Force)
    return fail(makeError(
        "a chain of ", F.Campaign, " is still queued or running (jobs ",
        join(*Active, ", "), "): 'r3 slurm cancel ", F.Database,
        "' ends it; --force submits another beside it"));
  if (Error E = writeFileAtomically(F.Script, *Script))
    return fail(E);
  fs::permissions(F.Script, fs::perms::owner_exec, fs::perm_options::add);
  std::error_code EC;
  fs::remove(F.Stop, EC); // a new chain is not cancelled
  auto H = openHistory(F.Database);
  if (!H)
    return fail(H.error());
  std::vector<std::string> Ids;
  unsigned Submissions = P->Chain == "dependency" ? P->MaxSegments : 1;
  for (unsigned I = 0; I < Submissions; ++I) {
    std::vector<std::string> Argv = {"sbatch", "--parsable"};
    if (P->Chain == "dependency") {
      Argv.push_back("--export=ALL,R3_SLURM_SEGMENT=" + std::to_string(I + 1));
      if (!Ids.empty())
        Argv.push_back("--dependency=afterany:" + Ids.back());
    }
    Argv.push_back(F.Script);
    auto Out = slurm(Argv, "the job");
    std::string Id;
    if (Out)
      Out = parsableId(*Out);
    if (!Out) {
      // What was submitted stays listed, so that cancel finds it.
      (void)writeFileAtomically(F.Jobs, join(Ids, "\n") + (Ids.empty() ? "" : "\n"));
      return fail(Out.error());
    }
    Ids.push_back(*Out);
  }
  if (Error E = writeFileAtomically(F.Jobs, join(Ids, "\n") + "\n"))
    return fail(E);
  std::string What = (Ids.size() > 1 ? "jobs " : "job ") + join(Ids, ",") +
                     " (" + P->Chain + " chain, at most " +
                     std::to_string(P->MaxSegments) + " segments of " +
                     P->Time + "): " + F.Script;
  if (Error E = (*H)->addEvent("slurm_submit", What))
    return fail(E);
  std::printf("r3: submitted %s\n"
              "r3: follow it with 'r3 slurm status %s' (the jobs' log is "
              "%s); 'r3 slurm cancel %s' ends it\n",
              What.c_str(), F.Database.c_str(), F.Log.c_str(),
              F.Database.c_str());
  return ExitSuccess;
}

/// The fields of `scontrol show job -o` lines: one map a job (or array
/// task).
std::vector<std::map<std::string, std::string>>
scontrolJobs(const std::string &Out) {
  std::vector<std::map<std::string, std::string>> Jobs;
  for (const std::string &Line : split(Out, '\n')) {
    if (Line.find("JobId=") == std::string::npos)
      continue;
    std::map<std::string, std::string> J;
    std::istringstream In(Line);
    for (std::string W; In >> W;)
      if (size_t Eq = W.find('='); Eq != std::string::npos)
        J.emplace(W.substr(0, Eq), W.substr(Eq + 1));
    Jobs.push_back(std::move(J));
  }
  return Jobs;
}

/// The campaign named by DB's history or a campaign file: the chain's
/// files.
Expected<ChainFiles> chainOf(const std::string &Arg) {
  if (Arg.ends_with(".toml")) {
    Campaign C;
    R3_TRY(moveInto(loadCampaign(Arg), C));
    return chainFiles(C);
  }
  if (!pathExists(Arg))
    return makeError(Arg, ": no such campaign database");
  return chainFiles(Arg);
}

/// The log's last line from the chain's script ("r3-slurm: ..."): why the
/// chain stands where it does.
std::string lastChainLine(const ChainFiles &F) {
  std::ifstream In(F.Log);
  std::string Last;
  for (std::string Line; std::getline(In, Line);)
    if (Line.rfind("r3-slurm: ", 0) == 0)
      Last = Line;
  return Last;
}

int runChainStatus(const ParsedArgs &A) {
  if (A.Positional.size() != 2)
    return usageError("'r3 slurm status' takes the campaign's database",
                      "slurm");
  auto F = chainOf(A.Positional[1]);
  if (!F)
    return fail(F.error());
  std::vector<std::string> Ids = readJobs(*F);
  if (Ids.empty())
    return fail(makeError("no Slurm chain was submitted for ",
                          F->Database, " (", F->Jobs, " is missing)"));
  std::printf("chain: %s\n", F->Script.c_str());
  if (pathExists(F->Stop))
    std::printf("cancelled: yes (r3 slurm cancel)\n");
  std::printf("%-12s %-10s %-20s %-20s %-6s %s\n", "job", "state", "start",
              "end", "exit", "requeues");
  // Jobs Slurm has forgotten (past MinJobAge) are listed without details.
  std::vector<std::map<std::string, std::string>> Jobs;
  for (const std::string &Id : Ids)
    if (auto Out = slurm({"scontrol", "show", "job", "-o", Id},
                         "to show the chain's jobs"))
      for (auto &J : scontrolJobs(*Out))
        Jobs.push_back(std::move(J));
  for (const std::string &Id : Ids) {
    bool Seen = false;
    for (auto &J : Jobs) {
      std::string Name = J["JobId"];
      if (J.count("ArrayJobId") && J.count("ArrayTaskId"))
        Name = J["ArrayJobId"] + "_" + J["ArrayTaskId"];
      if (J["JobId"] != Id && J["ArrayJobId"] != Id)
        continue;
      Seen = true;
      std::printf("%-12s %-10s %-20s %-20s %-6s %s\n", Name.c_str(),
                  J["JobState"].c_str(), J["StartTime"].c_str(),
                  J["EndTime"].c_str(), J["ExitCode"].c_str(),
                  J["Restarts"].c_str());
    }
    if (!Seen)
      std::printf("%-12s %-10s\n", Id.c_str(), "(gone from Slurm)");
  }
  if (std::string Why = lastChainLine(*F); !Why.empty())
    std::printf("last: %s\n", Why.c_str());
  if (!pathExists(F->Database))
    return ExitSuccess;
  auto H = History::open(F->Database, HistoryMode::ReadOnly);
  if (!H)
    return fail(H.error());
  auto Segments = (*H)->events("slurm");
  if (!Segments)
    return fail(Segments.error());
  for (const EventRow &E : *Segments)
    std::printf("event: %s %s\n", E.Kind.c_str(), E.Message.c_str());
  H->reset();
  std::printf("\n");
  ParsedArgs S;
  S.Command = findCommand("status");
  S.Positional = {F->Database};
  return S.Command->Run(S);
}

int runCancel(const ParsedArgs &A) {
  if (A.Positional.size() != 2)
    return usageError("'r3 slurm cancel' takes the campaign's database",
                      "slurm");
  auto F = chainOf(A.Positional[1]);
  if (!F)
    return fail(F.error());
  unsigned Grace;
  if (auto G = countOption(A, "--grace", 120, 0); G)
    Grace = *G;
  else
    return usageError(G.error().message(), "slurm");
  if (readJobs(*F).empty())
    return fail(makeError("no Slurm chain was submitted for ", F->Database,
                          " (", F->Jobs, " is missing)"));
  // The marker first: a segment that checkpoints now does not requeue.
  if (Error E = writeFileAtomically(F->Stop, "cancelled by r3 slurm cancel\n"))
    return fail(E);
  auto Active = activeJobs(*F);
  if (!Active)
    return fail(Active.error());
  if (Active->empty()) {
    std::printf("r3: nothing of the chain is queued or running\n");
    return ExitSuccess;
  }
  // USR1 to the running segment's script: it checkpoints (exit 75).
  auto Running = activeJobs(*F, /*Running=*/true);
  if (!Running)
    return fail(Running.error());
  for (const std::string &Id : *Running) {
    (void)slurm({"scancel", "--signal=USR1", "--batch", Id},
                "to signal the running segment");
    std::printf("r3: asked job %s to checkpoint (USR1)\n", Id.c_str());
  }
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(Grace);
  while (!Running->empty() && std::chrono::steady_clock::now() < Deadline) {
    auto Now = activeJobs(*F, /*Running=*/true);
    if (!Now || Now->empty())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  auto Left = activeJobs(*F);
  if (Left && !Left->empty()) {
    std::vector<std::string> Argv = {"scancel"};
    Argv.insert(Argv.end(), Left->begin(), Left->end());
    if (auto Out = slurm(Argv, "to cancel the chain"); !Out)
      return fail(Out.error());
  }
  if (pathExists(F->Database))
    if (auto H = History::open(F->Database, HistoryMode::Open); H)
      (void)(*H)->addEvent("slurm_cancel", join(*Active, ","));
  std::printf("r3: cancelled the chain (jobs %s); 'r3 slurm submit' "
              "resumes the campaign\n",
              join(*Active, ", ").c_str());
  return ExitSuccess;
}

/// `r3 slurm record ... -- APP ARGS`: a job that records the application
/// under srun, one capture per task (%r in -o is the rank).
int runRecordJob(const ParsedArgs &A) {
  if (A.Positional.size() != 1)
    return usageError("'r3 slurm record' takes the application after '--'",
                      "slurm");
  if (A.Trailing.empty())
    return usageError("no application to record: give it after '--', as in "
                      "r3 slurm record --time 30:00 --ntasks 4 -k REGEX -o "
                      "cap-%r.h5 -- ./app ARGS",
                      "slurm");
  auto Out = A.value("--output");
  if (!Out)
    return usageError("-o OUT.h5 is required: the captures to write (%r is "
                      "the task's rank, one capture each)",
                      "slurm");
  if (!A.value("--time"))
    return usageError("r3 slurm record needs --time (the job's time limit)",
                      "slurm");
  if (auto S = slurmSeconds(*A.value("--time")); !S)
    return usageError(S.error().message(), "slurm");
  unsigned Nodes, Tasks, Gpus;
  for (auto [Name, Into, Default, Min] :
       {std::tuple{"--nodes", &Nodes, 1u, 1u},
        std::tuple{"--ntasks", &Tasks, 1u, 1u},
        std::tuple{"--gpus-per-node", &Gpus, 0u, 0u}})
    if (auto N = countOption(A, Name, Default, Min); N)
      *Into = *N;
    else
      return usageError(N.error().message(), "slurm");
  if (Tasks > 1 && Out->find("%r") == std::string::npos)
    return usageError("-o '" + *Out + "' would be written by all " +
                          std::to_string(Tasks) +
                          " tasks: put %r (the rank) in it, as in cap-%r.h5",
                      "slurm");
  std::string Dir = fs::current_path().string();
  std::string Name = A.value("--job-name").value_or("r3-record");
  std::string Script = (fs::path(Dir) / "record.slurm").string();
  std::vector<std::string> Lines = {
      "#!/bin/bash",
      "# Records " + join(A.Trailing, " ") +
          " under srun, one capture per task; written by `r3 slurm record`.",
      "#SBATCH --job-name=" + Name,
      "#SBATCH --time=" + *A.value("--time"),
      "#SBATCH --nodes=" + std::to_string(Nodes),
      "#SBATCH --ntasks=" + std::to_string(Tasks),
      "#SBATCH --output=" + (fs::path(Dir) / "record.slurm.log").string()};
  if (Gpus)
    Lines.push_back("#SBATCH --gpus-per-node=" + std::to_string(Gpus));
  if (auto C = A.value("--cpus-per-task"))
    Lines.push_back("#SBATCH --cpus-per-task=" + *C);
  for (const char *O : {"--partition", "--account", "--qos", "--constraint"})
    if (auto V = A.value(O))
      Lines.push_back("#SBATCH " + std::string(O) + "=" + *V);
  if (auto It = A.Values.find("--sbatch-arg"); It != A.Values.end())
    for (const std::string &V : It->second)
      Lines.push_back("#SBATCH " + V);
  std::vector<std::string> Step = {"srun"};
  if (auto It = A.Values.find("--srun-arg"); It != A.Values.end())
    Step.insert(Step.end(), It->second.begin(), It->second.end());
  Step.push_back(selfExe());
  Step.push_back("record");
  if (auto It = A.Values.find("--kernel"); It != A.Values.end())
    for (const std::string &K : It->second) {
      Step.push_back("--kernel");
      Step.push_back(K);
    }
  Step.push_back("--output");
  Step.push_back(*Out);
  if (auto It = A.Values.find("--record-arg"); It != A.Values.end())
    Step.insert(Step.end(), It->second.begin(), It->second.end());
  Step.push_back("--");
  Step.insert(Step.end(), A.Trailing.begin(), A.Trailing.end());
  std::string Command;
  for (const std::string &W : Step)
    Command += (Command.empty() ? "" : " ") + shellQuote(W);
  Lines.push_back("cd " + shellQuote(Dir));
  Lines.push_back(Command);
  std::string Text = join(Lines, "\n") + "\n";
  if (A.has("--dry-run")) {
    std::printf("%s", Text.c_str());
    return ExitSuccess;
  }
  if (Error E = needSlurm("sbatch"))
    return fail(E);
  if (Error E = writeFileAtomically(Script, Text))
    return fail(E);
  auto Got = slurm({"sbatch", "--parsable", Script}, "the recording job");
  if (Got)
    Got = parsableId(*Got);
  if (!Got)
    return fail(Got.error());
  std::printf("r3: submitted job %s: %s\n"
              "r3: it writes %s (its log: %s); 'r3 inspect' a capture once "
              "the job is done\n",
              Got->c_str(), Script.c_str(), Out->c_str(),
              (fs::path(Dir) / "record.slurm.log").c_str());
  return ExitSuccess;
}

int runSlurm(const ParsedArgs &A) {
  if (A.Positional.empty())
    return usageError("'r3 slurm' needs a subcommand: submit, status, "
                      "cancel or record",
                      "slurm");
  const std::string &Sub = A.Positional[0];
  if (Sub == "record")
    return runRecordJob(A);
  if (!A.Trailing.empty() && !(Sub == "submit" && A.has("--app")))
    return usageError("only 'r3 slurm record' and 'r3 slurm submit --app' "
                      "take an application after '--'",
                      "slurm");
  if (A.has("--app") && Sub != "submit")
    return usageError("--app is an option of 'r3 slurm submit'", "slurm");
  if (Sub == "submit")
    return runSubmit(A);
  if (Sub == "status")
    return runChainStatus(A);
  if (Sub == "cancel")
    return runCancel(A);
  return usageError("unknown 'r3 slurm' subcommand '" + Sub +
                        "' (submit, status, cancel or record)",
                    "slurm");
}
} // namespace

CommandSpec slurmCommand() {
  return {
      "slurm",
      "run a campaign as a chain of Slurm jobs that checkpoint and go on",
      "submit CAMPAIGN.toml --time D-HH:MM:SS [options] | submit --app "
      "--time D-HH:MM:SS [options] -- APP ARGS | status DB | cancel DB | "
      "record --time T [options] -o OUT-%r.h5 -- APP ARGS",
      "submit writes campaign.slurm next to the campaign's database (from\n"
      "share/r3/scheduler/campaign.slurm, or --template) and submits it with\n"
      "sbatch. Each segment runs `r3 tune` (under srun when it has several\n"
      "tasks); Slurm sends USR1\n"
      "--signal-margin seconds before the time limit, r3 checkpoints and\n"
      "exits 75, and the chain goes on: the job requeues itself (requeue),\n"
      "the next of --max-segments jobs submitted with afterany dependencies\n"
      "starts (dependency), or the next task of an array run one at a time\n"
      "(array), until the campaign is complete. The job ids are recorded in\n"
      "the history and in campaign.slurm.jobs; the segments' output goes to\n"
      "campaign.slurm.log. status shows the chain's jobs beside r3 status;\n"
      "cancel checkpoints the running segment (USR1) and cancels the rest.\n"
      "On several nodes a CUDA campaign runs one rank per GPU and a\n"
      "coordinating rank (srun --mpi=pmix --gpu-bind=none; r3 picks each\n"
      "rank's GPU). record writes record.slurm in this folder and submits a\n"
      "job that runs `r3 record` under srun, one capture per task (%r in -o\n"
      "is the rank). submit --app does what r3 tune --app does (profile,\n"
      "record, write the campaign, tune it, measure the application end to\n"
      "end) as such a chain on one node: each segment runs r3 tune --app\n"
      "--resume, which goes on with what the folder (-o) holds; the chain's\n"
      "files and history are there (r3 slurm status DIR/history.db).\n"
      "docs/slurm.md has worked examples.",
      {{"--time", "", Arity::Value, "D-HH:MM:SS", "each segment's time limit"},
       {"--nodes", "", Arity::Value, "N", "nodes a segment runs on (default 1)"},
       {"--gpus-per-node", "", Arity::Value, "G",
        "GPUs a node (CUDA campaigns)"},
       {"--ntasks", "", Arity::Value, "N", "tasks (host campaigns)"},
       {"--cpus-per-task", "", Arity::Value, "N", "cores a task"},
       {"--partition", "", Arity::Value, "NAME", "sbatch --partition"},
       {"--account", "", Arity::Value, "NAME", "sbatch --account"},
       {"--qos", "", Arity::Value, "NAME", "sbatch --qos"},
       {"--constraint", "", Arity::Value, "LIST", "sbatch --constraint"},
       {"--job-name", "", Arity::Value, "NAME",
        "the jobs' name (default r3-CAMPAIGN)"},
       {"--sbatch-arg", "", Arity::Value, "ARG",
        "another #SBATCH line (repeatable)"},
       {"--srun-arg", "", Arity::Value, "ARG",
        "another srun argument (repeatable)"},
       {"--signal-margin", "", Arity::Value, "SECONDS",
        "USR1 this long before the limit (default 300)"},
       {"--chain", "", Arity::Value, "requeue|dependency|array",
        "how a segment follows the last (default requeue)"},
       {"--max-segments", "", Arity::Value, "K",
        "segments at most (default 10 for dependency and array)"},
       {"--until", "", Arity::Value, "complete|budget",
        "chain until the campaign is complete (default), or for exactly "
        "--max-segments segments"},
       {"--template", "", Arity::Value, "FILE", "your own batch template"},
       {"--dry-run", "", Arity::Flag, "", "print the script, submit nothing"},
       {"--force", "", Arity::Flag, "",
        "submit even while a chain of the campaign is queued"},
       {"--budget", "", Arity::Value, "N", "r3 tune --budget"},
       {"--workers", "", Arity::Value, "N", "r3 tune --workers"},
       {"--grace", "", Arity::Value, "SECONDS",
        "r3 tune --grace; for cancel, how long the segment may take to "
        "checkpoint (default 120)"},
       {"--seed", "", Arity::Value, "N", "r3 tune --seed"},
       {"--kernel", "-k", Arity::Value, "REGEX",
        "record: the kernels to record (repeatable)"},
       {"--output", "-o", Arity::Value, "OUT.h5|DIR",
        "record: the captures (%r: the task's rank); submit --app: the "
        "folder of the campaign and the chain (default r3-app)"},
       {"--app", "", Arity::Flag, "",
        "submit: tune the application after '--' (r3 tune --app)"},
       {"--cover", "", Arity::Value, "SHARE",
        "submit --app: r3 tune --app --cover"},
       {"--compile-commands", "", Arity::Value, "FILE",
        "submit --app: r3 tune --app --compile-commands"},
       {"--source-dir", "", Arity::Value, "DIR",
        "submit --app: r3 tune --app --source-dir"},
       {"--measure-runs", "", Arity::Value, "N",
        "submit --app: r3 tune --app --measure-runs"},
       {"--no-measure", "", Arity::Flag, "",
        "submit --app: r3 tune --app --no-measure"},
       {"--record-arg", "", Arity::Value, "ARG",
        "record: another r3 record argument (repeatable)"}},
      true,
      runSlurm};
}

} // namespace r3::cli
