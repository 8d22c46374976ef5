// Names of the capture model's enumerations, as stored in the HDF5 file.
#include "capture/Capture.h"

#include <utility>

namespace r3 {

namespace {
template <typename E, size_t N>
const char *nameOf(const std::pair<E, const char *> (&Table)[N], E Value) {
  for (const auto &[V, Name] : Table)
    if (V == Value)
      return Name;
  return "unknown";
}
template <typename E, size_t N>
std::optional<E> valueOf(const std::pair<E, const char *> (&Table)[N],
                         const std::string &S) {
  for (const auto &[V, Name] : Table)
    if (S == Name)
      return V;
  return std::nullopt;
}

const std::pair<Backend, const char *> Backends[] = {{Backend::Cuda, "cuda"},
                                                     {Backend::Host, "host"}};
const std::pair<ModuleKind, const char *> ModuleKinds[] = {
    {ModuleKind::Cubin, "cubin"}, {ModuleKind::Bitcode, "llvm-bitcode"}};
const std::pair<RegionKind, const char *> RegionKinds[] = {
    {RegionKind::Device, "device"},
    {RegionKind::Managed, "managed"},
    {RegionKind::HostMapped, "host_mapped"},
    {RegionKind::Global, "global"},
    {RegionKind::Heap, "heap"},
    {RegionKind::Mmap, "mmap"}};
} // namespace

const char *backendName(Backend B) { return nameOf(Backends, B); }
const char *moduleKindName(ModuleKind K) { return nameOf(ModuleKinds, K); }
const char *regionKindName(RegionKind K) { return nameOf(RegionKinds, K); }
std::optional<Backend> parseBackend(const std::string &S) {
  return valueOf(Backends, S);
}
std::optional<ModuleKind> parseModuleKind(const std::string &S) {
  return valueOf(ModuleKinds, S);
}
std::optional<RegionKind> parseRegionKind(const std::string &S) {
  return valueOf(RegionKinds, S);
}

uint64_t totalRegionBytes(const LaunchInfo &L) {
  uint64_t Sum = 0;
  for (const RegionInfo &R : L.Regions)
    Sum += R.Size;
  return Sum;
}

} // namespace r3
