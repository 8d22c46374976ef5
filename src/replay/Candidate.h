// What a replay server evaluates and what it answers, for both backends: the
// coordinator (r3 replay, r3 tune) fills a Candidate, a server compiles and
// runs it on the recorded inputs and returns a CandidateResult. Failures are
// data (a FailureKind with a message), never errors of the caller.
#pragma once

#include "capture/Capture.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace r3 {

/// How a candidate failed; None when it ran and verified.
enum class FailureKind {
  None,
  CompileError,
  InvalidLaunch,
  Crashed,
  Timeout,
  WrongResult
};

/// "compile_error", "invalid_launch", "crashed", "timeout", "wrong_result";
/// "none" for None.
const char *failureKindName(FailureKind K);
std::optional<FailureKind> parseFailureKind(const std::string &S);

/// How an output element may differ from the recorded one.
enum class ToleranceKind {
  Exact, ///< bitwise
  Abs,   ///< |got - expected| <= Value
  Rel,   ///< |got - expected| <= Value * |expected|
  Ulp    ///< at most Value units in the last place apart
};

/// The element type outputs are compared as, when the user names one.
enum class ElementType { Bytes, F32, F64 };

/// "exact", "abs", "rel", "ulp" / "bytes", "f32", "f64".
const char *toleranceKindName(ToleranceKind K);
const char *elementTypeName(ElementType T);

/// Whether outputs are filled with 0xff before the verification run.
enum class PoisonMode {
  Auto, ///< when the recorded kernel itself verifies poisoned
  On,
  Off
};

const char *poisonModeName(PoisonMode M);

struct VerifySettings {
  ToleranceKind Tolerance = ToleranceKind::Exact;
  double Value = 0;                      ///< of the tolerance
  ElementType Type = ElementType::Bytes; ///< Bytes: compare bytes only
  PoisonMode Poison = PoisonMode::Auto;
};

/// The kernel's preference between shared memory and L1, as
/// cuFuncSetCacheConfig takes it; None leaves the driver's default.
enum class CachePreference { None, Shared, L1, Equal };

/// "none", "shared", "l1", "equal".
const char *cachePreferenceName(CachePreference P);
std::optional<CachePreference> parseCachePreference(const std::string &S);

/// Where the code of a candidate comes from.
enum class CodeKind {
  Recorded, ///< the kernel's module in the capture
  Bitcode,  ///< host backend: LLVM bitcode of the extracted kernel
  Cubin     ///< CUDA backend: a cubin (or PTX) image holding the kernel
};

struct Candidate {
  std::string Kernel;             ///< the kernel's (mangled) name
  std::vector<uint32_t> Launches; ///< capture launch indices; all must pass
  CodeKind Code = CodeKind::Recorded;
  std::vector<uint8_t> Image; ///< the code when not Recorded
  /// New-pass-manager pipeline; empty: default<O{n}>, n the -O level the
  /// kernel was compiled with.
  std::string Pipeline;
  int CodegenOpt = -1;             ///< 0-3; -1: the same n
  std::optional<Dim3> Grid, Block; ///< launch overrides (CUDA only)
  /// With a Block and no Grid, each launch's grid follows this rule
  /// (LaunchRule.h); empty: keep-threads.
  std::string GridRule;
  /// A grid-stride kernel's grid in x: this many blocks per multiprocessor
  /// of the device that runs it (its other dimensions as recorded); 0: the
  /// grid as Grid, GridRule or the recording give it.
  uint32_t GridPerSm = 0;
  /// The kernel's parameter names (from its source), which a rule may use
  /// beside arg0, arg1, ...
  std::vector<std::string> ParamNames;
  std::optional<uint32_t> DynamicShared; ///< bytes; none: as recorded
  CachePreference Cache = CachePreference::None;
  uint32_t Warmup = 2;
  /// Timed runs: at most Repetitions; with MinRepetitions below it, the runs
  /// stop once the median's 95% confidence interval is narrower than
  /// TargetCi times the median (adaptive repetitions).
  uint32_t Repetitions = 20;
  uint32_t MinRepetitions = 0; ///< 0: always Repetitions
  double TargetCi = 0.01;
  double TimeoutSeconds = 10; ///< per run
  bool FlushL2 = false;       ///< CUDA only
  VerifySettings Verify;
  /// Before its runs, run the recorded code this many times and compare its
  /// outputs with the recording (Determinism.h); 0: no check.
  uint32_t DeterminismRuns = 0;
};

struct CandidateResult {
  bool Verified = false;
  FailureKind Failure = FailureKind::None;
  std::string Message; ///< what failed, precisely; empty when verified
  /// Per timed repetition: the summed time of the candidate's launches, by
  /// the timer Timer names.
  std::vector<uint64_t> TimesNs;
  /// CUDA: the same repetitions timed by events around each launch (launch
  /// overhead included); empty when not measured.
  std::vector<uint64_t> EventTimesNs;
  /// "cupti" (the kernels' own execution, as r3 record measures the
  /// application's), "events" (CUDA events around each launch), "host"
  /// (the host backend's clock); empty before any run.
  std::string Timer;
  /// Wall time of the verification and timed runs, restores included: the
  /// time the candidate kept the device busy.
  double BusyMs = 0;
  double CompileMs = 0;
  double LoadMs = 0;    ///< loading the module into the device (CUDA)
  double RestoreMs = 0; ///< restoring inputs before runs, all runs together
  double VerifyMs = 0;  ///< comparing runs' memory with the recording (CUDA)
  std::optional<int64_t> Registers, Spills, SharedBytes; ///< none on host
  std::string Pipeline; ///< the pipeline that ran (the default resolved)
  int CodegenOpt = 0;
  bool Poisoned = false; ///< whether outputs were poisoned when verifying
  std::string Sandbox;   ///< "landlock" or "rlimits"
  /// What the determinism check found when outputs differed between runs
  /// (which regions, by how much, and a tolerance that covers it); empty
  /// when there was no check or every run equalled the recording.
  std::string Nondeterminism;
  /// Whether the verification settings accept those differences.
  bool NondeterminismCovered = false;
  /// The candidate left the server's device unusable (a CUDA fault poisons
  /// its context): the server exits after this result and the client starts
  /// a fresh one for the next candidate.
  bool DeviceLost = false;
};

/// What is known of a candidate once it has compiled, before its runs: a
/// result that the runs cut short (a crash, a timeout) still reports it.
struct CompiledInfo {
  double CompileMs = 0;
  std::string Pipeline;
  int CodegenOpt = 0;
  bool Poisoned = false;
};

/// A result of the given failure with its message.
CandidateResult failedResult(FailureKind K, std::string Message);

} // namespace r3
