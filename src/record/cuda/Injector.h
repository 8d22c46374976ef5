// Internal interfaces of the CUDA injection library (libr3-cuda-inject.so):
// the recorder's state, shared by the CUPTI entry points (Inject.cpp) and the
// handling of one launch (InjectLaunch.cpp). Nothing here is visible outside
// the library.
#pragma once

#include "record/Protocol.h"
#include "record/RecordEnv.h"
#include "record/Selection.h"
#include "record/cuda/DeviceMemory.h"
#include "record/cuda/Launch.h"
#include "record/cuda/LaunchChecks.h"
#include "record/cuda/Modules.h"
#include "record/cuda/Snapshot.h"
#include "record/cuda/Textures.h"

#include <cupti.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace r3::cuda {

/// What the library knows about one kernel (one CUfunction).
struct KernelState {
  uint64_t Id = 0; ///< the launch handle's address: the stream's kernel id
  CUfunction Function = nullptr; ///< the context's function (contextFunction)
  std::string Name;
  bool Selected = false;
  uint64_t Launches = 0;
  Dim3 FirstGrid = {0, 0, 0}, FirstBlock = {0, 0, 0};
  uint64_t TotalNs = 0, TimedLaunches = 0;
  std::vector<std::pair<uint64_t, uint64_t>> Durations; ///< ns, launch id
  bool Announced = false;          ///< its Kernel frame was sent
  std::string Untunable;           ///< why r3 cannot record it (list mode)
  std::vector<ParamInfo> Params;   ///< known once announced
  std::vector<GlobalInfo> Globals; ///< its module's, once announced
};

/// A launch whose duration the activity API will report, by correlation id.
struct TimedLaunch {
  KernelState *Kernel = nullptr;
  uint64_t LaunchId = wire::NoLaunch;
};

/// The library's state, built once in InitializeInjection and never destroyed
/// (callbacks may still arrive while the process exits).
struct Injector {
  RecordEnv Env;
  KernelSelector Selector;
  wire::FrameWriter Writer{-1};
  /// The bulk ring of region bytes (record/Ring.h), when r3 record made one
  /// and it could be mapped; the stream carries them otherwise.
  std::unique_ptr<wire::RingWriter> Ring;
  std::string RingProblem;   ///< why there is no ring (warned after Hello)
  bool RingPinTried = false; ///< cuMemHostRegister of the ring was tried
  bool RingPinned = false;   ///< and succeeded: copies go straight into it
  std::mutex Lock; ///< everything below but the timings, and the stream
  DeviceMemory Memory;
  TextureTable Textures;
  ModuleTable Modules;
  std::unordered_map<CUfunction, std::unique_ptr<KernelState>> Kernels;
  std::vector<KernelState *> Order; ///< kernels in the order first launched
  /// Guards the timings: taken alone by CUPTI's activity thread, and after
  /// Lock elsewhere, never while calling into CUDA (a buffer may complete
  /// inside any driver call).
  std::mutex TimedLock;
  std::unordered_map<uint32_t, TimedLaunch> Timed; ///< by correlation id
  std::vector<std::string> GraphKernels; ///< kernels the activity API saw
                                         ///< run inside CUDA graphs
  /// List mode: each graph kernel's runs and their total time, by name (in
  /// the order first seen), so that a profile counts the time graphs take.
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>>
      GraphTimes;
  /// Kernel activity costs every launch of every kernel, so in record mode
  /// it is enabled only once a module that defines a selected kernel loads
  /// (or, failing that, at a selected kernel's first launch). The module
  /// callback may come inside our own driver calls, with Lock held, so it
  /// asks Selector.matches, which takes no lock.
  std::atomic<bool> ActivityOn{false};
  bool HelloSent = false, Failed = false, Finished = false;
  bool ManagedWarned = false;   ///< the managed-memory warning went out
  int CaptureDevice = NoDevice; ///< the device of the first recorded launch
  uint64_t LaunchesSent = 0;
};

extern Injector *State;

/// Sends a Failure frame (Lock held) and ends the recording; the application
/// keeps running, unrecorded.
void failLocked(const std::string &Message);
/// Sends Hello once, describing the current context's device (Lock held).
Error helloLocked();
/// Where the next snapshot's bytes go (Lock held); pins the ring the first
/// time.
SnapshotOut snapshotOut();
/// Turns on kernel activity (durations, graph kernels) if it is not yet.
void timeKernels();

/// The enter and exit callbacks of a launch call.
void onLaunchEnter(const CUpti_CallbackData &Data, const LaunchCall &Call);
void onLaunchExit(const CUpti_CallbackData &Data);

} // namespace r3::cuda
