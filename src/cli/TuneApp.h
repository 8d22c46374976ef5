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
  /// OutDir may hold the campaign an earlier `r3 tune --app` wrote: go on
  /// from where it stopped (tune it to its end, then the runs of the
  /// end-to-end measurement still missing).
  bool Resume = false;
  bool Measure = true;   ///< measure the application end to end at the end
  unsigned MeasureRuns = 3;
  std::optional<uint64_t> Budget;
  std::string Workers; ///< --workers, passed on
};

/// The plan of a `r3 tune --app` command line (also what `r3 slurm submit
/// --app` checks before it submits); the error says which option is wrong.
Expected<AppPlan> parseAppPlan(const ParsedArgs &A);

/// --resume: the campaign P.OutDir holds, if it was written for P's
/// command line (else an error naming both); empty when there is none yet.
Expected<std::string> resumedCampaign(const AppPlan &P);

/// Runs `r3 tune --app ... -- APP ARGS`; returns the exit status.
int runTuneApp(const ParsedArgs &A);

/// Runs this r3 with Args; its stderr (and stdout, unless Stdout names a file
/// for it) goes to Log, appended, or is inherited when Log is empty. With
/// Checkpoints (a campaign, r3 tune), a stop signal this process gets is
/// passed on to the child as SIGUSR1.
Expected<ExitStatus> runSelf(const std::vector<std::string> &Args,
                             const std::string &Log,
                             const std::string &Stdout = "",
                             bool Checkpoints = false);

/// The stop signal (SIGUSR1 or SIGTERM: a batch system's warning, which
/// reaches this process alone) that `r3 tune --app` received, or 0. Each
/// step ends before the stop is obeyed; the campaign itself checkpoints.
int appStopSignal();

/// Exit 75 (checkpointed, as r3 tune does) with a message saying what
/// --resume will redo.
int stoppedBefore(const AppPlan &P, const std::string &Step);

/// Runs the application P.MeasureRuns times with its own kernels and as many
/// with the tuned ones, alternating, stores the runs in the history and
/// prints the measured speedup beside the predicted one. Runs the history
/// already holds count: a resumed measurement runs only the missing ones.
int measureApp(const AppPlan &P);

} // namespace r3::cli
