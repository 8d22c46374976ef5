// `r3 tune`: run (or resume) a tuning campaign. The engine (campaign/EventLoop.h)
// does the work; this file validates the command line, prints progress (a
// line rewritten in place on a terminal, plain log lines otherwise) and maps
// the outcome to an exit status: 0 complete, 1 failed, 75 interrupted (resume
// it). With --simulate it runs a strategy against a tuning cache instead.
#include "campaign/Campaign.h"
#include "campaign/EventLoop.h"
#include "campaign/Mpi.h"
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "cli/TuneApp.h"
#include "cli/TuneSimulate.h"
#include "support/FileUtil.h"
#include "support/StringUtil.h"

#include <chrono>
#include <filesystem>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <unistd.h>

namespace r3::cli {

namespace {
namespace fs = std::filesystem;
std::string duration(double Seconds) {
  char Buf[32];
  if (Seconds < 120)
    std::snprintf(Buf, sizeof Buf, "%.0fs", Seconds);
  else if (Seconds < 7200)
    std::snprintf(Buf, sizeof Buf, "%.0fm", Seconds / 60);
  else
    std::snprintf(Buf, sizeof Buf, "%.1fh", Seconds / 3600);
  return Buf;
}

std::string kernelText(const KernelProgress &K) {
  char Buf[160];
  if (K.BestMs && K.BaselineMs)
    std::snprintf(Buf, sizeof Buf, "%s %.3gx", K.Name.c_str(),
                  *K.BaselineMs / *K.BestMs);
  else
    std::snprintf(Buf, sizeof Buf, "%s -", K.Name.c_str());
  return Buf;
}

/// Progress on stderr: in place on a terminal, else a line every 10 s.
class Printer : public TuneObserver {
public:
  Printer() : Terminal(::isatty(STDERR_FILENO)) {
    Color = Terminal && !std::getenv("NO_COLOR");
  }
  void progress(const TuneProgress &P) override {
    auto Now = std::chrono::steady_clock::now();
    if (!Terminal && Now - Last < std::chrono::seconds(10) && P.Done < P.Budget)
      return;
    Last = Now;
    std::string Line = line(P);
    if (Terminal)
      std::fprintf(stderr, "\r\033[K%s", Line.c_str());
    else
      std::fprintf(stderr, "r3: %s\n", Line.c_str());
    Pending = Terminal;
  }
  void note(const std::string &Line) override {
    endLine();
    std::fprintf(stderr, "r3: %s\n", Line.c_str());
  }
  void endLine() {
    if (Pending)
      std::fputc('\n', stderr);
    Pending = false;
  }

private:
  std::string line(const TuneProgress &P) const {
    std::vector<std::string> Ks;
    for (const KernelProgress &K : P.Kernels)
      Ks.push_back(kernelText(K));
    char Buf[256];
    std::snprintf(Buf, sizeof Buf,
                  "%llu/%llu evaluations, %s%s%s, %.1f/min, %llu failed, "
                  "%llu running",
                  static_cast<unsigned long long>(P.Done),
                  static_cast<unsigned long long>(P.Budget),
                  Color ? "\033[1m" : "", join(Ks, ", ").c_str(),
                  Color ? "\033[0m" : "", P.PerMinute,
                  static_cast<unsigned long long>(P.Failures),
                  static_cast<unsigned long long>(P.InFlight));
    std::string S = Buf;
    if (P.EtaSeconds)
      S += ", eta " + duration(*P.EtaSeconds);
    return S;
  }

  bool Terminal, Color = false, Pending = false;
  std::chrono::steady_clock::time_point Last;
};

void onStopSignal(int) { requestCampaignStop(); }

void installStopHandlers() {
  struct sigaction A = {};
  A.sa_handler = onStopSignal;
  sigemptyset(&A.sa_mask);
  for (int S : {SIGINT, SIGTERM, SIGUSR1})
    ::sigaction(S, &A, nullptr);
}

int dryRun(const Campaign &C) {
  for (const std::string &Line : describeSpaces(C))
    std::printf("%s\n", Line.c_str());
  std::printf("database: %s%s\n", C.Database.c_str(),
              pathExists(C.Database) ? " (exists: r3 tune resumes it)" : "");
  // The captures recorded so far hold the kernels and launches named.
  Error Captures = checkCaptures(C);
  if (Captures)
    for (const std::string &Line : split(Captures.message(), '\n'))
      printError(Line);
  // Everything else is valid; the campaign cannot run until its captures
  // are recorded.
  bool Recipe = pathExists((fs::path(C.Dir) / "build.sh").string());
  for (const std::string &Missing : C.MissingCaptures)
    printError(C.Path + ": the capture " + Missing +
               " does not exist yet: " +
               (Recipe ? "./build.sh beside the campaign records it"
                       : "record it with r3 record -o " + Missing +
                             " -- APP ARGS"));
  return C.MissingCaptures.empty() && !Captures ? ExitSuccess : ExitFailure;
}

void printSummary(const TuneSummary &S, const Campaign &C) {
  std::printf("r3: campaign %s (%s): %llu evaluations\n",
              S.Outcome == TuneOutcome::Complete ? "complete" : "interrupted",
              S.Why.c_str(), static_cast<unsigned long long>(S.Final.Done));
  for (const KernelProgress &K : S.Final.Kernels) {
    if (K.BestMs && K.BaselineMs)
      std::printf("  %s: baseline %.4g ms, best %.4g ms (%.3gx), %llu "
                  "evaluations, %llu failed\n",
                  K.Name.c_str(), *K.BaselineMs, *K.BestMs,
                  *K.BaselineMs / *K.BestMs,
                  static_cast<unsigned long long>(K.Evaluations),
                  static_cast<unsigned long long>(K.Failures));
    else
      std::printf("  %s: no verified result yet, %llu evaluations\n",
                  K.Name.c_str(),
                  static_cast<unsigned long long>(K.Evaluations));
  }
  if (S.Outcome == TuneOutcome::Interrupted)
    std::printf("r3: resume with: r3 tune %s\n", C.Path.c_str());
  else
    std::printf("r3: details: r3 report %s\n", C.Database.c_str());
}

Error parseOptions(const ParsedArgs &A, TuneOptions &O) {
  if (auto W = A.value("--workers")) {
    auto N = parseUnsigned(*W);
    if (!N || *N == 0 || *N > 1024)
      return makeError("option '--workers' expects a number of workers (1 to "
                       "1024), got '",
                       *W, "'");
    O.Workers = static_cast<unsigned>(*N);
  }
  if (auto L = A.value("--history-local"))
    O.HistoryLocal = *L;
  if (auto B = A.value("--backup-every")) {
    auto D = parseDouble(*B);
    if (!D)
      return D.takeError().context("option '--backup-every'");
    if (!(*D > 0))
      return makeError("option '--backup-every' expects seconds, got '", *B,
                       "'");
    if (O.HistoryLocal.empty())
      return Error::make("option '--backup-every' needs --history-local");
    O.BackupSeconds = *D;
  }
  if (auto G = A.value("--grace")) {
    auto D = parseDouble(*G);
    if (!D)
      return D.takeError().context("option '--grace'");
    if (*D < 0)
      return makeError("option '--grace' expects seconds, got '", *G, "'");
    O.GraceSeconds = *D;
  }
  return Error::success();
}

/// Finalizes MPI however rank 0's run ends (its worker ranks are told to
/// exit, so that none waits for ever).
struct MpiScope {
  bool On = false;
  ~MpiScope() {
    if (On)
      finishMpi();
  }
};

int runTune(const ParsedArgs &A) {
  if (A.has("--simulate"))
    return runTuneSimulate(A);
  if (A.has("--app"))
    return runTuneApp(A);
  for (const char *AppOnly : {"--cover", "--compile-commands", "--source-dir",
                              "--output", "--no-measure", "--measure-runs"})
    if (A.has(AppOnly))
      return usageError(std::string("option '") + AppOnly + "' needs --app",
                        "tune");
  if (!A.Trailing.empty())
    return usageError("an application after '--' needs --app: r3 tune --app "
                      "-- APP ARGS",
                      "tune");
  // Under MPI every rank runs this command: rank 0 the campaign, the others
  // relay for it (campaign/Mpi.h) and never read the campaign file.
  MpiScope Mpi;
  std::optional<MpiJob> Job;
  if (A.has("--mpi") || mpiLaunched()) {
    auto J = startMpi();
    if (!J)
      return fail(J.takeError());
    Mpi.On = true;
    Job = *J;
    if (Job->Rank > 0)
      return runWorkerRank(*Job);
  }
  if (A.Positional.size() != 1)
    return usageError(A.Positional.empty()
                          ? "expected a campaign file"
                          : "expected one campaign file, got " +
                                std::to_string(A.Positional.size()),
                      "tune");
  TuneOptions O;
  if (Error E = parseOptions(A, O))
    return usageError(E.message(), "tune");
  auto C = loadCampaign(A.Positional[0],
                        /*MissingCapturesOk=*/A.has("--dry-run"));
  if (!C) {
    for (const std::string &Line : split(C.error().message(), '\n'))
      printError(Line);
    return ExitFailure;
  }
  if (auto Seed = A.value("--seed")) {
    auto N = parseUnsigned(*Seed);
    if (!N)
      return usageError("option '--seed' expects a number, got '" + *Seed + "'",
                        "tune");
    C->Seed = *N;
  }
  if (auto B = A.value("--budget")) {
    auto N = parseUnsigned(*B);
    if (!N || *N == 0)
      return usageError(
          "option '--budget' expects a positive number of evaluations, "
          "got '" +
              *B + "'",
          "tune");
    C->Budget.Evaluations = *N;
  }
  if (A.has("--dry-run"))
    return dryRun(*C);
  if (A.has("--resume") && !pathExists(C->Database))
    return fail(makeError("nothing to resume: the campaign database '",
                          C->Database, "' does not exist"));
  if (A.has("--stage-captures") && !(Job && Job->Size > 1))
    return usageError("option '--stage-captures' applies to campaigns "
                      "across the ranks of an MPI job",
                      "tune");
  if (Job && Job->Size > 1) {
    if (A.has("--workers"))
      return usageError("option '--workers' does not apply under MPI: every "
                        "rank but rank 0 is a worker",
                        "tune");
    O.Workers = static_cast<unsigned>(Job->Size - 1);
    O.Links = mpiLinks();
    std::vector<std::string> Captures;
    for (const KernelSpec &K : C->Kernels)
      Captures.push_back(K.Capture);
    std::string Dir = A.value("--stage-captures").value_or("");
    auto Took = stageCaptures(Captures, Dir);
    if (!Took)
      return fail(Took.takeError());
    if (!Dir.empty())
      std::fprintf(stderr, "r3: staged the campaign's captures under %s on "
                           "every node in %.2f s\n",
                   Dir.c_str(), *Took);
  }
  installStopHandlers();
  Printer Out;
  Expected<TuneSummary> S = runCampaign(*C, O, Out);
  Out.endLine();
  if (!S)
    return fail(S.error());
  printSummary(*S, *C);
  return S->Outcome == TuneOutcome::Interrupted ? ExitInterrupted : ExitSuccess;
}
} // namespace

CommandSpec tuneCommand() {
  return {
      "tune",
      "run or resume a tuning campaign described by a campaign file",
      "CAMPAIGN.toml [options] | --app [options] -- APP [ARGS...] | "
      "--simulate CACHE.json[.gz] [options]",
      "Every candidate and result is committed to the campaign's database as "
      "it\narrives; a campaign whose database exists is resumed. SIGINT, "
      "SIGTERM and\nSIGUSR1 stop dispatching, wait --grace seconds for the "
      "evaluations in flight,\ncommit and exit 75. Under mpirun or srun "
      "(or with --mpi) rank 0 runs the\ncampaign and every other rank is a "
      "worker with a GPU of its own. --simulate runs one "
      "strategy against a tuning cache (Kernel\nTuner's cache-file format): "
      "each evaluation is a lookup.\n"
      "--app tunes an application from its command line: it profiles it, "
      "picks the\nkernels that cover --cover of the kernels' time, records "
      "one launch of each,\nfinds their sources, writes a campaign to -o DIR "
      "(every choice explained),\nruns it and measures the application end "
      "to end, tuned against its own code. Stopped by SIGUSR1 or SIGTERM,\n"
      "it passes the stop to the campaign (which checkpoints) or lets the "
      "step in\nprogress finish, then exits 75; --resume goes on.",
      {{"--dry-run", "", Arity::Flag, "",
        "validate and print the search space sizes (with --app: stop once "
        "the campaign is written)"},
       {"--app", "", Arity::Flag, "",
        "tune the application given after '--' (see above)"},
       {"--cover", "", Arity::Value, "SHARE",
        "with --app: the share of the kernels' time to tune (default 0.9)"},
       {"--compile-commands", "", Arity::Value, "FILE",
        "with --app: the build's compile_commands.json (default: one in "
        "--source-dir or its build/)"},
       {"--source-dir", "", Arity::Value, "DIR",
        "with --app: where the kernels' definitions are looked for (default: "
        "the current folder)"},
       {"--output", "-o", Arity::Value, "DIR",
        "with --app: the folder of the capture, campaign and history "
        "(default r3-app)"},
       {"--no-measure", "", Arity::Flag, "",
        "with --app: do not run the application end to end at the end"},
       {"--measure-runs", "", Arity::Value, "N",
        "with --app: runs of each arm end to end (default 3)"},
       {"--resume", "", Arity::Flag, "",
        "resume the campaign in its database (an error if there is none); "
        "with --app: go on with the campaign in -o DIR (tune it to its end, "
        "then the end-to-end runs still missing), or start one there"},
       {"--workers", "", Arity::Value, "N",
        "worker processes on this node (default: one per spare core on the "
        "host backend, one per GPU)"},
       {"--grace", "", Arity::Value, "SECONDS",
        "how long a stop waits for evaluations in flight (default 30)"},
       {"--history-local", "", Arity::Value, "DIR",
        "keep the live history in DIR (a node-local disk) and copy it to the "
        "campaign's database path, which may be on Lustre or GPFS"},
       {"--backup-every", "", Arity::Value, "SECONDS",
        "with --history-local: how often it is copied (default 600; also at "
        "every stop)"},
       {"--stage-captures", "", Arity::Value, "DIR",
        "under MPI: copy the captures to DIR on each node (a local disk; %h: "
        "the node's name) before the campaign"},
       {"--mpi", "", Arity::Flag, "",
        "run as the ranks of an MPI job (found by itself under mpirun or "
        "srun): rank 0 coordinates, every other rank is a worker"},
       {"--seed", "", Arity::Value, "N", "random seed"},
       {"--simulate", "", Arity::Value, "CACHE.json",
        "evaluate by lookup in a tuning cache file"},
       {"--strategy", "", Arity::Value, "NAME",
        "with --simulate: the strategy: portfolio (the default), bo, "
        "random, grid, tpe or ga"},
       {"--budget", "", Arity::Value, "N",
        "evaluations (overrides the campaign's budget; with --simulate: "
        "default 200)"},
       {"--batch", "", Arity::Value, "N",
        "with --simulate: points proposed at once (default 1)"},
       {"--format", "", Arity::Value, "table|json",
        "with --simulate: output format"}},
      true,
      runTune};
}

} // namespace r3::cli
