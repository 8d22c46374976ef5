// What `r3 replay`'s two halves share: the plan parsed from the command line,
// the launches it selects and the printing of results (Replay.cpp, which
// also replays host captures; ReplayCuda.cpp, CUDA captures).
#pragma once

#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "cli/Args.h"
#include "replay/Candidate.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace r3::cli {

/// What to replay and how, from the command line.
struct ReplayPlan {
  std::string Capture;
  Candidate Base; ///< everything but the kernel and the launch
  std::optional<std::string> Kernel, Source;
  std::optional<LaunchRef> Launch; ///< none: all
  std::vector<std::string> CFlags;
  /// --pipeline, repeatable: each is one more candidate, evaluated in the same
  /// server; empty: the default pipeline only.
  std::vector<std::string> Pipelines;
  /// The server's address-space limit; none: chosen from the capture.
  std::optional<uint64_t> MaxMemory;
  /// A measurement whose 95% CI is wider than this fraction of its median is
  /// flagged as noisy.
  double NoiseThreshold = 0.05;
  bool Json = false;
};

/// One launch to replay: its index in the capture, its kernel, and which
/// launch of that kernel it is (the number users see and give).
struct SelectedLaunch {
  uint32_t Launch = 0, Kernel = 0;
  uint64_t Ordinal = 0;
};
/// The launches to replay, in capture order.
using LaunchSelection = std::vector<SelectedLaunch>;

namespace replay {
using nlohmann::json;

/// One result as the JSON object `--format json` prints ("launch": the
/// kernel's launch ordinal, "capture_launch": the capture's index); Extra's
/// keys are added (the CUDA compile report's).
json resultJson(const std::string &Kernel, const SelectedLaunch &Launch,
                const CandidateResult &R, double EvalMs, double NoiseThreshold,
                const json &Extra = json::object());

/// Prints results as a table (a header first) or as JSON lines.
struct Printer {
  bool Json;
  std::string Capture;
  std::string Backend; ///< "host", "cuda"
  double NoiseThreshold = 0.05;
  bool HeaderDone = false;
  void print(const std::string &Kernel, const SelectedLaunch &Launch,
             const CandidateResult &R, double EvalMs,
             const json &Extra = json::object());
};

} // namespace replay

/// Checks the options of a CUDA replay (a usage error when they are wrong).
Error checkCudaReplayOptions(const ParsedArgs &A, const CaptureReader &R,
                             const ReplayPlan &P);

/// Replays the selected launches of a CUDA capture: true when all verified.
Expected<bool> replayCuda(const ParsedArgs &A, const CaptureReader &R,
                          const ReplayPlan &P, const LaunchSelection &Sel);

} // namespace r3::cli
