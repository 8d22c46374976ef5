// The CUDA injection library's parts that need no device: launch calls
// decoded from CUPTI's parameter structs (cuLaunchKernel, cuLaunchKernelEx
// with its attributes, cooperative launches refused), the parameter buffer
// packed from kernelParams or taken from extra, and the allocation table
// kept from allocation and free callbacks (failed calls ignored); under r3
// run --use, a launch's shape under a plan and its rewritten parameters.
#include "Catch.h"

#include "record/cuda/DeviceMemory.h"
#include "record/cuda/Launch.h"

#include <cstring>

using namespace r3;
using namespace r3::cuda;

namespace {
CUfunction fakeFunction() { return reinterpret_cast<CUfunction>(0x1234); }

template <typename T> T at(const std::vector<uint8_t> &B, size_t Offset) {
  T V;
  std::memcpy(&V, B.data() + Offset, sizeof V);
  return V;
}
} // namespace

TEST_CASE("cuda inject: cuLaunchKernel is decoded and its parameters packed",
          "[cuda]") {
  int N = 7;
  double *Ptr = reinterpret_cast<double *>(0x7f0000001000);
  float Alpha = 2.5f;
  void *Args[] = {&N, &Ptr, &Alpha};
  cuLaunchKernel_params P{};
  P.f = fakeFunction();
  P.gridDimX = 32, P.gridDimY = 24, P.gridDimZ = 1;
  P.blockDimX = 16, P.blockDimY = 16, P.blockDimZ = 1;
  P.sharedMemBytes = 1024;
  P.kernelParams = Args;
  LaunchCall C;
  REQUIRE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &P, C));
  CHECK(C.Function == fakeFunction());
  CHECK(C.Grid == Dim3{32, 24, 1});
  CHECK(C.Block == Dim3{16, 16, 1});
  CHECK(C.SharedBytes == 1024);
  CHECK(C.Refusal == Unsupported::None);
  // Each parameter at its offset (the pointer aligned to 8), as the
  // capture stores the buffer.
  auto B = packParams(C, {{0, 4}, {8, 8}, {16, 4}});
  REQUIRE(B);
  REQUIRE(B->size() == 20);
  CHECK(at<int>(*B, 0) == 7);
  CHECK(at<uint64_t>(*B, 8) == 0x7f0000001000);
  CHECK(at<float>(*B, 16) == 2.5f);
  CHECK(at<uint32_t>(*B, 4) == 0); // padding is zero
  // A kernel without parameters packs to nothing; one with parameters but
  // neither kernelParams nor extra is an error, not a guess.
  LaunchCall Bare;
  CHECK(packParams(Bare, {})->empty());
  auto Missing = packParams(Bare, {{0, 4}});
  REQUIRE_FALSE(Missing);
  CHECK(Missing.error().message().find("neither kernelParams nor extra") !=
        std::string::npos);
}

TEST_CASE("cuda inject: the extra parameter buffer is taken as it is",
          "[cuda]") {
  uint8_t Buffer[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  size_t Size = sizeof Buffer;
  void *Extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, Buffer,
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &Size, CU_LAUNCH_PARAM_END};
  cuLaunchKernel_params P{};
  P.f = fakeFunction();
  P.gridDimX = P.gridDimY = P.gridDimZ = 1;
  P.blockDimX = P.blockDimY = P.blockDimZ = 1;
  P.extra = Extra;
  LaunchCall C;
  REQUIRE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &P, C));
  auto B = packParams(C, {{0, 8}, {8, 4}});
  REQUIRE(B);
  CHECK(*B == std::vector<uint8_t>(Buffer, Buffer + 12));
  // The per-thread entry point's null stream is the thread's stream; the
  // legacy one's stays null.
  CHECK(C.Stream == CU_STREAM_PER_THREAD);
  LaunchCall Legacy;
  REQUIRE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &P, Legacy));
  CHECK(Legacy.Stream == nullptr);
}

TEST_CASE("cuda inject: cuLaunchKernelEx's configuration and refusals",
          "[cuda]") {
  CUlaunchAttribute Attrs[1] = {};
  CUlaunchConfig Config{};
  Config.gridDimX = 4, Config.gridDimY = 2, Config.gridDimZ = 1;
  Config.blockDimX = 128, Config.blockDimY = 1, Config.blockDimZ = 1;
  Config.sharedMemBytes = 4096;
  Config.attrs = Attrs;
  cuLaunchKernelEx_params P{};
  P.config = &Config;
  P.f = fakeFunction();
  LaunchCall Plain;
  REQUIRE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &P, Plain));
  CHECK(Plain.Grid == Dim3{4, 2, 1});
  CHECK(Plain.Block == Dim3{128, 1, 1});
  CHECK(Plain.SharedBytes == 4096);
  CHECK(Plain.Refusal == Unsupported::None);

  Config.numAttrs = 1;
  Attrs[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  Attrs[0].value.cooperative = 1;
  LaunchCall Coop;
  REQUIRE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &P, Coop));
  CHECK(Coop.Refusal == Unsupported::Cooperative);

  Attrs[0] = {};
  Attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  Attrs[0].value.clusterDim.x = 2;
  Attrs[0].value.clusterDim.y = 1;
  Attrs[0].value.clusterDim.z = 1;
  LaunchCall Cluster;
  REQUIRE(
      decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, &P, Cluster));
  CHECK(Cluster.Refusal == Unsupported::ClusterDims);

  cuLaunchKernel_params K{};
  LaunchCall Cooperative;
  REQUIRE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, &K,
                       Cooperative));
  CHECK(Cooperative.Refusal == Unsupported::Cooperative);
  LaunchCall Other;
  CHECK_FALSE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &K, Other));
}

TEST_CASE("cuda inject: the allocation table follows allocations and frees",
          "[cuda]") {
  DeviceMemory M;
  CUcontext Ctx = reinterpret_cast<CUcontext>(0xc0);
  CUdeviceptr A = 0x7f0000000000, B = 0x7f0000100000, Managed = 0x7e0000000000,
              Pitched = 0x7f0000200000, Failed = 0x7f0000300000;
  cuMemAlloc_v2_params PA{&A, 4096};
  M.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &PA, CUDA_SUCCESS, Ctx);
  cuMemAllocAsync_params PB{};
  PB.dptr = &B;
  PB.bytesize = 512;
  M.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &PB, CUDA_SUCCESS, Ctx);
  cuMemAllocManaged_params PM{};
  PM.dptr = &Managed;
  PM.bytesize = 256;
  M.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, &PM, CUDA_SUCCESS,
              Ctx);
  size_t Pitch = 1024;
  cuMemAllocPitch_v2_params PP{};
  PP.dptr = &Pitched;
  PP.pPitch = &Pitch;
  PP.WidthInBytes = 1000;
  PP.Height = 3;
  M.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, &PP, CUDA_SUCCESS,
              Ctx);
  // A call that failed allocated nothing.
  cuMemAlloc_v2_params PF{&Failed, 64};
  M.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &PF,
              CUDA_ERROR_OUT_OF_MEMORY, Ctx);

  std::vector<DeviceAllocation> L = M.live();
  REQUIRE(L.size() == 4);
  CHECK(L[0].Base == Managed);
  CHECK(L[0].Kind == RegionKind::Managed);
  CHECK(L[1].Base == A);
  CHECK(L[1].Size == 4096);
  CHECK(L[1].Kind == RegionKind::Device);
  CHECK(L[2].Base == B);
  CHECK(L[2].Size == 512);
  CHECK(L[3].Base == Pitched);
  CHECK(L[3].Size == 3 * 1024); // the pitch, not the width, per row

  cuMemFree_v2_params FA{A};
  M.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &FA, CUDA_SUCCESS, Ctx);
  cuMemFreeAsync_params FB{};
  FB.dptr = B;
  M.onApiExit(CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, &FB, CUDA_SUCCESS, Ctx);
  L = M.live();
  REQUIRE(L.size() == 2);
  CHECK(L[0].Base == Managed);
  CHECK(L[1].Base == Pitched);
}

// --- r3 run --use: a launch's shape under a plan and its rewrite ---

TEST_CASE("cuda inject: a planned block changes the grid by the kernel's rule",
          "[cuda][use]") {
  int N = 1000;
  void *Args[] = {&N};
  LaunchCall C;
  C.Grid = {8, 3, 1};
  C.Block = {128, 1, 1};
  C.KernelParams = Args;
  std::vector<ParamInfo> Layout = {{0, 4}};
  auto KeepThreads = parseGridRule("keep-threads");
  REQUIRE(KeepThreads);
  // No planned block: the launch's own shape.
  auto Own = plannedShape(*KeepThreads, {0, 0, 0}, C, Layout);
  REQUIRE(Own);
  CHECK(Own->first == Dim3{8, 3, 1});
  CHECK(Own->second == Dim3{128, 1, 1});
  // keep-threads: the launch's own threads, over the new block.
  auto Kept = plannedShape(*KeepThreads, {256, 1, 1}, C, Layout);
  REQUIRE(Kept);
  CHECK(Kept->first == Dim3{4, 3, 1});
  CHECK(Kept->second == Dim3{256, 1, 1});
  // An expression over this launch's own parameter (arg0 = 1000).
  auto ByArg = parseGridRule("x=ceil(arg0 / block_x)");
  REQUIRE(ByArg);
  auto FromArg = plannedShape(*ByArg, {64, 1, 1}, C, Layout);
  REQUIRE(FromArg);
  CHECK(FromArg->first == Dim3{16, 3, 1});
  // A rule naming what the launch does not have is an error, not a guess.
  auto Unknown = parseGridRule("x=ceil(n / block_x)");
  REQUIRE(Unknown);
  auto Bad = plannedShape(*Unknown, {64, 1, 1}, C, Layout);
  REQUIRE_FALSE(Bad);
}

TEST_CASE("cuda inject: a rewritten cuLaunchKernel decodes to the plan",
          "[cuda][use]") {
  int N = 7;
  void *Args[] = {&N};
  cuLaunchKernel_params P{};
  P.f = fakeFunction();
  P.gridDimX = 32, P.gridDimY = 1, P.gridDimZ = 1;
  P.blockDimX = 128, P.blockDimY = 1, P.blockDimZ = 1;
  P.sharedMemBytes = 0;
  P.kernelParams = Args;
  CUlaunchConfig Storage{};
  auto Tuned = reinterpret_cast<CUfunction>(0x5678);
  REQUIRE(rewriteLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &P, Tuned,
                        {16, 2, 1}, {256, 1, 1}, 4096, Storage));
  LaunchCall C;
  REQUIRE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &P, C));
  CHECK(C.Function == Tuned);
  CHECK(C.Grid == Dim3{16, 2, 1});
  CHECK(C.Block == Dim3{256, 1, 1});
  CHECK(C.SharedBytes == 4096);
  CHECK(C.KernelParams == Args); // the application's arguments, untouched
}

TEST_CASE("cuda inject: a rewritten cuLaunchKernelEx keeps its attributes and "
          "leaves the caller's config alone",
          "[cuda][use]") {
  CUlaunchAttribute Attr{};
  Attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  Attr.value.priority = 3;
  CUlaunchConfig Config{};
  Config.gridDimX = 10, Config.gridDimY = 1, Config.gridDimZ = 1;
  Config.blockDimX = 64, Config.blockDimY = 1, Config.blockDimZ = 1;
  Config.attrs = &Attr;
  Config.numAttrs = 1;
  cuLaunchKernelEx_params P{};
  P.config = &Config;
  P.f = fakeFunction();
  CUlaunchConfig Storage{};
  auto Tuned = reinterpret_cast<CUfunction>(0x5678);
  REQUIRE(rewriteLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &P, Tuned,
                        {5, 1, 1}, {128, 1, 1}, 0, Storage));
  CHECK(P.config == &Storage);
  CHECK(Config.gridDimX == 10); // the application's own struct is unchanged
  LaunchCall C;
  REQUIRE(decodeLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &P, C));
  CHECK(C.Function == Tuned);
  CHECK(C.Grid == Dim3{5, 1, 1});
  CHECK(C.Block == Dim3{128, 1, 1});
  CHECK(Storage.numAttrs == 1);
  CHECK(Storage.attrs == &Attr);
  // Not a launch: nothing is rewritten.
  CHECK_FALSE(rewriteLaunch(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &P, Tuned,
                            {1, 1, 1}, {1, 1, 1}, 0, Storage));
}
