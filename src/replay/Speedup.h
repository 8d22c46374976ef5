// The baseline and speedup rule, in one place: how a kernel's baseline is
// estimated from its measurements, how times taken on different devices are
// compared, which verified time is the best, and the speedup with its
// confidence interval. `r3 report`, `r3 status`, `r3 export`, the HTML
// page, `r3 run --use` (through export) and the campaign's search state all
// ask KernelTimes, so that a campaign stops on the speedup the report shows.
//
// The rule (a speedup is a ratio taken side by side, the baseline
// re-measured on the worker that times candidates, since clocks and other
// jobs drift between machines and over a campaign's days):
//
// - Baseline measurements are the kernel's `baselines` rows; where it has
//   none (histories of older r3 versions), its verified, timed
//   "baseline"-level evaluations. Live campaigns write a row for that
//   evaluation, so both sources agree whenever both exist.
// - A device's baseline is the median of its measurements' medians; its
//   interval bounds are the medians of their bounds. The pooled baseline is
//   the same over every device's measurements.
// - A time counts when it is verified and timed (a median above 0).
// - With baselines from several devices (the ranks of an MPI job, GPUs of
//   different kinds), the best is the time with the largest speedup over
//   its own device's baseline, and that baseline is the kernel's; a time
//   from a device that measured no baseline is not compared. Otherwise (and
//   when no compared time exists) the best is the lowest time and the
//   baseline is the pooled one. Ties go to the time offered first (the
//   first committed).
// - speedup = baseline / best; its interval is [baseline lo / best hi,
//   baseline hi / best lo] when both intervals are known.
//
// The search ranks candidates on one scale, the reference device's (the
// first to measure a baseline): scale() puts a time from another device on
// it by the ratio of the two devices' baselines.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace r3::report {

/// A time or a ratio with its 95% confidence interval; the interval is
/// unknown when a bound is not positive (a measurement stored without one).
struct Estimate {
  double Value = 0, Lo = 0, Hi = 0;
  bool hasInterval() const { return Lo > 0 && Hi > 0; }
};

/// Baseline / Time with the interval the rule gives; none unless both are
/// positive.
std::optional<Estimate> speedupOf(const Estimate &Baseline,
                                  const Estimate &Time);

/// The median of several estimates: of their values, of their lower and of
/// their upper bounds. None for none.
std::optional<Estimate> medianOf(const std::vector<Estimate> &Es);

/// The best time and the baseline it is compared with.
struct BestTime {
  int64_t Id = 0; ///< what the caller offered it as
  std::string Device;
  Estimate Time;
  std::optional<Estimate> Baseline;
  /// Chosen by the speedup over its own device's baseline (baselines from
  /// several devices), not as the lowest time.
  bool PerDevice = false;
};

/// One kernel's baselines and verified times, offered in commit order,
/// and what the rule makes of them.
class KernelTimes {
public:
  /// A `baselines` row: a measurement of the recorded code on Device.
  void addBaselineRow(const std::string &Device, const Estimate &E);
  /// A "baseline"-level evaluation; it counts only when verified and timed,
  /// and as a measurement only while the kernel has no rows.
  void addBaselineEvaluation(const std::string &Device, const Estimate &E);
  /// A verified evaluation's time, under the caller's Id; untimed (a median
  /// of 0) never counts.
  void addTime(const std::string &Device, const Estimate &Time, int64_t Id);

  /// The devices that measured a baseline.
  size_t baselineDevices() const { return active().size(); }
  /// Device's own baseline, if it measured one.
  std::optional<Estimate> baselineOf(const std::string &Device) const;
  /// Every device's measurements together.
  std::optional<Estimate> pooledBaseline() const;
  /// The device that measured a baseline first (empty before any did).
  const std::string &referenceDevice() const;
  /// The baseline on the reference device: the search's scale.
  std::optional<double> referenceBaselineMs() const;
  /// What a time from Device is multiplied by to put it on the reference
  /// device's scale: the reference's baseline over Device's. 1 on the
  /// reference device and on one without a baseline of its own.
  double scale(const std::string &Device) const;

  /// The best time and its baseline, by the rule above.
  std::optional<BestTime> best() const;
  /// The best's baseline; without a best, the pooled baseline.
  std::optional<Estimate> baseline() const;
  /// baseline() / the best's time.
  std::optional<Estimate> speedup() const;
  /// A time measured on Device as it compares with baseline(): scaled by
  /// baseline() over Device's own when the best was chosen per device (none
  /// when Device measured no baseline then); as measured otherwise.
  std::optional<double> comparable(const std::string &Device, double Ms) const;

private:
  /// Measurements, and their median kept up to date (baselines come once in
  /// many results; the campaign asks for medians at every result).
  struct Measurements {
    std::vector<Estimate> Measured;
    Estimate Median;
    void add(const Estimate &E);
  };
  /// The measurements of one source (rows, or evaluations).
  struct BaselineSet {
    std::map<std::string, Measurements> ByDevice;
    Measurements All;
    std::string First; ///< the device that measured first
    size_t size() const { return ByDevice.size(); }
    void add(const std::string &Device, const Estimate &E);
  };
  /// A time offered, with its place in the commit order.
  struct Offered {
    int64_t Id = 0;
    uint64_t Order = 0;
    std::string Device;
    Estimate Time;
  };
  const BaselineSet &active() const;
  std::optional<BestTime> bestPerDevice() const;

  BaselineSet Rows, FromEvaluations;
  /// The fastest time overall and per device (the first on ties).
  std::optional<Offered> Fastest;
  std::map<std::string, Offered> FastestOn;
  uint64_t Offers = 0;
};

} // namespace r3::report
