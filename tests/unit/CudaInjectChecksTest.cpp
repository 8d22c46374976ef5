// The checks of a selected launch, without a driver: texture and surface
// objects tracked from their create/destroy callbacks and found among a
// launch's 8-byte parameters, the texture refusal decided from what the cubin
// says, the device mismatch refusal, and the managed memory warning.
#include "Catch.h"

#include "record/cuda/LaunchChecks.h"
#include "record/cuda/Textures.h"

#include <cstring>

using namespace r3;
using namespace r3::cuda;

namespace {
std::vector<uint8_t> buffer(uint32_t N, uint64_t Ptr, uint64_t Tex) {
  std::vector<uint8_t> B(24, 0);
  std::memcpy(B.data(), &N, 4);
  std::memcpy(B.data() + 8, &Ptr, 8);
  std::memcpy(B.data() + 16, &Tex, 8);
  return B;
}
const std::vector<ParamInfo> Layout = {{0, 4}, {8, 8}, {16, 8}};
} // namespace

TEST_CASE("cuda inject: live texture and surface objects are tracked",
          "[cuda]") {
  TextureTable T;
  CUtexObject Tex = 5;
  cuTexObjectCreate_params Create{&Tex, nullptr, nullptr, nullptr};
  T.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuTexObjectCreate, &Create, CUDA_SUCCESS);
  CUsurfObject Surf = 9, Failed = 11;
  cuSurfObjectCreate_params SCreate{&Surf, nullptr};
  T.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuSurfObjectCreate, &SCreate,
              CUDA_SUCCESS);
  cuSurfObjectCreate_params FCreate{&Failed, nullptr};
  T.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuSurfObjectCreate, &FCreate,
              CUDA_ERROR_INVALID_VALUE);
  CHECK(T.liveObjects() == std::set<uint64_t>{5, 9});
  cuTexObjectDestroy_params Destroy{Tex};
  T.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuTexObjectDestroy, &Destroy,
              CUDA_SUCCESS);
  cuSurfObjectDestroy_params SDestroy{Surf};
  T.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuSurfObjectDestroy, &SDestroy,
              CUDA_SUCCESS);
  CHECK(T.liveObjects().empty());

  CUmodule Mod = reinterpret_cast<CUmodule>(0x77);
  CUtexref Ref = nullptr;
  cuModuleGetTexRef_params GetRef{&Ref, Mod, "tex"};
  CHECK_FALSE(T.hasReferences(Mod));
  T.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuModuleGetTexRef, &GetRef, CUDA_SUCCESS);
  CHECK(T.hasReferences(Mod));
  CHECK_FALSE(T.hasReferences(reinterpret_cast<CUmodule>(0x78)));
}

TEST_CASE("cuda inject: a parameter holding a live texture handle is found",
          "[cuda]") {
  std::vector<uint8_t> B = buffer(5, 0x7f0000001000, 3);
  CHECK(textureParam(Layout, B, {}) == std::nullopt);
  CHECK(textureParam(Layout, B, {3}) == 2u);
  CHECK(textureParam(Layout, B, {4, 0x7f0000001000}) == 1u);
  // Only 8-byte parameters can be handles: N == 5 is not one.
  CHECK(textureParam(Layout, B, {5}) == std::nullopt);
  // A layout past the buffer's end is not read.
  CHECK(textureParam({{24, 8}}, B, {0}) == std::nullopt);
}

namespace {
TextureFacts decoded(bool Instructions, const std::string &Via = "") {
  TextureFacts F;
  F.Cubin = CubinTextureUse();
  F.Cubin->Sm = 90;
  F.Cubin->Decoded = true;
  F.Cubin->Instructions = Instructions;
  F.Cubin->Via = Via;
  return F;
}
std::string refusal(const std::string &Kernel, const TextureFacts &F) {
  Error E = checkTextures(Kernel, F);
  return E ? E.message() : "recorded";
}
} // namespace

TEST_CASE("cuda inject: the cubin decides whether a launch reads textures",
          "[cuda]") {
  TextureFacts Tex = decoded(true);
  CHECK(refusal("tex_fetch", Tex) ==
        "kernel 'tex_fetch' reads texture/surface objects (its sm_90 code has "
        "texture/surface instructions): not supported; the capture was "
        "refused");
  Tex.HandleParam = 0;
  CHECK(refusal("tex_fetch", Tex) ==
        "kernel 'tex_fetch' reads texture/surface objects (its sm_90 code has "
        "texture/surface instructions; parameter 1 holds a live handle): not "
        "supported; the capture was refused");
  // An integer that equals a live handle, in a kernel without texture code.
  TextureFacts Plain = decoded(false);
  Plain.HandleParam = 0;
  CHECK(refusal("scale", Plain) == "recorded");
  CHECK(refusal("k", decoded(false, "_Z6lookupyi")) ==
        "kernel 'k' may read texture/surface objects (device function "
        "'_Z6lookupyi' of its module uses them, and r3 does not follow "
        "calls): not supported; the capture was refused");
  TextureFacts Refs = decoded(false);
  Refs.Cubin->References = true;
  CHECK(refusal("k", Refs) ==
        "kernel 'k' reads texture/surface references (its cubin's attributes "
        "bind a texture or surface bank): not supported; the capture was "
        "refused");
  // References the application looked up, whatever the cubin says.
  Plain.ModuleReferences = true;
  CHECK(refusal("k", Plain) ==
        "kernel 'k' reads texture/surface references of its module: not "
        "supported; the capture was refused");
}

TEST_CASE("cuda inject: without decoded code a parameter equal to a live "
          "handle refuses the launch",
          "[cuda]") {
  TextureFacts Old = decoded(false);
  Old.Cubin->Decoded = false;
  Old.Cubin->Sm = 61;
  CHECK(refusal("k", Old) == "recorded");
  Old.HandleParam = 2;
  CHECK(refusal("k", Old) ==
        "kernel 'k' may read texture/surface objects (parameter 3 holds a "
        "live handle, and its sm_61 code is not one r3 decodes): not "
        "supported; the capture was refused");
  TextureFacts None;
  None.CubinError = "cubin: not an ELF image";
  CHECK(refusal("k", None) == "recorded");
  None.HandleParam = 0;
  CHECK(refusal("k", None) ==
        "kernel 'k' may read texture/surface objects (parameter 1 holds a "
        "live handle, and its cubin could not be read: cubin: not an ELF "
        "image): not supported; the capture was refused");
}

TEST_CASE("cuda inject: a launch on another device than the capture's is "
          "refused",
          "[cuda]") {
  CHECK_FALSE(checkDevice(NoDevice, 1, 0, "k"));
  CHECK_FALSE(checkDevice(0, 0, 4, "k"));
  Error E = checkDevice(0, 1, 4, "k");
  REQUIRE(E);
  CHECK(E.message() == "launch 4 of 'k' ran on device 1; this capture records "
                       "device 0; multi-GPU captures are not supported; the "
                       "capture was refused");
}

TEST_CASE("cuda inject: managed memory in a launch's reach is warned about",
          "[cuda]") {
  std::vector<DeviceAllocation> Plain = {{0x1000, 64, RegionKind::Device},
                                         {0x2000, 64, RegionKind::HostMapped}};
  CHECK(managedWarning(Plain, 0, "k") == std::nullopt);
  std::vector<DeviceAllocation> Mixed = Plain;
  Mixed.push_back({0x3000, 2048, RegionKind::Managed});
  Mixed.push_back({0x4000, 2048, RegionKind::Managed});
  auto W = managedWarning(Mixed, 2, "k");
  REQUIRE(W);
  CHECK(W->starts_with("launch 2 of 'k' can reach 2 managed allocations (4.0 "
                       "KiB): "));
  CHECK(W->find("host accesses during the kernel") != std::string::npos);
}
