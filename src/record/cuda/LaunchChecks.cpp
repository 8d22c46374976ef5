// Device, texture and managed-memory checks of a selected launch.
#include "record/cuda/LaunchChecks.h"

#include "support/StringUtil.h"

namespace r3::cuda {

Error checkDevice(int CaptureDevice, int Device, uint64_t Ordinal,
                  const std::string &Kernel) {
  if (CaptureDevice == NoDevice || CaptureDevice == Device)
    return Error::success();
  return makeError("launch ", Ordinal, " of '", Kernel, "' ran on device ",
                   Device, "; this capture records device ", CaptureDevice,
                   "; multi-GPU captures are not supported; the capture was "
                   "refused");
}

Error textureObjectRefusal(const std::string &Kernel, size_t Param) {
  return makeError("kernel '", Kernel,
                   "' reads texture/surface object(s) (parameter ", Param + 1,
                   "): not supported; the capture was refused");
}

Error textureReferenceRefusal(const std::string &Kernel) {
  return makeError("kernel '", Kernel,
                   "' reads texture/surface references of its module: not "
                   "supported; the capture was refused");
}

std::optional<std::string>
managedWarning(const std::vector<DeviceAllocation> &Regions, uint64_t Ordinal,
               const std::string &Kernel) {
  uint64_t Count = 0, Bytes = 0;
  for (const DeviceAllocation &A : Regions)
    if (A.Kind == RegionKind::Managed) {
      ++Count;
      Bytes += A.Size;
    }
  if (Count == 0)
    return std::nullopt;
  return "launch " + std::to_string(Ordinal) + " of '" + Kernel +
         "' can reach " + std::to_string(Count) +
         (Count == 1 ? " managed allocation (" : " managed allocations (") +
         formatBytes(Bytes) +
         "): the capture holds its bytes before and after the launch, and a "
         "replay maps it as device memory at the same address, so host "
         "accesses during the kernel and page migrations are not replayed";
}

} // namespace r3::cuda
