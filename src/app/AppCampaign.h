// The campaign `r3 tune --app` writes: one [[kernel]] section for each kernel
// it chose, with every choice explained in a comment (why this kernel, which
// launch, where its source is, which tolerance and why, what it is worth end
// to end), so that the user can read it, edit it and re-run plain `r3 tune`.
// A pure function of what was measured and found: the CLI gathers the facts.
#pragma once

#include "app/KernelSource.h"
#include "app/ProfileModel.h"

#include <optional>
#include <string>
#include <vector>

namespace r3::app {

/// One chosen kernel and what r3 found out about it.
struct AppKernel {
  KernelShare Profile;
  uint64_t Launch = 0; ///< the launch recorded into the capture
  std::optional<Definition> Source;
  std::string Database;            ///< its compile_commands.json, or empty
  std::vector<std::string> CFlags; ///< without a database
  /// The [kernel.verify] keys ("tolerance = \"exact\"", ...), one a line,
  /// and the comment that says why.
  std::vector<std::string> Verify;
  std::string VerifyWhy;
};

/// Everything the campaign file says.
struct AppCampaignSpec {
  ProfileModel Profile;
  double Cover = 0.9;
  Selection Chosen;
  std::string Capture = "app.h5"; ///< relative to the campaign
  uint64_t Evaluations = 0;
  std::vector<AppKernel> Kernels; ///< in Chosen's order
};

/// The campaign file's text.
std::string campaignText(const AppCampaignSpec &S);

/// Block sizes to try around a recorded one-dimensional block: halves and
/// doubles that stay multiples of 32 within 32..1024; empty for a block of
/// several dimensions (its shape is the kernel's, not r3's, to change).
std::vector<uint32_t> blockChoices(const Dim3 &Recorded);

/// The launch to record of kernels launched Fewest times or more: launch 3
/// (after the first few, as in steady state), or the last when there are
/// fewer.
uint64_t representativeLaunch(uint64_t Fewest);

} // namespace r3::app
