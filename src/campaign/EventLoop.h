// The event loop of `r3 tune` (EventLoop.cpp): keeps the workers (Transport.h:
// processes over pipes, or MPI ranks) fed with the candidates the search
// state (SearchState.h) makes, and commits every result to the history as
// it arrives. This header is the campaign's public face: what the command
// passes in (TuneOptions), what it is told (TuneObserver) and what it gets
// back (TuneSummary). For each
// kernel: the recorded original is the baseline (re-measured on each worker
// every few evaluations, so speedups are ratios taken side by side); source
// variants come from the outer loop (MAP-Elites with islands) and each gets
// an inner-loop budget of compiler/launch settings proposed by its own
// strategy (Bayesian optimization by default). The history is the
// checkpoint: a campaign killed at any instant resumes from it, re-queuing
// what was in flight, and never evaluates a candidate twice.
#pragma once

#include "campaign/Campaign.h"
#include "campaign/Transport.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace r3 {

struct TuneOptions {
  unsigned Workers = 0;      ///< 0: the campaign's, else the default
  double GraceSeconds = 30;  ///< how long a stop waits for in-flight work
  unsigned QueueDepth = 2;   ///< jobs queued per worker
  /// Each dispatch round asks an inner strategy for as many points as
  /// there are idle job slots, at once; false: one point each (the
  /// comparison bench/Coordinator.cpp makes).
  bool BatchProposals = true;
  /// A node-local folder for the live history, which is copied to the
  /// campaign's database path every BackupSeconds and at the end; empty:
  /// the history lives at the campaign's path.
  std::string HistoryLocal;
  double BackupSeconds = 600;
  /// Where the workers are: empty, processes this coordinator starts on
  /// its node; else links to Workers workers elsewhere (the ranks of an
  /// MPI job), which start their own processes.
  LinkFactory Links;
};

struct KernelProgress {
  std::string Name;
  uint64_t Evaluations = 0, Failures = 0;
  std::optional<double> BaselineMs, BestMs;
};

/// What the progress line shows.
struct TuneProgress {
  uint64_t Done = 0, Budget = 0, Failures = 0, InFlight = 0;
  double ElapsedSeconds = 0;
  double PerMinute = 0;
  std::optional<double> EtaSeconds;
  std::vector<KernelProgress> Kernels;
};

/// How the coordinator reports to the command that runs it (only src/cli
/// prints).
class TuneObserver {
public:
  virtual ~TuneObserver() = default;
  virtual void progress(const TuneProgress &P) = 0;
  /// A line worth logging: a resume, a worker restart, a new best.
  virtual void note(const std::string &Line) = 0;
};

enum class TuneOutcome {
  Complete,   ///< the budget, the wall time or the target was reached,
              ///< or the space was exhausted
  Interrupted ///< a stop was requested: resume it
};

struct TuneSummary {
  TuneOutcome Outcome = TuneOutcome::Complete;
  std::string Why; ///< "the evaluation budget (200) is spent", ...
  TuneProgress Final;
  bool Resumed = false;
};

/// Checks each kernel's capture against the campaign: it opens, is of the
/// campaign's backend, holds the kernel the section names and the launches
/// its `launches` name, and has the arguments its grid rule reads. A capture
/// not recorded yet (Campaign::MissingCaptures, a dry run) is skipped. The
/// error holds every mistake, one per line.
Error checkCaptures(const Campaign &C);

/// Runs (or resumes, when its database exists) a campaign.
Expected<TuneSummary> runCampaign(const Campaign &C, const TuneOptions &O,
                                  TuneObserver &Observer);

/// Asks a running campaign to stop: no new work is dispatched, in-flight
/// work gets the grace period, results are committed. Async-signal-safe.
void requestCampaignStop();

/// The default number of workers for a backend: one per spare core on the
/// host (at least one), one per GPU on CUDA.
unsigned defaultWorkers(Backend B);

} // namespace r3
