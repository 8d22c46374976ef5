// The r3 binary: dispatches the first word to a row of the command table.
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "r3/BuildConfig.h"
#include "r3/Version.h"
#include "campaign/Worker.h"
#ifdef R3_HAVE_CUDA
#include "compile/cuda/CompileServer.h"
#endif
#include "replay/Server.h"
#include "support/StringUtil.h"

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

using namespace r3::cli;

namespace {
int runCommand(const CommandSpec &C, const std::vector<std::string> &Words) {
  auto Args = parseArgs(C, Words);
  if (!Args)
    return usageError(Args.error().message(), C.Name);
  if (Args->has("--help")) {
    printCommandHelp(C);
    return ExitSuccess;
  }
  if (!C.Run) {
    printError("'r3 " + std::string(C.Name) + "' is not built yet in r3 " +
               r3::Version + " (see 'r3 help " + std::string(C.Name) +
               "' for what it will do)");
    return ExitFailure;
  }
  return C.Run(*Args);
}

/// `r3 __replay-server IN OUT`: the replay server child that ServerClient
/// spawns, talking over the inherited descriptors. Internal: not in the
/// command table, not in the help.
int runReplayServerCommand(const std::vector<std::string> &Words) {
  auto In = Words.size() == 3 ? r3::parseUnsigned(Words[1]) : std::nullopt;
  auto Out = Words.size() == 3 ? r3::parseUnsigned(Words[2]) : std::nullopt;
  if (!In || !Out) {
    printError("__replay-server: expected the descriptors IN OUT (this "
               "command is started by r3 itself)");
    return ExitUsage;
  }
  if (r3::Error E =
          r3::runReplayServer(static_cast<int>(*In), static_cast<int>(*Out)))
    return fail(E);
  return ExitSuccess;
}

/// `r3 __tune-worker IN OUT [COMPILERS]`: a campaign worker that `r3 tune`
/// spawns. Internal, like __replay-server.
int runTuneWorkerCommand(const std::vector<std::string> &Words) {
  bool Shape = Words.size() == 3 || Words.size() == 4;
  auto In = Shape ? r3::parseUnsigned(Words[1]) : std::nullopt;
  auto Out = Shape ? r3::parseUnsigned(Words[2]) : std::nullopt;
  auto Compilers = Words.size() == 4 ? r3::parseUnsigned(Words[3])
                                     : std::optional<uint64_t>(1);
  if (!In || !Out || !Compilers || *Compilers < 1 || *Compilers > 64) {
    printError("__tune-worker: expected the descriptors IN OUT and the "
               "number of compile threads (this command is started by r3 "
               "tune)");
    return ExitUsage;
  }
  if (r3::Error E =
          r3::runTuneWorker(static_cast<int>(*In), static_cast<int>(*Out),
                            static_cast<unsigned>(*Compilers)))
    return fail(E);
  return ExitSuccess;
}
/// `r3 __compile-server IN OUT`: a campaign worker's compile server
/// (compile/cuda/CompileServer.h). Internal, like __replay-server.
int runCompileServerCommand(const std::vector<std::string> &Words) {
#ifdef R3_HAVE_CUDA
  auto In = Words.size() == 3 ? r3::parseUnsigned(Words[1]) : std::nullopt;
  auto Out = Words.size() == 3 ? r3::parseUnsigned(Words[2]) : std::nullopt;
  if (!In || !Out) {
    printError("__compile-server: expected the descriptors IN OUT (this "
               "command is started by a campaign's worker)");
    return ExitUsage;
  }
  if (r3::Error E = r3::runCompileServer(static_cast<int>(*In),
                                         static_cast<int>(*Out)))
    return fail(E);
  return ExitSuccess;
#else
  (void)Words;
  printError("__compile-server: this r3 was built without the CUDA backend");
  return ExitFailure;
#endif
}
/// `r3 --version`: the version, then what this build holds, one
/// "key: value" line each, for people and for scripts (the CUDA recipes read
/// their default architecture here).
int printVersion() {
  std::printf("r3 %s\n", r3::Version);
  std::printf("backends: %s\n", BuiltBackends);
  std::printf("mpi: %s\n", BuiltMpi);
  if (*DefaultCudaArch)
    std::printf("default cuda arch: %s\n", DefaultCudaArch);
  return ExitSuccess;
}
} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Words(Argv + 1, Argv + Argc);
  if (Words.empty()) {
    printOverview(stderr);
    return ExitUsage;
  }
  const std::string First = Words.front();
  // r3's helper processes leave stopping to the process that started them:
  // a batch system signals every process of a job step (Slurm's USR1
  // before the time limit reaches workers and servers too), and one that
  // died of it would lose the evaluation in flight instead of finishing it.
  if (First.starts_with("__"))
    std::signal(SIGUSR1, SIG_IGN);
  if (First == "__replay-server")
    return runReplayServerCommand(Words);
  if (First == "__tune-worker")
    return runTuneWorkerCommand(Words);
  if (First == "__compile-server")
    return runCompileServerCommand(Words);
  if (First == "--version" || First == "-V")
    return printVersion();
  if (First == "--help" || First == "-h") {
    printOverview(stdout);
    return ExitSuccess;
  }
  if (First.starts_with("-"))
    return usageError(
        "unknown option '" + First +
            "' (options follow the command: r3 COMMAND [options])",
        "");
  const CommandSpec *C = findCommand(First);
  if (!C)
    return usageError(unknownCommandMessage(First), "");
  Words.erase(Words.begin());
  return runCommand(*C, Words);
}
