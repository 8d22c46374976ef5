// r3-bench-coordinator: how many results a campaign's coordinator commits
// per second when its workers answer at once (in-process fake workers,
// tests/tools/FakeLinks.h), so that the loop, the search's bookkeeping and
// the history's commits are all that is measured. A CUDA campaign of the
// recorded cubin's launch level (8192 points) on a synthetic capture, at
// several worker counts, each on a fresh history.
//
//   r3-bench-coordinator [--evaluations N] [--workers 1,8,64]
//                        [--strategy random|grid|tpe|bo] [--dir DIR]
//
// Prints a table: workers, how points were proposed, results, seconds,
// results per second. With a model-based strategy (tpe, bo), whose every
// proposal fits a model, each worker count runs twice: proposals batched to
// the idle job slots (what r3 does) and one point a proposal, with the ratio
// of the two throughputs. Not a test: the figures depend on the disk (each
// batch of results is a synchronous commit) and the machine.
#include "FakeLinks.h"
#include "SyntheticCapture.h"
#include "campaign/Campaign.h"
#include "campaign/EventLoop.h"
#include "support/StringUtil.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace r3;
namespace fs = std::filesystem;

namespace {
struct Quiet : TuneObserver {
  void progress(const TuneProgress &) override {}
  void note(const std::string &) override {}
};

std::string campaignText(unsigned Evaluations, const std::string &Strategy) {
  std::string Xs;
  for (int X = 1; X <= 1024; ++X)
    Xs += (X > 1 ? ", " : "") + std::to_string(X);
  return "database = \"h.db\"\nbackend = \"cuda\"\n[[kernel]]\n"
         "name = \"jacobi2d\"\ncapture = \"k.h5\"\n[budget]\nevaluations = " +
         std::to_string(Evaluations) +
         "\n[compiler]\nstrategy = \"" + Strategy + "\"\n[launch]\nblock_x = [" + Xs +
         "]\nblock_y = [1, 2, 3, 4, 5, 6, 7, 8]\n[evaluation]\n"
         "determinism_runs = 0\nbaseline_interval = 1000000\n";
}

const char *Usage =
    "usage: r3-bench-coordinator [--evaluations N] [--workers 1,8,64]\n"
    "                            [--strategy random|grid|tpe|bo] [--dir DIR]\n"
    "\n"
    "Commits per second of a campaign's coordinator whose workers answer at\n"
    "once (in-process fakes): a launch-level CUDA campaign of 8192 points on a\n"
    "synthetic capture, at each worker count, on a fresh history in a new\n"
    "folder under DIR (default: the temporary directory), removed after.\n"
    "With tpe or bo each count runs twice, proposals batched to the idle job\n"
    "slots and one point a proposal, and the table gives their ratio.\n";

int fail(const std::string &Why) {
  std::fprintf(stderr, "r3-bench-coordinator: %s\n", Why.c_str());
  return 1;
}
} // namespace

int main(int Argc, char **Argv) {
  unsigned Evaluations = 5000;
  std::vector<unsigned> Workers = {1, 8, 64};
  std::string Strategy = "random";
  fs::path Parent = fs::temp_directory_path();
  auto Count = [](const std::string &Option, const std::string &Text,
                  unsigned &Out) -> bool {
    char *End = nullptr;
    unsigned long V = std::strtoul(Text.c_str(), &End, 10);
    if (Text.empty() || *End || V == 0 || V > 1000000) {
      std::fprintf(stderr,
                   "r3-bench-coordinator: %s wants a count from 1 to "
                   "1000000, not '%s'\n",
                   Option.c_str(), Text.c_str());
      return false;
    }
    Out = static_cast<unsigned>(V);
    return true;
  };
  for (int I = 1; I < Argc; I += 2) {
    std::string Option = Argv[I];
    if (Option == "--help" || Option == "-h") {
      std::printf("%s", Usage);
      return 0;
    }
    if (I + 1 >= Argc)
      return fail(Option + " wants a value (see --help)");
    std::string Value = Argv[I + 1];
    if (Option == "--evaluations") {
      if (!Count(Option, Value, Evaluations))
        return 1;
    } else if (Option == "--strategy") {
      if (Value != "random" && Value != "grid" && Value != "tpe" &&
          Value != "bo")
        return fail("--strategy is one of random, grid, tpe, bo, not '" +
                    Value + "'");
      Strategy = Value;
    } else if (Option == "--dir") {
      Parent = Value;
    } else if (Option == "--workers") {
      Workers.clear();
      for (const std::string &W : split(Value, ','))
        if (!Count(Option, W, Workers.emplace_back()))
          return 1;
    } else
      return fail("unknown option " + Option + " (see --help)");
  }
  // A folder of the bench's own under Parent: it is removed between runs.
  fs::path Dir =
      Parent / ("r3-bench-coordinator-" + std::to_string(::getpid()));
  bool Models = Strategy == "tpe" || Strategy == "bo";
  std::printf("| workers | proposals | results | seconds | results/s |%s\n"
              "|---|---|---|---|---|%s\n",
              Models ? " batched / one each |" : "", Models ? "---|" : "");
  for (unsigned W : Workers) {
    double OneEach = 0;
    for (bool Batch : Models ? std::vector<bool>{false, true}
                             : std::vector<bool>{true}) {
      fs::remove_all(Dir);
      fs::create_directories(Dir);
      if (Error E = testing::writeCudaKernelCapture(
              (Dir / "k.h5").string(),
              {"_Z8jacobi2dPKfPfii", "32,24,1", "16,16,1",
               {"ptr:0x7f0000200000", "ptr:0x7f0000400000", "i32:512",
                "i32:384"}}))
        return fail(E.message());
      auto C = parseCampaign(campaignText(Evaluations, Strategy),
                             (Dir / "campaign.toml").string());
      if (!C)
        return fail(C.error().message());
      TuneOptions O;
      O.Workers = W;
      O.BatchProposals = Batch;
      O.Links = testing::fakeWorkerLinks(
          {}, std::make_shared<testing::FakeWorkerStats>());
      Quiet Obs;
      auto T = std::chrono::steady_clock::now();
      auto R = runCampaign(*C, O, Obs);
      double S = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - T)
                     .count();
      if (!R)
        return fail(R.error().message());
      double Rate = R->Final.Done / S;
      std::printf("| %u | %s | %llu | %.2f | %.0f |", W,
                  Batch ? "batched" : "one each",
                  static_cast<unsigned long long>(R->Final.Done), S, Rate);
      if (Models && Batch)
        std::printf(" %.2f |", Rate / OneEach);
      else if (Models)
        std::printf(" |");
      std::printf("\n");
      std::fflush(stdout);
      OneEach = Rate;
    }
  }
  fs::remove_all(Dir);
  return 0;
}
