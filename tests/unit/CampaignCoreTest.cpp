// The campaign core (the coordinator's loop, its search state, the history)
// against in-process fake workers (tests/tools/FakeLinks.h): a CUDA campaign
// of the recorded cubin's launch level on a synthetic capture, without
// worker processes, replay servers or a GPU; and the search state rebuilt
// from a history beside r3 report's summary of it (src/report).
#include "Catch.h"

#include "FakeLinks.h"
#include "SyntheticCapture.h"
#include "campaign/Campaign.h"
#include "campaign/EventLoop.h"
#include "campaign/SearchState.h"
#include "campaign/Worker.h"
#include "history/History.h"
#include "report/Summary.h"

#include <sqlite3.h>

#include <cstring>
#include <filesystem>
#include <set>
#include <unistd.h>

using namespace r3;

namespace {
namespace fs = std::filesystem;

struct Quiet : TuneObserver {
  void progress(const TuneProgress &) override {}
  void note(const std::string &) override {}
};

/// A folder with a capture of jacobi2d (16 x 16 blocks) and a campaign over
/// block_x x block_y (15 launch points), removed at the end.
struct Setup {
  fs::path Dir;
  explicit Setup(const std::string &Name) {
    Dir = fs::temp_directory_path() /
          ("r3-core-" + std::to_string(::getpid()) + "-" + Name);
    fs::remove_all(Dir);
    fs::create_directories(Dir);
    REQUIRE_FALSE(testing::writeCudaKernelCapture(
        (Dir / "k.h5").string(),
        {"_Z8jacobi2dPKfPfii", "32,24,1", "16,16,1",
         {"ptr:0x7f0000200000", "ptr:0x7f0000400000", "i32:512", "i32:384"}}));
  }
  ~Setup() { fs::remove_all(Dir); }
  Campaign campaign(unsigned Budget) const {
    std::string Text = "database = \"h.db\"\nbackend = \"cuda\"\n"
                       "[[kernel]]\nname = \"jacobi2d\"\ncapture = \"k.h5\"\n"
                       "[budget]\nevaluations = " +
                       std::to_string(Budget) +
                       "\n[launch]\nblock_x = [16, 32, 64, 128, 256]\n"
                       "block_y = [1, 2, 4]\n[evaluation]\n"
                       "determinism_runs = 0\nbaseline_interval = 4\n";
    auto C = parseCampaign(Text, (Dir / "campaign.toml").string());
    INFO((C ? std::string() : C.error().message()));
    REQUIRE(C);
    return std::move(*C);
  }
  std::unique_ptr<History> history() const {
    auto H = History::open((Dir / "h.db").string(), HistoryMode::ReadOnly);
    REQUIRE(H);
    return std::move(*H);
  }
};

TuneSummary run(const Campaign &C, testing::FakeWorkerScript S,
                std::shared_ptr<testing::FakeWorkerStats> Stats,
                unsigned Workers = 3) {
  TuneOptions O;
  O.Workers = Workers;
  O.Links = testing::fakeWorkerLinks(std::move(S), Stats);
  Quiet Obs;
  auto R = runCampaign(C, O, Obs);
  INFO((R ? std::string() : R.error().message()));
  REQUIRE(R);
  return *R;
}

std::set<std::string> identities(History &H) {
  auto Cands = H.candidates();
  REQUIRE(Cands);
  std::set<std::string> Ids;
  for (const CandidateRow &C : *Cands)
    CHECK(Ids.insert(C.Identity).second);
  return Ids;
}

std::vector<EvaluatedCandidate> evaluations(History &H) {
  auto E = H.evaluations();
  REQUIRE(E);
  return std::move(*E);
}
} // namespace

TEST_CASE("campaign core: a launch-level campaign finds the fastest block") {
  Setup S("best");
  auto Stats = std::make_shared<testing::FakeWorkerStats>();
  TuneSummary R = run(S.campaign(12), {}, Stats);
  CHECK(R.Outcome == TuneOutcome::Complete);
  auto H = S.history();
  auto Evals = evaluations(*H);
  CHECK(Evals.size() == 12);
  CHECK(identities(*H).size() == 12);
  // The baseline was re-measured on the workers, beside the candidates.
  CHECK(H->baselines()->size() >= 2);
  // Among the 15 points the fake runs 128 threads fastest (1 ms): with 12
  // evaluations of BO the best has 128 threads or is within 10% of it.
  double Best = 1e9;
  for (const EvaluatedCandidate &E : Evals)
    if (E.Evaluation.Result.Verified)
      Best = std::min(Best, E.Evaluation.MedianMs);
  CHECK(Best <= 1.1);
}

TEST_CASE("campaign core: a resume continues where the history ends") {
  Setup S("resume");
  auto Stats = std::make_shared<testing::FakeWorkerStats>();
  run(S.campaign(6), {}, Stats);
  CHECK(evaluations(*S.history()).size() == 6);
  TuneSummary R = run(S.campaign(12), {}, Stats);
  CHECK(R.Resumed);
  auto H = S.history();
  CHECK(evaluations(*H).size() == 12);
  CHECK(identities(*H).size() == 12);
}

TEST_CASE("campaign core: a lost worker's jobs go to the others") {
  Setup S("lost");
  auto Stats = std::make_shared<testing::FakeWorkerStats>();
  testing::FakeWorkerScript Script;
  Script.LoseAfter = 4;
  TuneSummary R = run(S.campaign(12), Script, Stats);
  CHECK(R.Outcome == TuneOutcome::Complete);
  CHECK(Stats->Lost == 1);
  auto H = S.history();
  CHECK(evaluations(*H).size() == 12);
  CHECK(identities(*H).size() == 12);
}

TEST_CASE("campaign core: failures are results, counted by kind") {
  Setup S("failures");
  auto Stats = std::make_shared<testing::FakeWorkerStats>();
  testing::FakeWorkerScript Script;
  Script.Answer = [](const WorkerJob &J) {
    if (J.Work.Block && (*J.Work.Block)[0] == 16)
      return failedResult(FailureKind::Crashed, "crashed: fake");
    if (J.Work.Block && (*J.Work.Block)[0] == 256)
      return failedResult(FailureKind::InvalidLaunch, "fake: too many");
    return testing::fakeAnswer(J);
  };
  TuneSummary R = run(S.campaign(16), Script, Stats, 2);
  CHECK(R.Outcome == TuneOutcome::Complete); // the space is exhausted
  std::map<std::string, int> Kinds;
  auto H = S.history();
  for (const EvaluatedCandidate &E : evaluations(*H))
    if (!E.Evaluation.Result.Verified)
      ++Kinds[failureKindName(E.Evaluation.Result.Failure)];
  CHECK(Kinds["crashed"] == 3);
  CHECK(Kinds["invalid_launch"] == 3);
}

TEST_CASE("campaign core: batches for idle slots cover the space, none lost") {
  // 8 workers with 2 slots each ask for more points in their first round
  // than the launch space holds, while baseline re-measures take some of
  // the slots: proposals left over at the end of a round are given back to
  // the strategy, so every point is still evaluated exactly once.
  Setup S("batches");
  auto Stats = std::make_shared<testing::FakeWorkerStats>();
  TuneSummary R = run(S.campaign(40), {}, Stats, 8);
  CHECK(R.Outcome == TuneOutcome::Complete); // the space is exhausted
  auto H = S.history();
  std::set<std::string> Points;
  for (const EvaluatedCandidate &E : evaluations(*H))
    if (E.Candidate.Level == "launch")
      CHECK(Points.insert(E.Candidate.Point).second);
  CHECK(Points.size() == 15);
  CHECK(identities(*H).size() == 16); // and the recorded code's baseline
}

TEST_CASE("campaign core: devices of different speeds are ranked by speedup "
          "over their own baseline") {
  // Worker 0's device is three times slower than workers 1 and 2's, in the
  // baseline as in every candidate: the best's speedup is 1.1 (the recorded
  // 256 threads at 1.1 ms against 128 threads at 1.0 ms) whichever device
  // ran it. Raw times would pair the slow device's baseline (the first
  // measured, the reference) with the fast devices' times: a speedup near
  // 3. The history keeps the raw times.
  Setup S("devices");
  auto Stats = std::make_shared<testing::FakeWorkerStats>();
  testing::FakeWorkerScript Script;
  Script.Slowdown = {3, 1, 1};
  TuneSummary R = run(S.campaign(40), Script, Stats, 3);
  CHECK(R.Outcome == TuneOutcome::Complete); // the space is exhausted
  REQUIRE(R.Final.Kernels.size() == 1);
  const KernelProgress &K = R.Final.Kernels[0];
  REQUIRE(K.BaselineMs);
  REQUIRE(K.BestMs);
  CHECK(*K.BaselineMs / *K.BestMs == Approx(1.1).epsilon(0.01));
  auto H = S.history();
  std::set<std::string> Devices;
  double Slowest = 0;
  for (const EvaluatedCandidate &E : evaluations(*H)) {
    Devices.insert(E.Evaluation.Device);
    Slowest = std::max(Slowest, E.Evaluation.MedianMs);
  }
  CHECK(Devices.size() == 3);
  CHECK(Slowest > 3.0); // raw: a slow device's time of a slow point
}

namespace {
/// Changes the history at Path by SQL, outside History.
void rawSql(const fs::path &Path, const std::string &Sql) {
  sqlite3 *Db = nullptr;
  REQUIRE(sqlite3_open(Path.c_str(), &Db) == SQLITE_OK);
  int Rc = sqlite3_exec(Db, Sql.c_str(), nullptr, nullptr, nullptr);
  INFO(sqlite3_errmsg(Db));
  sqlite3_close(Db);
  REQUIRE(Rc == SQLITE_OK);
}

/// What the campaign's search state makes of the history when it resumes
/// from it, beside what r3 report makes of it: the same baseline, best and
/// speedup.
void checkCampaignAgreesWithReport(const Setup &S, const Campaign &C) {
  auto H = History::open((S.Dir / "h.db").string(), HistoryMode::Open);
  REQUIRE(H);
  SearchState State(C, **H, 3);
  auto Loaded = State.load();
  INFO((Loaded ? std::string() : Loaded.error().message()));
  REQUIRE(Loaded);
  TuneProgress P = State.progress();
  REQUIRE(P.Kernels.size() == 1);
  auto Evaluations = (*H)->evaluations();
  REQUIRE(Evaluations);
  auto Summaries = report::summarizeKernels(**H, *Evaluations);
  REQUIRE(Summaries);
  REQUIRE(Summaries->size() == 1);
  const report::KernelSummary &K = Summaries->front();
  REQUIRE(K.Baseline);
  REQUIRE(K.Best);
  REQUIRE(P.Kernels[0].BaselineMs);
  REQUIRE(P.Kernels[0].BestMs);
  CHECK(*P.Kernels[0].BaselineMs == K.Baseline->Value);
  CHECK(*P.Kernels[0].BestMs == K.Best->Evaluation.MedianMs);
  CHECK(*P.Kernels[0].BaselineMs / *P.Kernels[0].BestMs == K.speedup()->Value);
}
} // namespace

TEST_CASE("campaign core: the campaign and r3 report agree on a history of "
          "several devices",
          "[report]") {
  // Three devices, the first three times slower. Then one fast device's
  // baselines are dropped and the slow device's row made the first (the
  // search's reference): that device's times cannot be taken side by side,
  // so the report leaves them out, and so does the campaign (its search
  // used to compare them with the slow device's baseline: a speedup near 3
  // where the report shows 1.1).
  Setup S("agree-devices");
  auto Stats = std::make_shared<testing::FakeWorkerStats>();
  testing::FakeWorkerScript Script;
  Script.Slowdown = {3, 1, 1};
  Campaign C = S.campaign(40);
  TuneSummary R = run(C, Script, Stats, 3);
  REQUIRE(R.Final.Kernels.size() == 1);
  checkCampaignAgreesWithReport(S, C);
  // The live state at the end agrees with its own resume.
  const KernelProgress &Live = R.Final.Kernels[0];
  REQUIRE(Live.BaselineMs);
  REQUIRE(Live.BestMs);
  CHECK(*Live.BaselineMs / *Live.BestMs == Approx(1.1).epsilon(0.01));

  rawSql(S.Dir / "h.db",
         "DELETE FROM baselines WHERE device = 'fake device 2';"
         "DELETE FROM baselines WHERE id < (SELECT min(id) FROM baselines "
         "WHERE device = 'fake device 0');");
  auto H = S.history();
  auto Es = H->evaluations();
  REQUIRE(Es);
  auto Summaries = report::summarizeKernels(*H, *Es);
  REQUIRE(Summaries);
  // Whichever device ran the fastest point: not the 3x that comparing the
  // dropped device's times with the slow device's baseline gives.
  REQUIRE(Summaries->front().speedup());
  CHECK(Summaries->front().speedup()->Value < 1.2);
  checkCampaignAgreesWithReport(S, C);
}

TEST_CASE("campaign core: the campaign and r3 report agree on a history "
          "whose baselines are only evaluations",
          "[report]") {
  // Histories of older r3 versions kept no baselines row for the
  // "baseline"-level evaluation: the report takes the baseline from that
  // evaluation, and so does the campaign when it resumes (it used to have
  // no baseline until a worker measured one again).
  Setup S("agree-evaluations");
  auto Stats = std::make_shared<testing::FakeWorkerStats>();
  testing::FakeWorkerScript Script;
  Script.Slowdown = {1, 1.5};
  Campaign C = S.campaign(12);
  run(C, Script, Stats, 2);
  rawSql(S.Dir / "h.db", "DELETE FROM baselines");
  checkCampaignAgreesWithReport(S, C);
}

TEST_CASE("prompt facts: a launch against the GPU's limits", "[campaign]") {
  KernelInfo K;
  K.Params = {{0, 8}, {8, 8}, {16, 4}};
  LaunchInfo L;
  L.Grid = {264, 1, 1};
  L.Block = {256, 1, 1};
  L.DurationNs = 1000000; // 1 ms
  uint64_t In = 0x1000, Out = 0x9000;
  L.Params.resize(20);
  std::memcpy(L.Params.data(), &In, 8);
  std::memcpy(L.Params.data() + 8, &Out, 8);
  L.Regions = {{0x1000, 2000000000, RegionKind::Device, "", false},
               {0x9000 + 0x80000000ull, 4096, RegionKind::Device, "", true},
               {0x9000, 1000000000, RegionKind::Device, "", true}};
  DeviceInfo D;
  D.Name = "NVIDIA H100 80GB HBM3";
  std::string F = limitsFacts(K, L, D);
  INFO(F);
  CHECK(F.find("grid 264x1x1, block 256x1x1, 1 ms in the application") !=
        std::string::npos);
  // Regions 0 and 2 are reached (3 GB, 1 GB of it written); region 1 is
  // not: 4 GB in 1 ms is 4000 GB/s, 119% of the H100's 3.35 TB/s.
  CHECK(F.find("reach: 2.8 GiB (953.7 MiB of it written") != std::string::npos);
  CHECK(F.find("4000 GB/s, 119% of this GPU's peak 3.35 TB/s") !=
        std::string::npos);
  D.Name = "Some GPU";
  CHECK(limitsFacts(K, L, D).find("peak") == std::string::npos);
  L.Regions.clear();
  CHECK(limitsFacts(K, L, D).find("r3 recorded none") != std::string::npos);
}

TEST_CASE("prompt facts: occupancy from the compile report", "[campaign]") {
  // 32 registers, 256 threads: 8 blocks by threads and by registers.
  CHECK(occupancyText(32, 0, 256, 9) ==
        "at most 8 blocks of 256 threads an SM (100% occupancy, limited by "
        "threads)");
  // 128 registers: 4096 a warp, 32768 a block of 8 warps: 2 blocks.
  CHECK(occupancyText(128, 0, 256, 9) ==
        "at most 2 blocks of 256 threads an SM (25% occupancy, limited by "
        "registers)");
  // 100 KiB of shared memory a block: 2 blocks of 228 KiB.
  CHECK(occupancyText(32, 100 * 1024, 256, 9) ==
        "at most 2 blocks of 256 threads an SM (25% occupancy, limited by "
        "shared memory)");
  CHECK(occupancyText(32, 0, 256, 0).empty()); // the host backend
}

TEST_CASE("a CUDA worker compiles on every core but its runner's, up to 12",
          "[campaign]") {
  CHECK(compileThreads(0) == 1);
  CHECK(compileThreads(1) == 1);
  CHECK(compileThreads(2) == 1);
  CHECK(compileThreads(5) == 4);
  CHECK(compileThreads(13) == 12);
  CHECK(compileThreads(16) == 12); // a 16-core node with one GPU
  CHECK(compileThreads(128) == 12);
}
