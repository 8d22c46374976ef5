// One recorded launch run again on the host: its memory committed at the
// recorded addresses; before every run the pre-state restored, the outputs
// poisoned when asked and the slack around the regions filled; the
// verification run first, then warm-ups, then timed repetitions with
// CLOCK_MONOTONIC around the kernel call alone. Every run, not only the
// first, is checked (untimed) the same way, so that a candidate that does
// the work only when it is watched fails: the outputs against the
// recording, the slack for writes outside every region, and the process for
// threads or child processes the candidate left running.
#pragma once

#include "capture/CaptureReader.h"
#include "compile/host/HostJit.h"
#include "replay/Candidate.h"
#include "replay/Stats.h"
#include "replay/Verify.h"
#include "replay/host/RegionMap.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace r3 {

/// The recorded bytes of one launch, read from the capture once.
struct LaunchImage {
  uint32_t Index = 0;   ///< in the capture
  uint64_t Ordinal = 0; ///< the kernel's launch number: what messages say
  std::vector<RegionInfo> Regions;
  std::vector<MappedSpan> Spans; ///< one per region, labelled
  std::vector<std::vector<uint8_t>> Pre;
  std::vector<std::vector<uint8_t>> Post; ///< empty for unchanged regions
  std::vector<uint64_t> Slots; ///< argument slots, then the return value's
  std::vector<ByteRange> Slack; ///< slackRanges(Spans)
};

/// What the slack around a launch's regions holds before every run; a run
/// that changes a byte of it wrote outside every recorded region.
inline constexpr uint8_t SlackByte = 0xa5;

Expected<LaunchImage> loadLaunch(const CaptureReader &R, uint32_t Launch);

/// What a compiled kernel takes and returns, from its bitcode.
struct KernelSignature {
  unsigned NumParams = 0;
  unsigned ReturnSize = 0; ///< bytes; 0 for void
  ValueType Return = ValueType::Bits;
  int OptLevel = -1; ///< the "r3.opt-level" module flag; -1 when absent
};

/// Reads Kernel's signature from Bitcode; an error if the bitcode does not
/// parse or does not define Kernel.
Expected<KernelSignature> readSignature(std::span<const uint8_t> Bitcode,
                                        const std::string &Kernel);

/// Whether outputs are poisoned before the verification run.
enum class Poisoning { Off, On };

struct RunSettings {
  uint32_t Warmup = 0;
  /// Timed runs: Reps.Max, or fewer once the median is precise enough.
  RepetitionRule Reps{0, 1, 0};
  double TimeoutSeconds = 10;
  Poisoning Poison = Poisoning::Off;
  VerifySettings Verify;
  std::function<void()> Tick; ///< before each run; may be empty
};

/// How one launch went.
struct LaunchOutcome {
  FailureKind Failure = FailureKind::None;
  std::string Message;
  std::vector<uint64_t> TimesNs; ///< one per repetition
  /// The candidate left a thread or process running, which may still write
  /// into the server: it must exit after this result.
  bool Tainted = false;
};

/// Why the launch's argument slots do not fit Sig, or empty when they do.
std::string slotMismatch(const LaunchImage &L, const KernelSignature &Sig);

/// Runs one launch of Entry. An error means the memory could not be mapped.
Expected<LaunchOutcome> runLaunch(AddressReservation &Space,
                                  const LaunchImage &L, HostEntry Entry,
                                  const KernelSignature &Sig,
                                  const RunSettings &S);

/// Whether Entry (the recorded kernel) still verifies on L when its outputs
/// are poisoned. Runs in a forked child with an alarm, so that a kernel that
/// chases a poisoned pointer or loops on a poisoned bound only answers no.
bool verifiesPoisoned(AddressReservation &Space, const LaunchImage &L,
                      HostEntry Entry, const KernelSignature &Sig,
                      const RunSettings &S);

} // namespace r3
