// Verification of a replayed launch against the recorded one (the rules are in
// Verify.cpp's opening comment).
#pragma once

#include "capture/Capture.h"
#include "replay/Candidate.h"
#include "support/Error.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3 {

/// How a region is checked.
enum class RegionRole {
  Output,   ///< the original launch changed it: compare to the post-state
  Unchanged ///< the original left it alone: it must be left alone, bitwise
};

/// One region after a run: what it holds and what it should hold.
struct RegionCheck {
  std::string Label; ///< regionLabel()
  std::span<const uint8_t> Expected;
  std::span<const uint8_t> Actual;
  RegionRole Role = RegionRole::Output;
};

/// "region 'C' (heap 0x55d0c0a0 +8192)"; unnamed regions by their index.
std::string regionLabel(const RegionInfo &R, uint32_t Index);

/// The type of a kernel's return value, for checkReturn.
enum class ValueType { Bits, F32, F64 };

/// What a verification found.
struct VerifyReport {
  uint64_t Mismatches = 0;        ///< every mismatched element or byte
  uint32_t RegionsWrong = 0;      ///< regions (and return values) with one
  std::vector<std::string> First; ///< the first few, described
  std::vector<std::string> Where; ///< the label that each of First starts with
  bool passed() const { return Mismatches == 0; }
  /// "2 mismatches in 1 output: region 'y' (...): element 3 (f32): ...;
  /// element 4 ...": consecutive mismatches of one region share its label.
  std::string message() const;
};

/// Checks regions and return values under one VerifySettings, collecting a
/// report.
class Verifier {
public:
  /// At most MaxDescribed mismatches are described; all are counted.
  static constexpr size_t MaxDescribed = 4;

  explicit Verifier(const VerifySettings &S) : Settings(S) {}
  void checkRegion(const RegionCheck &R);
  /// Checks the low Size bytes of a return value slot; a float return is
  /// compared with the tolerance when the settings name a float type.
  void checkReturn(ValueType T, unsigned Size, uint64_t Expected,
                   uint64_t Actual);
  const VerifyReport &report() const { return Report; }

  /// A region checked elsewhere (on the GPU, DeviceVerify.h): counts its
  /// Mismatches, which describeUnit then describes, the lowest first.
  void countRegion(uint64_t Mismatches);
  /// Whether another description would still be kept.
  bool describing() const;
  /// Describes one failing unit (VerifyScan.h's Unit: a byte, an f32 or an
  /// f64 element) as checkRegion would, without counting it again.
  void describeUnit(const std::string &Label, RegionRole Role, uint32_t Unit,
                    uint64_t Index, std::span<const uint8_t> Expected,
                    std::span<const uint8_t> Actual);

private:
  void checkBytes(const RegionCheck &R, size_t From);
  template <typename F> void checkElements(const RegionCheck &R);
  /// Counts a mismatch and describes it while there is room.
  void describe(const std::string &Where, const std::string &What);
  void note(const std::string &Where, const std::string &What);

  VerifySettings Settings;
  VerifyReport Report;
};

/// The name of a launch's run after the verification run, for messages:
/// Index counts from 0 over the warm-ups (Warmup of them) and then the timed
/// runs: "warm-up run 2", "timed run 3".
std::string runName(uint32_t Index, uint32_t Warmup);

/// The message of a wrong result that a run after the verification run
/// gave: that the verification run passed (a candidate that works only when
/// it is watched), which runs are checked (Checked: "every run's outputs
/// are checked"), and what differs. Launch is the kernel's launch number
/// (LaunchInfo::Ordinal), as every message names a launch.
std::string laterRunMessage(uint64_t Launch, const std::string &Run,
                            const std::string &Checked, const VerifyReport &R);

/// Fills with 0xff the bytes of Live from the first to the last byte whose
/// recorded value changed (Pre != Post), so that an output the candidate does
/// not write cannot pass (Verify.cpp says why the span, not only the changed
/// bytes).
void poisonOutputs(std::span<uint8_t> Live, std::span<const uint8_t> Pre,
                   std::span<const uint8_t> Post);

/// Parses "abs:1e-6", "rel:1e-3", "ulp:4" or "exact" into S.
Error parseTolerance(const std::string &Text, VerifySettings &S);

} // namespace r3
