// The in-memory model of a capture: what r3 records of kernel launches and what
// replay needs to run them again. The HDF5 layout that stores it is described
// in docs/capture-format.md; CaptureWriter and CaptureReader convert between
// the two.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace r3 {

/// The capture format version this build writes and the newest it reads.
inline constexpr uint32_t CaptureFormatVersion = 1;

/// Which backend produced a capture: GPU kernels through CUDA, or CPU kernels
/// through the host backend's LLVM instrumentation.
enum class Backend { Cuda, Host };

/// What a module image holds.
enum class ModuleKind { Cubin, Bitcode };

/// What kind of memory a recorded region is.
enum class RegionKind {
  Device,     ///< cuMemAlloc*, pitched, async/pool, VMM mappings
  Managed,    ///< cuMemAllocManaged
  HostMapped, ///< pinned host memory mapped into the device's address space
  Global, ///< a module's __device__ / __constant__ variable, or a data global
  Heap,   ///< host backend: malloc family, new, aligned allocations
  Mmap,   ///< host backend: anonymous mmap
};

/// Which side of a launch a region's bytes belong to.
enum class Phase { Pre, Post };

using Dim3 = std::array<uint32_t, 3>;

struct DeviceInfo {
  std::string Name;
  int ComputeMajor = 0; ///< 9 for sm_90; 0 on the host backend
  int ComputeMinor = 0;
  int DriverVersion = 0; ///< as cuDriverGetVersion reports it (13000 for 13.0)
  uint64_t MemoryBytes = 0;
  /// Which device of the recording process ran the launches (its CUDA
  /// ordinal, which CUDA_VISIBLE_DEVICES renumbers) and its PCI address
  /// ("0000:1b:00.0"), which does not change; -1 and empty on the host
  /// backend and in captures written before r3 recorded them.
  int Ordinal = -1;
  std::string PciBusId;
};

/// What a capture says about where it came from.
struct CaptureHeader {
  Backend Source = Backend::Host; ///< which backend recorded it
  std::string Producer; ///< "r3 0.1.0": the writing program; set by the writer
  DeviceInfo Device;
  std::vector<std::string> CommandLine;
  std::vector<std::string> Environment; ///< "NAME=value" entries that matter
};

struct ModuleInfo {
  ModuleKind Kind = ModuleKind::Cubin;
  uint64_t Size = 0; ///< bytes of the image
};

/// One kernel parameter: its place in the launch's parameter buffer.
struct ParamInfo {
  uint64_t Offset = 0;
  uint64_t Size = 0;
};

/// A global variable of the kernel's module.
struct GlobalInfo {
  std::string Name;
  uint64_t Address = 0;
  uint64_t Size = 0;
};

/// Function attributes as the driver reported them at record time.
struct FunctionAttributes {
  int64_t Registers = -1;
  int64_t StaticSharedBytes = -1;
  int64_t MaxThreadsPerBlock = -1;
  int64_t LocalBytes = -1;
};

struct KernelInfo {
  std::string Name;      ///< mangled
  std::string Demangled; ///< empty when the name is not mangled
  uint32_t Module = 0;   ///< index into the capture's modules
  std::vector<ParamInfo> Params;
  std::vector<GlobalInfo> Globals;
  FunctionAttributes Attributes;
  /// In-application duration of every launch of this kernel, recorded or not.
  std::vector<uint64_t> AppDurationsNs;
};

/// A memory region live at a launch. Its bytes before the launch are always
/// stored; its bytes after are stored only when the launch changed it.
struct RegionInfo {
  uint64_t Base = 0;
  uint64_t Size = 0;
  RegionKind Kind = RegionKind::Device;
  std::string Name; ///< the variable's name for globals, else empty
  bool Changed = false;
};

struct LaunchInfo {
  uint32_t Kernel = 0; ///< index into the capture's kernels
  uint64_t Ordinal =
      0; ///< which launch of this kernel in the application (0-based)
  Dim3 Grid = {1, 1, 1};
  Dim3 Block = {1, 1, 1};
  uint32_t DynamicSharedBytes = 0;
  std::vector<uint8_t> Params;        ///< the raw parameter buffer
  std::optional<uint64_t> DurationNs; ///< in-application duration, when known
  std::vector<RegionInfo> Regions;
};

const char *backendName(Backend B);
const char *moduleKindName(ModuleKind K);
const char *regionKindName(RegionKind K);
std::optional<Backend> parseBackend(const std::string &S);
std::optional<ModuleKind> parseModuleKind(const std::string &S);
std::optional<RegionKind> parseRegionKind(const std::string &S);

/// Total bytes of a launch's regions before it ran.
uint64_t totalRegionBytes(const LaunchInfo &L);

} // namespace r3
