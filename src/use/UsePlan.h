// The contract between `r3 run --use` and the code it puts into the
// application (the CUDA injection library, or the host runtime and its
// use-library): which kernels to replace, with what code and launch settings,
// and what each process did about them.
//
// The plan is a text file r3 run writes and names in R3_USE_PLAN; each
// process of the application reads it at start-up. Each process writes its
// report into the folder R3_USE_REPORT_DIR as report.<pid> when it exits, so
// that an application that forks or runs helpers leaves one report per
// process. Both files are line-based ("key value", the value the rest of the
// line), versioned, and written and read by the same r3 build. Backend-
// neutral; libc and the C++ runtime only, like RecordEnv.h.
#pragma once

#include "capture/Capture.h"
#include "support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace r3::use {

inline constexpr const char *PlanEnv = "R3_USE_PLAN";
inline constexpr const char *ReportDirEnv = "R3_USE_REPORT_DIR";
/// The host backend's use-library (libr3-host-use.so), which the host
/// runtime loads when a plan is given: it compiles the tuned code.
inline constexpr const char *HostLibraryEnv = "R3_USE_HOST_LIBRARY";
/// Set to 1 by the user: run the application untouched.
inline constexpr const char *DisableEnv = "R3_RUN_DISABLE";

/// One kernel to replace.
struct KernelPlan {
  std::string Name;         ///< the mangled name the application uses
  std::string ModuleSha256; ///< of the module image the capture recorded
  /// The tuned code: a cubin (CUDA) or LLVM bitcode (host) file; empty: the
  /// application's own code, with the plan's other settings.
  std::string Artifact;
  std::string Pipeline;   ///< host: the new-pass-manager pipeline
  int CodegenOpt = -1;    ///< host: 0-3; -1: the recorded level
  int RecordedOpt = 2;    ///< host: the -O level the application used
  Dim3 Block = {0, 0, 0}; ///< CUDA: the block; all 0: the application's
  std::string GridRule;   ///< CUDA: LaunchRule.h syntax; empty: keep-threads
  /// CUDA, a kernel that strides over its grid: the grid in x, as blocks
  /// (grid_x) or blocks per multiprocessor of the launch's device
  /// (grid_per_sm); 0: the grid the rule gives.
  uint32_t GridX = 0, GridPerSm = 0;
  int64_t DynamicShared = -1;  ///< CUDA: bytes; -1: the application's
  std::string CachePreference; ///< CUDA: "shared", "l1", "equal"; "": none
  /// The campaign's tolerance, as Candidate.h's enums (the plan is read by
  /// the build that wrote it).
  int Tolerance = 0;
  double ToleranceValue = 0;
  int ElementType = 0;
  double Speedup = 0, SpeedupLo = 0, SpeedupHi = 0; ///< the campaign's
};

struct Plan {
  /// Launches of each replaced kernel checked against the original code
  /// (both run on the same inputs), from the first.
  uint64_t VerifyLaunches = 0;
  /// Time every launch of the planned kernels (CUPTI activity on the GPU,
  /// the monotonic clock on the host) and report the sums.
  bool TimeKernels = false;
  /// Match, count and time the planned kernels but run the application's
  /// own code: the comparison run of a benchmark, under the same library.
  bool KeepOriginal = false;
  std::vector<KernelPlan> Kernels;
  const KernelPlan *find(std::string_view Name) const;
};

std::string encodePlan(const Plan &P);
/// Where names the file, for errors ("PATH:LINE: ...").
Expected<Plan> decodePlan(std::string_view Text, const std::string &Where);
Expected<Plan> readPlan(const std::string &Path);

/// What one process did with one kernel of the plan.
enum class Outcome {
  Replaced,    ///< the tuned code ran in place of the application's (or,
               ///< with KeepOriginal, would have)
  Refused,     ///< the application's kernel is not the one the campaign tuned
  Failed,      ///< the tuned code could not be loaded; the original ran
  VerifyFailed ///< the tuned code's outputs differed; the process stopped
};
const char *outcomeName(Outcome O);

struct KernelReport {
  std::string Name;
  Outcome What = Outcome::Replaced;
  uint64_t Launches = 0;            ///< launches that ran the tuned code
  uint64_t Verified = 0;            ///< of which checked against the original
  uint64_t Timed = 0, KernelNs = 0; ///< launches timed, their total time
  std::string Message;              ///< why refused or failed, what differed
  /// The grid and block of the last launch that ran the tuned code (CUDA;
  /// zeros: none, or the host backend).
  Dim3 Grid{}, Block{};
};

struct ProcessReport {
  uint64_t Pid = 0;
  std::vector<KernelReport> Kernels;
};

/// The words both backends use, so that the application says the same
/// whatever ran it:
/// a kernel refused because its code (What: "bitcode", "module") hashes to
/// Hash, not to the capture's Expected ("" when unknown);
std::string changedKernelMessage(const std::string &Kernel,
                                 const std::string &What,
                                 const std::string &Hash,
                                 const std::string &Expected);
/// and the error printed, on stderr, before a process whose tuned kernel
/// failed a check stops (Message: "launch N: what differed").
void printMismatch(const std::string &Kernel, const std::string &Message);

std::string encodeReport(const ProcessReport &R);
Expected<ProcessReport> decodeReport(std::string_view Text,
                                     const std::string &Where);

/// Writes Text to Dir/report.<pid> through a temporary file and a rename,
/// so that a reader never sees half a report. Uses open/write only.
Error writeReportFile(const std::string &Dir, uint64_t Pid,
                      const std::string &Text);

} // namespace r3::use
