// The end of `r3 tune --app`: the application run end to end, with its own
// kernels and with the tuned ones, in alternating pairs whose order also
// alternates, so that drift in the machine (clocks, other jobs) and the
// advantage of running first or second fall on both arms alike. Both arms run
// under `r3 run
// --use` (the original arm with --keep-original), so that they carry the
// same machinery and differ only in the kernels' code. Each run is stored in
// the history (app_runs), and the measured speedup is printed beside the one
// Amdahl predicts from the kernels' shares (report/EndToEnd.h).
#include "cli/Diagnostics.h"
#include "cli/Report.h"
#include "cli/TuneApp.h"
#include "support/FileUtil.h"
#include "support/Machine.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>

namespace r3::cli {

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

/// One run of the application under r3 run, as the history stores it.
Expected<AppRunRow> runOnce(const AppPlan &P, const std::string &Variant,
                            unsigned Index) {
  fs::path Dir = P.OutDir;
  std::string Summary =
      (Dir / "measure" / (Variant + "-" + std::to_string(Index) + ".json"))
          .string();
  std::string Log = (Dir / "measure.log").string();
  std::vector<std::string> Args = {"run", "--use",
                                   (Dir / "history.db").string()};
  if (Variant == "original")
    Args.push_back("--keep-original");
  Args.insert(Args.end(), {"--json", Summary, "--"});
  Args.insert(Args.end(), P.Run.Argv.begin(), P.Run.Argv.end());
  auto S = runSelf(Args, Log);
  if (!S)
    return S.takeError();
  auto Text = readWholeFile(Summary, "r3 run summary");
  json J = Text ? json::parse(*Text, nullptr, false) : json();
  if (!J.is_object() || !J["wall_s"].is_number())
    return makeError("the application's ", Variant, " run ", Index,
                     " under r3 run --use left no summary (", describeExit(*S),
                     "); see ", Log);
  AppRunRow R;
  R.At = nowSeconds();
  R.Variant = Variant;
  R.WallSeconds = J["wall_s"].get<double>();
  R.ExitCode = J.value("exit_code", -1);
  R.CommandJson = json(P.Run.Argv).dump();
  if (R.ExitCode != 0)
    return makeError("the application failed in its ", Variant, " run ", Index,
                     " under r3 run --use (", J.value("exit", std::string("?")),
                     "); see ", Log);
  return R;
}

/// The measured runs, stored one by one so that a stop loses none. One
/// unstored run first warms the file cache and the GPU; then each pair runs
/// in the order the pair before did not (original-tuned, tuned-original, ...),
/// so that whatever favours the first or the second run of a pair falls on
/// both arms alike. The runs the history already holds (Done, in that
/// order) are not run again. Stopped by a signal: false.
Expected<bool> measureRuns(const AppPlan &P, History &H, size_t Done) {
  size_t Total = 2 * size_t(P.MeasureRuns);
  if (Done >= Total)
    return true;
  std::error_code Ec;
  fs::create_directories(fs::path(P.OutDir) / "measure", Ec);
  R3_TRY(runOnce(P, "original", 0).takeError().context("the warm-up run"));
  for (size_t N = Done; N < Total; ++N) {
    if (appStopSignal())
      return false;
    unsigned I = static_cast<unsigned>(N / 2);
    auto Order = I % 2 ? std::array{"tuned", "original"}
                       : std::array{"original", "tuned"};
    const char *Variant = Order[N % 2];
    auto R = runOnce(P, Variant, I);
    if (!R)
      return R.takeError();
    R3_TRY(H.addAppRun(*R).takeError());
    std::fprintf(stderr, "r3: end to end, run %u of %u (%s): %.3f s\n", I + 1,
                 P.MeasureRuns, Variant, R->WallSeconds);
  }
  return true;
}
} // namespace

int measureApp(const AppPlan &P) {
  std::string Db = (fs::path(P.OutDir) / "history.db").string();
  auto H = History::open(Db, HistoryMode::Open);
  if (!H)
    return fail(H.error());
  std::vector<AppRunRow> Stored;
  if (Error E = moveInto((*H)->appRuns(), Stored))
    return fail(E);
  if (!Stored.empty())
    std::fprintf(stderr, "r3: the history holds %zu end-to-end run%s already\n",
                 Stored.size(), Stored.size() == 1 ? "" : "s");
  bool Complete = false;
  if (Error E = moveInto(measureRuns(P, **H, Stored.size()), Complete))
    return fail(E);
  if (!Complete)
    return stoppedBefore(P, "the end-to-end runs were complete");
  std::vector<EvaluatedCandidate> Es;
  std::vector<KernelSummary> Ks;
  if (Error E = moveInto((*H)->evaluations(), Es))
    return fail(E);
  if (Error E = moveInto(summarizeKernels(**H, Es), Ks))
    return fail(E);
  auto E = endToEndOf(**H, Ks);
  if (!E)
    return fail(E.error());
  std::printf("end to end: %s\n", report::describeEndToEnd(*E).c_str());
  return ExitSuccess;
}

} // namespace r3::cli
