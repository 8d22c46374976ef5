// The baseline and speedup rule (Speedup.h says what it is and why).
#include "replay/Speedup.h"

#include "replay/Stats.h"

namespace r3::report {

namespace {
double median(std::vector<double> V) { return computeStats(V).Median; }

bool timed(const Estimate &E) { return E.Value > 0; }
} // namespace

std::optional<Estimate> speedupOf(const Estimate &Baseline,
                                  const Estimate &Time) {
  if (!timed(Baseline) || !timed(Time))
    return std::nullopt;
  Estimate S{Baseline.Value / Time.Value, 0, 0};
  if (Baseline.hasInterval() && Time.hasInterval()) {
    S.Lo = Baseline.Lo / Time.Hi;
    S.Hi = Baseline.Hi / Time.Lo;
  }
  return S;
}

std::optional<Estimate> medianOf(const std::vector<Estimate> &Es) {
  if (Es.empty())
    return std::nullopt;
  std::vector<double> Med, Lo, Hi;
  for (const Estimate &E : Es) {
    Med.push_back(E.Value);
    Lo.push_back(E.Lo);
    Hi.push_back(E.Hi);
  }
  return Estimate{median(Med), median(Lo), median(Hi)};
}

void KernelTimes::Measurements::add(const Estimate &E) {
  Measured.push_back(E);
  Median = *medianOf(Measured);
}

void KernelTimes::BaselineSet::add(const std::string &Device,
                                   const Estimate &E) {
  if (ByDevice.empty())
    First = Device;
  ByDevice[Device].add(E);
  All.add(E);
}

void KernelTimes::addBaselineRow(const std::string &Device, const Estimate &E) {
  Rows.add(Device, E);
}

void KernelTimes::addBaselineEvaluation(const std::string &Device,
                                        const Estimate &E) {
  if (timed(E))
    FromEvaluations.add(Device, E);
}

void KernelTimes::addTime(const std::string &Device, const Estimate &Time,
                          int64_t Id) {
  if (!timed(Time))
    return;
  Offered O{Id, Offers++, Device, Time};
  if (!Fastest || Time.Value < Fastest->Time.Value)
    Fastest = O;
  auto [It, New] = FastestOn.try_emplace(Device, O);
  if (!New && Time.Value < It->second.Time.Value)
    It->second = O;
}

const KernelTimes::BaselineSet &KernelTimes::active() const {
  return Rows.ByDevice.empty() ? FromEvaluations : Rows;
}

std::optional<Estimate>
KernelTimes::baselineOf(const std::string &Device) const {
  auto It = active().ByDevice.find(Device);
  if (It == active().ByDevice.end())
    return std::nullopt;
  return It->second.Median;
}

std::optional<Estimate> KernelTimes::pooledBaseline() const {
  if (active().ByDevice.empty())
    return std::nullopt;
  return active().All.Median;
}

const std::string &KernelTimes::referenceDevice() const {
  return active().First;
}

std::optional<double> KernelTimes::referenceBaselineMs() const {
  if (auto B = baselineOf(referenceDevice()))
    return B->Value;
  return std::nullopt;
}

double KernelTimes::scale(const std::string &Device) const {
  if (Device == referenceDevice())
    return 1;
  std::optional<Estimate> Own = baselineOf(Device);
  std::optional<double> Reference = referenceBaselineMs();
  if (!Own || !Reference || !timed(*Own))
    return 1;
  return *Reference / Own->Value;
}

std::optional<BestTime> KernelTimes::bestPerDevice() const {
  if (active().size() < 2)
    return std::nullopt;
  std::optional<BestTime> Best;
  double BestRatio = 0;
  uint64_t BestOrder = 0;
  for (const auto &[Device, O] : FastestOn) {
    std::optional<Estimate> Base = baselineOf(Device);
    if (!Base || !timed(*Base))
      continue;
    double Ratio = Base->Value / O.Time.Value;
    if (Best &&
        (Ratio < BestRatio || (Ratio == BestRatio && O.Order > BestOrder)))
      continue;
    Best = BestTime{O.Id, Device, O.Time, Base, true};
    BestRatio = Ratio;
    BestOrder = O.Order;
  }
  return Best;
}

std::optional<BestTime> KernelTimes::best() const {
  if (std::optional<BestTime> B = bestPerDevice())
    return B;
  if (!Fastest)
    return std::nullopt;
  return BestTime{Fastest->Id, Fastest->Device, Fastest->Time, pooledBaseline(),
                  false};
}

std::optional<Estimate> KernelTimes::baseline() const {
  if (std::optional<BestTime> B = best())
    return B->Baseline;
  return pooledBaseline();
}

std::optional<Estimate> KernelTimes::speedup() const {
  std::optional<BestTime> B = best();
  if (!B || !B->Baseline)
    return std::nullopt;
  return speedupOf(*B->Baseline, B->Time);
}

std::optional<double> KernelTimes::comparable(const std::string &Device,
                                              double Ms) const {
  std::optional<BestTime> B = best();
  if (!B || !B->PerDevice)
    return Ms;
  std::optional<Estimate> Own = baselineOf(Device);
  if (!Own || !timed(*Own))
    return std::nullopt;
  return Ms * B->Baseline->Value / Own->Value;
}

} // namespace r3::report
