// An application's profile as r3 reasons about it: each kernel's share of the
// kernels' time and of the run, whether r3 can tune it, the end-to-end
// ceilings (report/Amdahl.h), and which kernels cover a requested share of
// the kernels' time. `r3 profile` prints it; `r3 tune --app` chooses its
// kernels by it and stores the shares with the campaign.
#pragma once

#include "record/Profile.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace r3::app {

/// One kernel of the profile.
struct KernelShare {
  std::string Name;    ///< as launched (mangled)
  std::string Display; ///< demangled when it can be
  uint64_t Launches = 0, TimedLaunches = 0;
  double TotalMs = 0, MeanUs = 0;
  double ShareOfKernels = 0; ///< of the summed kernel time, 0 to 1
  double ShareOfRun = 0;     ///< of the run's wall time, 0 to 1
  std::string Untunable;     ///< why r3 cannot tune it; empty: it can
  Dim3 Grid = {1, 1, 1}, Block = {1, 1, 1};
};

/// The whole profile, kernels heaviest first.
struct ProfileModel {
  std::vector<std::string> Command;
  Backend Source = Backend::Host;
  double WallSeconds = 0, KernelSeconds = 0;
  uint64_t Launches = 0;
  std::vector<KernelShare> Kernels;
  size_t Tunable = 0;      ///< how many kernels r3 can tune
  double TunableShare = 0; ///< their summed share of the run
  double CeilingFree = 1;  ///< end to end if they took no time
  double Speedup = 1.5;    ///< the per-kernel speedup of the second ceiling
  double CeilingAtSpeedup = 1;
};

/// The model of one profiled run; Speedup sets the second ceiling.
ProfileModel profileModel(const AppProfile &P, const ProfileRequest &R,
                          double Speedup);

/// The model as JSON, for `r3 profile --format json` and the history.
nlohmann::json profileJson(const ProfileModel &M);

/// The tunable kernels that cover Cover (0 < Cover <= 1) of the kernels'
/// time, heaviest first, and the rest.
struct Selection {
  std::vector<KernelShare> Chosen, Left;
  double Covered = 0; ///< the chosen kernels' share of the kernels' time
};
Selection selectByCover(const ProfileModel &M, double Cover);

} // namespace r3::app
