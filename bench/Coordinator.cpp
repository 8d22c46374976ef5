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
#include "campaign/Engine.h"
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

int fail(const std::string &Why) {
  std::fprintf(stderr, "r3-bench-coordinator: %s\n", Why.c_str());
  return 1;
}
} // namespace

int main(int Argc, char **Argv) {
  unsigned Evaluations = 5000;
  std::vector<unsigned> Workers = {1, 8, 64};
  std::string Strategy = "random";
  fs::path Dir = fs::temp_directory_path() /
                 ("r3-bench-coordinator-" + std::to_string(::getpid()));
  for (int I = 1; I + 1 < Argc; I += 2) {
    if (!std::strcmp(Argv[I], "--evaluations"))
      Evaluations = static_cast<unsigned>(std::atoi(Argv[I + 1]));
    else if (!std::strcmp(Argv[I], "--strategy"))
      Strategy = Argv[I + 1];
    else if (!std::strcmp(Argv[I], "--dir"))
      Dir = Argv[I + 1];
    else if (!std::strcmp(Argv[I], "--workers")) {
      Workers.clear();
      for (const std::string &W : split(Argv[I + 1], ','))
        Workers.push_back(static_cast<unsigned>(std::atoi(W.c_str())));
    } else
      return fail(std::string("unknown option ") + Argv[I]);
  }
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
