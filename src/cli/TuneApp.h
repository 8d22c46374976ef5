// `r3 tune --app`: an application's command line in, a tuned application and
// its measured end-to-end speedup out (TuneApp.cpp has the steps;
// TuneAppMeasure.cpp the end-to-end measurement).
#pragma once

#include "cli/Command.h"
#include "record/Profile.h"

#include <optional>
#include <string>
#include <vector>

namespace r3::cli {

/// A checked `r3 tune --app` command line.
struct AppPlan {
  ProfileRequest Run;    ///< the application and its backend
  double Cover = 0.9;    ///< the share of the kernels' time to tune
  std::string Database;  ///< --compile-commands (absolute), or empty
  std::string SourceDir; ///< where kernels' definitions are looked for
  std::string OutDir;    ///< capture, campaign, history, logs
  bool DryRun = false;   ///< stop once the campaign is written
  bool Measure = true;   ///< measure the application end to end at the end
  unsigned MeasureRuns = 3;
  std::optional<uint64_t> Budget;
  std::string Workers; ///< --workers, passed on
};

/// Runs `r3 tune --app ... -- APP ARGS`; returns the exit status.
int runTuneApp(const ParsedArgs &A);

/// Runs this r3 with Args; its stderr (and stdout, unless Stdout names a file
/// for it) goes to Log, appended, or is inherited when Log is empty.
Expected<ExitStatus> runSelf(const std::vector<std::string> &Args,
                             const std::string &Log,
                             const std::string &Stdout = "");

/// Runs the application P.MeasureRuns times with its own kernels and as many
/// with the tuned ones, alternating, stores the runs in the history and
/// prints the measured speedup beside the predicted one.
int measureApp(const AppPlan &P);

} // namespace r3::cli
