// The profile's shares, ceilings and selection (ProfileModel.h).
#include "app/ProfileModel.h"

#include "report/Amdahl.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace r3::app {

namespace {
KernelShare shareOf(const wire::KernelStatsMsg &K) {
  KernelShare S;
  S.Name = K.Name;
  S.Display = K.Demangled.empty() ? K.Name : K.Demangled;
  S.Launches = K.Launches;
  S.TimedLaunches = K.TimedLaunches;
  S.TotalMs = K.TotalNs / 1e6;
  S.MeanUs = K.TimedLaunches ? K.TotalNs / 1e3 / K.TimedLaunches : 0;
  S.Untunable = K.Untunable;
  S.Grid = K.Grid;
  S.Block = K.Block;
  return S;
}

/// A finite number, or null (JSON has no infinity).
nlohmann::json finite(double V) {
  return std::isfinite(V) ? nlohmann::json(V) : nlohmann::json(nullptr);
}
} // namespace

ProfileModel profileModel(const AppProfile &P, const ProfileRequest &R,
                          double Speedup) {
  ProfileModel M;
  M.Command = R.Argv;
  M.Source = R.Source;
  M.WallSeconds = P.WallSeconds;
  M.Speedup = Speedup;
  for (const wire::KernelStatsMsg &K : P.Kernels) {
    M.Kernels.push_back(shareOf(K));
    M.KernelSeconds += K.TotalNs / 1e9;
    M.Launches += K.Launches;
  }
  std::stable_sort(M.Kernels.begin(), M.Kernels.end(),
                   [](const KernelShare &A, const KernelShare &B) {
                     return A.TotalMs > B.TotalMs;
                   });
  std::vector<report::KernelGain> Gains;
  std::vector<double> Shares;
  for (KernelShare &K : M.Kernels) {
    double Ms = K.TotalMs;
    K.ShareOfKernels = M.KernelSeconds > 0 ? Ms / 1e3 / M.KernelSeconds : 0;
    K.ShareOfRun = M.WallSeconds > 0 ? Ms / 1e3 / M.WallSeconds : 0;
    if (!K.Untunable.empty())
      continue;
    ++M.Tunable;
    M.TunableShare += K.ShareOfRun;
    Shares.push_back(K.ShareOfRun);
    Gains.push_back({K.ShareOfRun, Speedup});
  }
  M.CeilingFree = report::endToEndCeiling(Shares);
  M.CeilingAtSpeedup = report::endToEndSpeedup(Gains);
  return M;
}

nlohmann::json profileJson(const ProfileModel &M) {
  nlohmann::json Kernels = nlohmann::json::array();
  for (const KernelShare &K : M.Kernels)
    Kernels.push_back(
        {{"name", K.Name},
         {"demangled", K.Display},
         {"launches", K.Launches},
         {"timed_launches", K.TimedLaunches},
         {"total_ms", K.TotalMs},
         {"mean_us", K.MeanUs},
         {"share_of_kernel_time", K.ShareOfKernels},
         {"share_of_run", K.ShareOfRun},
         {"tunable", K.Untunable.empty()},
         {"why_not", K.Untunable.empty() ? nlohmann::json(nullptr)
                                         : nlohmann::json(K.Untunable)},
         {"grid", K.Grid},
         {"block", K.Block}});
  return {{"command", M.Command},
          {"backend", M.Source == Backend::Cuda ? "cuda" : "host"},
          {"wall_seconds", M.WallSeconds},
          {"kernel_seconds", M.KernelSeconds},
          {"launches", M.Launches},
          {"kernels", Kernels},
          {"ceiling",
           {{"tunable_kernels", M.Tunable},
            {"tunable_share_of_run", M.TunableShare},
            {"if_free", finite(M.CeilingFree)},
            {"per_kernel_speedup", M.Speedup},
            {"at_per_kernel_speedup", finite(M.CeilingAtSpeedup)}}}};
}

Selection selectByCover(const ProfileModel &M, double Cover) {
  Selection S;
  for (const KernelShare &K : M.Kernels) {
    bool Take = K.Untunable.empty() && S.Covered < Cover - 1e-12;
    (Take ? S.Chosen : S.Left).push_back(K);
    if (Take)
      S.Covered += K.ShareOfKernels;
  }
  return S;
}

} // namespace r3::app
