// One recorded launch on the GPU: its recorded bytes (on the host, for
// messages and where the GPU lacks room), device copies of its pre-state
// (restored before every run) and of its outputs' post-state (the expected
// values, compared on the GPU), the ranges poisoned before a run, and the
// steps of a run (restore, poison, launch, time, check) that the CUDA device
// composes.
#pragma once

#include "capture/CaptureReader.h"
#include "replay/Candidate.h"
#include "replay/DeviceVerify.h"
#include "replay/Verify.h"
#include "replay/cuda/DeviceSpace.h"

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace r3::cuda {

/// The recorded bytes of one launch and their pristine device copies.
class LaunchData {
public:
  /// Reads launch Launch, relocated into Space (DeviceSpace.h): pointers in
  /// its parameters and recorded bytes rewritten to where the regions live.
  /// With Expected, the post-state of every region the launch changed is
  /// copied to the GPU too, where there is room (expected(I)).
  static Expected<std::unique_ptr<LaunchData>>
  load(const CaptureReader &R, uint32_t Launch, const DeviceSpace &Space,
       bool Expected);
  ~LaunchData();
  LaunchData(const LaunchData &) = delete;
  LaunchData &operator=(const LaunchData &) = delete;

  const LaunchInfo &info() const { return Info; } ///< Params relocated
  /// Where region I's memory lives (its recorded address, relocated).
  uint64_t address(size_t I) const { return Address[I]; }
  uint64_t relocatedWords() const { return Relocated; }
  uint32_t index() const { return Index; }
  const std::vector<uint8_t> &pre(size_t I) const { return Pre[I]; }
  const std::vector<uint8_t> &post(size_t I) const { return Post[I]; }
  /// The device copy of region I's pre-state; 0 for an empty region.
  CUdeviceptr pristine(size_t I) const { return Pristine[I]; }
  /// The device copy of region I's post-state when the launch changed it;
  /// 0 for other regions, and where the GPU had no room for it.
  CUdeviceptr expected(size_t I) const { return ExpectedCopy[I]; }
  /// [first, last + 1) of the bytes the recorded launch changed in region I;
  /// empty when it changed none.
  std::pair<uint64_t, uint64_t> changed(size_t I) const { return Changed[I]; }

private:
  LaunchData() = default;
  uint32_t Index = 0;
  LaunchInfo Info;
  std::vector<std::vector<uint8_t>> Pre, Post;
  std::vector<CUdeviceptr> Pristine, ExpectedCopy;
  std::vector<std::pair<uint64_t, uint64_t>> Changed;
  std::vector<uint64_t> Address;
  uint64_t Relocated = 0;
};

/// Where each region of a launch lives for one loaded module: its recorded
/// address for memory, the module's own address for a global (0 when the
/// module lacks it).
struct RegionAddresses {
  std::vector<CUdeviceptr> Address;
  /// A candidate module's own writable globals (none of them recorded):
  /// each restored from its copy taken at load before every run, so that
  /// no run sees what an earlier one left there (memoization).
  struct Reset {
    CUdeviceptr To = 0, From = 0;
    size_t Size = 0;
  };
  std::vector<Reset> Resets;
};

/// Resolves a launch's globals by name in Module. A global the recorded
/// launch wrote but the module lacks is a wrong result (its message in Why).
Expected<RegionAddresses> bindRegions(const LaunchData &L, CUmodule Module,
                                      std::string &Why);

/// Restores the regions of L from their pristine copies (device to device)
/// and, when Poison, fills each output's changed span with 0xff. All: every
/// region; else only those the recorded launch changed, which a run
/// rewrites: the others a correct run leaves alone, and the checks of the
/// runs (verifyLaunch compares every region) catch one that does not. The
/// candidate module's own globals are reset either way. Untimed; waits.
Error restore(const LaunchData &L, const RegionAddresses &At, CUstream S,
              bool Poison, bool All);

/// Checks every region after a run against the recording: on the GPU
/// through Scans (DeviceVerify.h) where the expected bytes are there, else
/// on copies read back (Scans null: all of them).
Expected<VerifyReport> verifyLaunch(const LaunchData &L,
                                    const RegionAddresses &At,
                                    const VerifySettings &Settings,
                                    ScanDevice *Scans);

/// How a launch attempt ended.
struct LaunchStatus {
  FailureKind Failure = FailureKind::None;
  std::string Message;
  bool DeviceLost = false;
  uint64_t Ns = 0; ///< the launch's time between its events
};

/// How to launch.
struct LaunchShape {
  CUfunction Function = nullptr;
  Dim3 Grid, Block;
  uint32_t SharedBytes = 0;
};

/// Launches once on S between two events and waits for it.
LaunchStatus launchOnce(const LaunchData &L, const LaunchShape &Shape,
                        CUstream S, CUevent Start, CUevent Stop);

} // namespace r3::cuda
