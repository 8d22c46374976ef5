// `r3 record`: run an application and record the inputs of chosen kernel
// launches. Everything is validated before the application starts; then it
// runs with the record stream (a socketpair) and the contract of RecordEnv.h
// in its environment, while this process writes the capture from the stream.
// The application's output and exit status pass through; a failed recording
// is `r3: error: <why>`, exit 1 and no capture file.
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "cli/Installed.h"
#include "record/AppBackend.h"
#include "record/CaptureSink.h"
#include "record/Launcher.h"
#include "record/OutputPath.h"
#include "record/Profile.h"
#include "record/RecordEnv.h"
#include "record/Ring.h"
#include "support/Demangle.h"
#include "support/StringUtil.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <unistd.h>

namespace r3::cli {

namespace {
namespace fs = std::filesystem;
/// How receiveCapture says the stream ended without Done.
constexpr std::string_view StreamEndedEarly =
    "the recorded process ended before recording finished";

/// A validated `r3 record` command line.
struct RecordPlan {
  RecordEnv Env;
  Backend Source = Backend::Host;
  std::string Injection;     ///< CUDA: the injection library's path
  std::string OutputPattern; ///< empty with --list
  std::string Program;       ///< the resolved application path
  std::vector<std::string> Argv;
};

std::optional<std::string> envLookup(const std::string &Name) {
  const char *V = std::getenv(Name.c_str());
  return V ? std::optional<std::string>(V) : std::nullopt;
}

Expected<uint64_t> parseMaxBytes(const std::string &Text) {
  if (auto V = parseSize(Text))
    return *V;
  return Error::make("--max-bytes expects a positive size such as 4G, 512M "
                     "or 1048576, got '" +
                     Text + "'");
}

/// Which backend records the application, and with what.
Error planBackend(const ParsedArgs &A, RecordPlan &P) {
  std::string Chosen;
  R3_TRY(moveInto(choiceValue(A, "--backend", {"cuda", "host"}, ""), Chosen));
  R3_TRY(moveInto(applicationBackend(P.Program, Chosen), P.Source));
  if (P.Source == Backend::Host)
    return Error::success();
#ifdef R3_HAVE_CUDA
  return moveInto(installedFile(CudaInjectionLibrary), P.Injection);
#else
  return makeError(
      "'", P.Program,
      "' would be recorded with the CUDA backend (it is not instrumented for "
      "the host backend: it neither links libr3-host-rt.so nor refers to "
      "__r3_host_register_unit), but this r3 was built without CUDA; rebuild "
      "r3 with the CUDA toolkit, or build the application with $(r3 "
      "host-flags --kernel REGEX) and $(r3 host-flags --libs) and pass "
      "--backend host");
#endif
}

/// Checks the options that do not depend on the application.
Error planOptions(const ParsedArgs &A, RecordPlan &P) {
  if (!A.Positional.empty())
    return makeError("unexpected argument '", A.Positional.front(),
                     "' (the application goes after '--')");
  if (A.Trailing.empty())
    return Error::make("no application to record: give it after '--', as in "
                       "r3 record -k REGEX -o OUT.h5 -- ./app ARGS");
  auto It = A.Values.find("--kernel");
  if (It != A.Values.end())
    P.Env.Patterns = It->second;
  R3_TRY(
      moveInto(parseLaunchRange(A.value("--launch"), A.value("--launches"),
                                A.value("--skip"), A.value("--max-launches")),
               P.Env.Range));
  auto Selector = KernelSelector::create(P.Env.Patterns, P.Env.Range);
  if (!Selector)
    return Selector.takeError();
  if (auto M = A.value("--max-bytes"))
    R3_TRY(moveInto(parseMaxBytes(*M), P.Env.MaxSnapshotBytes));
  std::string Memory;
  R3_TRY(moveInto(choiceValue(A, "--memory", {"reachable", "all"}, "reachable"),
                  Memory));
  P.Env.AllMemory = Memory == "all";
  P.Env.Mode = A.has("--list") ? RecordMode::List : RecordMode::Record;
  auto Out = A.value("--output");
  if (P.Env.Mode == RecordMode::List && Out)
    return Error::make("--list records nothing, so it takes no -o");
  if (P.Env.Mode == RecordMode::Record && !Out)
    return Error::make(
        "-o OUT.h5 is required: the capture file to write (or --list to "
        "list the kernels only)");
  if (Out) {
    P.OutputPattern = *Out;
    R3_TRY(expandOutputPath(*Out, ::getpid(), envLookup).takeError());
  }
  return Error::success();
}

CaptureHeader captureHeader(const RecordPlan &P) {
  CaptureHeader H;
  H.CommandLine = P.Argv;
  for (const auto &[Name, Value] : encodeRecordEnv(P.Env))
    if (Name != recordenv::Fd && Name != recordenv::Ring)
      H.Environment.push_back(Name + "=" + Value);
  return H;
}

std::string launchCount(uint64_t N) {
  return std::to_string(N) + (N == 1 ? " launch" : " launches");
}

std::string dims(const Dim3 &D) {
  return "(" + std::to_string(D[0]) + "," + std::to_string(D[1]) + "," +
         std::to_string(D[2]) + ")";
}

/// "12.3 us", or "-" when no launch was timed.
std::string meanDuration(const wire::KernelStatsMsg &K) {
  if (K.TimedLaunches == 0)
    return "-";
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.1f us",
                K.TotalNs / 1000.0 / K.TimedLaunches);
  return Buf;
}

/// "(grid) (block) " in two columns of 17 characters.
std::string shape(const wire::KernelStatsMsg &K) {
  std::string S = dims(K.Grid);
  S.resize(std::max<size_t>(S.size() + 1, 17), ' ');
  S += dims(K.Block);
  S.resize(std::max<size_t>(S.size() + 1, 34), ' ');
  return S;
}

/// The kernel list; CUDA kernels also show their first launch's grid and
/// block (host kernels have none).
void printList(const std::vector<wire::KernelStatsMsg> &Kernels, Backend B) {
  std::vector<std::string> Names;
  size_t Width = 6;
  for (const auto &K : Kernels) {
    Names.push_back(K.Demangled.empty() ? K.Name : K.Demangled);
    Width = std::max(Width, Names.back().size());
  }
  int W = static_cast<int>(Width);
  bool Cuda = B == Backend::Cuda;
  std::printf("%-*s  %10s  %s%s\n", W, "kernel", "launches",
              Cuda ? "grid             block            " : "",
              "mean duration");
  for (size_t I = 0; I < Kernels.size(); ++I) {
    std::string Shape = Cuda ? shape(Kernels[I]) : "";
    std::printf("%-*s  %10llu  %s%s\n", W, Names[I].c_str(),
                static_cast<unsigned long long>(Kernels[I].Launches),
                Shape.c_str(), meanDuration(Kernels[I]).c_str());
  }
  if (Kernels.empty())
    std::printf(Cuda ? "(no kernel ran)\n" : "(no instrumented kernel ran)\n");
}

/// The result of receiving: a capture's statistics, or the list.
struct Received {
  Error Failure;
  RecordStats Stats;
  std::vector<wire::KernelStatsMsg> List;
};

Received receive(int Fd, const RecordPlan &P, const std::string &Path,
                 const wire::BulkRing &Ring) {
  Received R;
  if (P.Env.Mode == RecordMode::List) {
    auto L = receiveKernelList(Fd);
    if (!L)
      R.Failure = L.takeError();
    else
      R.List = std::move(*L);
    return R;
  }
  auto S = receiveCapture(Fd, Path, captureHeader(P), CaptureCompression::None,
                          Ring ? &Ring : nullptr);
  if (!S)
    R.Failure = S.takeError();
  else
    R.Stats = std::move(*S);
  return R;
}

int applicationExit(const ExitStatus &S, const std::string &App) {
  if (S.How == ExitStatus::Kind::Exited)
    return S.Code;
  printError("'" + App + "' was killed by " + describeExit(S));
  return 128 + S.Code;
}

/// A CUDA application that sent nothing never had r3's library loaded by
/// the driver: say whether the driver could not start, or CUDA was not used.
std::string explainNothingSent(const RecordPlan &P) {
  return r3::explainNothingSent(P.Argv.front(),
                                P.Env.Mode == RecordMode::List
                                    ? "nothing was recorded"
                                    : "no capture written");
}

int report(const Received &R, const RecordPlan &P, const std::string &Path,
           const ExitStatus &S) {
  if (R.Failure) {
    std::string Why = R.Failure.message();
    if (P.Source == Backend::Cuda && Why.starts_with(NothingSentMessage))
      Why = explainNothingSent(P);
    if (S.How == ExitStatus::Kind::Signaled &&
        Why.starts_with(StreamEndedEarly))
      Why = "'" + P.Argv.front() + "' was killed by " + describeExit(S) +
            " before recording finished; no capture written";
    else if (!S.succeeded())
      Why += " (the application ended with " + describeExit(S) + ")";
    printError(Why);
    return ExitFailure;
  }
  for (const std::string &W : R.Stats.Warnings)
    printWarning(W);
  if (P.Env.Mode == RecordMode::List)
    printList(R.List, P.Source);
  else
    std::fprintf(stderr,
                 "r3: recorded %s of '%s' into %s (%llu regions, %s stored "
                 "before and after)\n",
                 launchCount(R.Stats.Launches).c_str(),
                 join(R.Stats.LaunchedKernels, "', '").c_str(), Path.c_str(),
                 static_cast<unsigned long long>(R.Stats.Regions),
                 formatBytes(R.Stats.RegionBytes).c_str());
  return applicationExit(S, P.Argv.front());
}

int run(RecordPlan &P) {
  int Fds[2];
  if (Error E = recordStreamPair(Fds))
    return fail(E);
  P.Env.StreamFd = Fds[1];
  // CUDA snapshots send their bytes through shared memory (record/Ring.h).
  wire::BulkRing Ring;
  if (P.Source == Backend::Cuda && P.Env.Mode == RecordMode::Record) {
    // Without one (no memfd here) the bytes go through the socket, slower.
    if (auto R = wire::BulkRing::create(wire::DefaultRingGeometry); !R) {
      printWarning(R.error().message() +
                   "; region bytes go through the socket, more slowly");
    } else {
      Ring = std::move(*R);
      P.Env.RingFd = Ring.fd();
      P.Env.RingSlots = Ring.geometry().Slots;
      P.Env.RingSlotBytes = Ring.geometry().SlotBytes;
    }
  }
  auto Extra = encodeRecordEnv(P.Env);
  if (P.Source == Backend::Cuda)
    Extra.emplace_back("CUDA_INJECTION64_PATH", P.Injection);
  auto Pid = spawnProgram(P.Program, P.Argv, Extra);
  ::close(Fds[1]);
  Ring.closeFd(); // the application holds its own
  if (!Pid) {
    ::close(Fds[0]);
    return fail(Pid.error());
  }
  // Like system(): ^C and ^\ reach the application, which decides.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGQUIT, SIG_IGN);
  std::string Path;
  if (!P.OutputPattern.empty())
    Path = *expandOutputPath(P.OutputPattern, *Pid, envLookup);
  Received R = receive(Fds[0], P, Path, Ring);
  ::close(Fds[0]); // a still-sending application now gets EPIPE, not a hang
  auto Status = waitForProgram(*Pid);
  if (!Status)
    return fail(Status.error());
  return report(R, P, Path, *Status);
}

/// When the application is a parallel launcher (mpirun, srun, ...), its
/// ranks are not children that inherit the record stream: r3 would run the
/// job and see no kernel. The error gives the command line that works, r3
/// record under the launcher with one capture per rank.
Error refuseLauncher(const ParsedArgs &A) {
  static const std::set<std::string> Launchers = {
      "mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra",
      "srun",   "aprun",   "jsrun"};
  const std::vector<std::string> &T = A.Trailing;
  if (T.empty())
    return Error::success(); // planOptions says what is missing
  std::string Name = fs::path(T.front()).filename().string();
  if (!Launchers.count(Name))
    return Error::success();
  // The launcher's own options: "-x VALUE", "--opt=value", "--mca K V", and
  // the flags that take no value.
  static const std::set<std::string> Flags = {
      "--oversubscribe", "--allow-run-as-root", "--report-bindings",
      "--tag-output",    "--timestamp-output",  "--exclusive",
      "-l",              "--label",             "-v",
      "--verbose",       "-q",                  "--quiet"};
  size_t I = 1;
  while (I < T.size() && T[I].size() > 1 && T[I][0] == '-') {
    const std::string &W = T[I++];
    if (W.find('=') != std::string::npos || Flags.count(W))
      continue;
    I += (W == "--mca" || W == "-mca" || W == "--gmca") ? 2 : 1;
  }
  std::vector<std::string> Launch(T.begin(), T.begin() + std::min(I, T.size()));
  std::vector<std::string> App(T.begin() + std::min(I, T.size()), T.end());
  std::string Mine;
  for (const auto &[Option, Values] : A.Values)
    for (const std::string &V : Values) {
      std::string Value = V;
      if (Option == "--output" && V.find("%r") == std::string::npos) {
        fs::path P(V);
        Value = (P.parent_path() /
                 (P.stem().string() + "-%r" + P.extension().string()))
                    .string();
      }
      Mine += " " + Option + (Value.empty() ? "" : " " + Value);
    }
  return makeError(
      "the application is the launcher '", Name,
      "': its ranks do not inherit r3's record stream, so nothing would be "
      "recorded. Run r3 record under the launcher instead, one capture per "
      "rank (%r in -o is the rank):\n  ",
      join(Launch, " "), " r3 record", Mine, " -- ",
      App.empty() ? std::string("APP ARGS") : join(App, " "));
}

int runRecord(const ParsedArgs &A) {
  RecordPlan P;
  if (Error E = refuseLauncher(A))
    return usageError(E.message(), "record");
  if (Error E = planOptions(A, P))
    return usageError(E.message(), "record");
  auto Program = resolveProgram(A.Trailing.front());
  if (!Program)
    return fail(Program.error());
  P.Program = *Program;
  P.Argv = A.Trailing;
  if (Error E = planBackend(A, P))
    return fail(E);
  return run(P);
}
} // namespace

CommandSpec recordCommand() {
  return {
      "record",
      "run an application and record chosen kernel launches into a capture",
      "[--kernel REGEX]... [--launch N | --launches A-B] -o OUT.h5 -- APP "
      "[ARGS...]",
      "The application runs unmodified; its output and exit status pass "
      "through.\n"
      "In -o, %p is replaced by the process id and %r by the MPI rank.",
      {{"--kernel", "-k", Arity::Value, "REGEX",
        "record kernels whose mangled or demangled name matches (repeatable)"},
       {"--launch", "", Arity::Value, "N",
        "record launch N of each selected kernel (counted from 0)"},
       {"--launches", "", Arity::Value, "A-B", "record launches A to B"},
       {"--max-launches", "", Arity::Value, "K", "record at most K launches"},
       {"--skip", "", Arity::Value, "K", "skip the first K matching launches"},
       {"--list", "", Arity::Flag, "",
        "list the kernels launched; record nothing"},
       {"--backend", "", Arity::Value, "cuda|host",
        "which backend to record with"},
       {"--max-bytes", "", Arity::Value, "SIZE",
        "cap on the bytes one launch may snapshot (default 4G)"},
       {"--memory", "", Arity::Value, "reachable|all",
        "CUDA: what a launch records: the allocations its pointers reach "
        "(parameters, globals, pointers stored in what they reach; the "
        "default) or every live allocation"},
       {"--output", "-o", Arity::Value, "OUT.h5", "the capture file to write"}},
      true,
      runRecord};
}

} // namespace r3::cli
