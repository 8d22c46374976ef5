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

namespace {
Error textureRefusal(const std::string &Kernel, const std::string &What,
                     const std::string &Why) {
  return makeError("kernel '", Kernel, "' ", What, " (", Why,
                   "): not supported; the capture was refused");
}

/// "; parameter 2 holds a live handle", or nothing.
std::string handleNote(const TextureFacts &F) {
  if (!F.HandleParam)
    return "";
  return "; parameter " + std::to_string(*F.HandleParam + 1) +
         " holds a live handle";
}

/// The verdict of a cubin whose code was decoded.
Error checkDecoded(const std::string &Kernel, const TextureFacts &F) {
  const CubinTextureUse &U = *F.Cubin;
  std::string Code = "its sm_" + std::to_string(U.Sm) + " code";
  if (U.Instructions)
    return textureRefusal(Kernel, "reads texture/surface objects",
                          Code + " has texture/surface instructions" +
                              handleNote(F));
  if (!U.Via.empty())
    return textureRefusal(Kernel, "may read texture/surface objects",
                          "device function '" + U.Via +
                              "' of its module uses them, and r3 does not "
                              "follow calls" +
                              handleNote(F));
  return Error::success();
}

/// Without decoded code, a parameter equal to a live handle is taken for
/// one: a false refusal says why, where a missed texture would be a capture
/// that replays wrong.
Error checkUndecoded(const std::string &Kernel, const TextureFacts &F) {
  if (!F.HandleParam)
    return Error::success();
  std::string Why = F.Cubin ? "its sm_" + std::to_string(F.Cubin->Sm) +
                                  " code is not one r3 decodes"
                            : "its cubin could not be read: " + F.CubinError;
  return textureRefusal(Kernel, "may read texture/surface objects",
                        "parameter " + std::to_string(*F.HandleParam + 1) +
                            " holds a live handle, and " + Why);
}
} // namespace

Error checkTextures(const std::string &Kernel, const TextureFacts &F) {
  if (F.ModuleReferences)
    return makeError("kernel '", Kernel,
                     "' reads texture/surface references of its module: not "
                     "supported; the capture was refused");
  if (F.Cubin && F.Cubin->References)
    return textureRefusal(Kernel, "reads texture/surface references",
                          "its cubin's attributes bind a texture or surface "
                          "bank");
  if (F.Cubin && F.Cubin->Decoded)
    return checkDecoded(Kernel, F);
  return checkUndecoded(Kernel, F);
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
