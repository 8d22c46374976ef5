// Verification where the memory is: the regions after a run stay on the
// device that ran them (a GPU), the expected bytes there too, and a scan
// (VerifyScan.h) counts what differs and finds the lowest failing unit. The
// host reads back only the results and, for the message, the few units it
// describes: the same report as Verifier::checkRegion on copies (Verify.h),
// for a fraction of the traffic.
#pragma once

#include "replay/Verify.h"
#include "replay/VerifyScan.h"

#include <span>
#include <string>
#include <vector>

namespace r3 {

/// Runs scans where the memory is.
class ScanDevice {
public:
  virtual ~ScanDevice() = default;
  /// Runs every op and returns their results, in order.
  virtual Expected<std::vector<scan::Result>>
  scan(const std::vector<scan::Op> &Ops) = 0;
  /// Copies To.size() bytes from the device's address At.
  virtual Error read(uint64_t At, std::span<uint8_t> To) = 0;
};

/// One region after a run.
struct ScanRegion {
  std::string Label; ///< regionLabel()
  RegionRole Role = RegionRole::Output;
  /// What it should hold, on the host (the descriptions' expected values).
  std::span<const uint8_t> Expected;
  /// The same bytes on the device; 0: the region is compared on the host
  /// (Actual read back whole).
  uint64_t ExpectedAt = 0;
  uint64_t ActualAt = 0; ///< what the run left, on the device
  uint64_t Size = 0;
};

/// Checks the regions in order under S, scanning on D: the report
/// Verifier::checkRegion gives on the same bytes (counts, regions wrong,
/// the first few mismatches described alike).
Expected<VerifyReport> verifyOnDevice(const std::vector<ScanRegion> &Regions,
                                      const VerifySettings &S, ScanDevice &D);

/// The scans that check one region under S: bitwise bytes, or elements of
/// S's type and then the bytes past the last whole element.
std::vector<scan::Op> scansOf(const ScanRegion &R, const VerifySettings &S);

} // namespace r3
