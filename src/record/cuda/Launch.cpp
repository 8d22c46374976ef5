// Launch decoding and the kernel's description from the driver.
#include "record/cuda/Launch.h"

#include "record/cuda/Driver.h"

#include <cupti.h> // its generated_cuda_meta.h: the parameter structs

#include <cstring>

namespace r3::cuda {

namespace {
void decodeConfig(const CUlaunchConfig &C, LaunchCall &Out) {
  Out.Grid = {C.gridDimX, C.gridDimY, C.gridDimZ};
  Out.Block = {C.blockDimX, C.blockDimY, C.blockDimZ};
  Out.SharedBytes = C.sharedMemBytes;
  Out.Stream = C.hStream;
  for (unsigned I = 0; I < C.numAttrs; ++I) {
    const CUlaunchAttribute &A = C.attrs[I];
    if (A.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && A.value.cooperative)
      Out.Refusal = Unsupported::Cooperative;
    if (A.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
        A.value.clusterDim.x * A.value.clusterDim.y * A.value.clusterDim.z > 1)
      Out.Refusal = Unsupported::ClusterDims;
  }
}

std::vector<uint8_t> fromExtra(void **Extra) {
  void *Buffer = nullptr;
  size_t Size = 0;
  for (void **E = Extra; E && *E != CU_LAUNCH_PARAM_END; E += 2) {
    if (*E == CU_LAUNCH_PARAM_BUFFER_POINTER)
      Buffer = E[1];
    else if (*E == CU_LAUNCH_PARAM_BUFFER_SIZE)
      Size = *static_cast<size_t *>(E[1]);
  }
  const auto *B = static_cast<const uint8_t *>(Buffer);
  return B ? std::vector<uint8_t>(B, B + Size) : std::vector<uint8_t>();
}
} // namespace

const std::vector<CUpti_CallbackId> &launchCallbacks() {
  static const std::vector<CUpti_CallbackId> Ids = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
  };
  return Ids;
}

namespace {
bool perThreadStream(CUpti_CallbackId Cbid) {
  return Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
         Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
         Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
}

bool decodeCall(CUpti_CallbackId Cbid, const void *Params, LaunchCall &Out) {
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    Out.Refusal = Unsupported::Cooperative;
    [[fallthrough]]; // the same layout as cuLaunchKernel, without extra
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
    const auto &P = *static_cast<const cuLaunchKernel_params *>(Params);
    Out.Function = P.f;
    Out.Grid = {P.gridDimX, P.gridDimY, P.gridDimZ};
    Out.Block = {P.blockDimX, P.blockDimY, P.blockDimZ};
    Out.SharedBytes = P.sharedMemBytes;
    Out.Stream = P.hStream;
    Out.KernelParams = P.kernelParams;
    if (Out.Refusal == Unsupported::None)
      Out.Extra = P.extra;
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    const auto &P = *static_cast<const cuLaunchKernelEx_params *>(Params);
    Out.Function = P.f;
    Out.KernelParams = P.kernelParams;
    Out.Extra = P.extra;
    if (P.config)
      decodeConfig(*P.config, Out);
    return true;
  }
  default:
    return false;
  }
}
} // namespace

bool decodeLaunch(CUpti_CallbackId Cbid, const void *Params, LaunchCall &Out) {
  if (!decodeCall(Cbid, Params, Out))
    return false;
  // A per-thread-stream entry point's null stream is the thread's default
  // stream, which the library's own (legacy) calls name explicitly.
  if (perThreadStream(Cbid) && !Out.Stream)
    Out.Stream = CU_STREAM_PER_THREAD;
  return true;
}

Expected<CUfunction> contextFunction(CUfunction Handle) {
  const char *Name = nullptr;
  if (cuFuncGetName(&Name, Handle) == CUDA_SUCCESS)
    return Handle;
  CUfunction F = nullptr;
  R3_TRY(check(cuKernelGetFunction(&F, reinterpret_cast<CUkernel>(Handle)),
               "cuKernelGetFunction"));
  return F;
}

Expected<std::string> kernelName(CUfunction F) {
  const char *Name = nullptr;
  R3_TRY(check(cuFuncGetName(&Name, F), "cuFuncGetName"));
  return std::string(Name ? Name : "");
}

Expected<std::vector<ParamInfo>> paramLayout(CUfunction F) {
  std::vector<ParamInfo> Out;
  for (size_t I = 0;; ++I) {
    size_t Offset = 0, Size = 0;
    CUresult R = cuFuncGetParamInfo(F, I, &Offset, &Size);
    if (R == CUDA_ERROR_INVALID_VALUE)
      return Out; // past the last parameter
    R3_TRY(check(R, "cuFuncGetParamInfo"));
    Out.push_back({Offset, Size});
  }
}

FunctionAttributes attributes(CUfunction F) {
  auto get = [F](CUfunction_attribute A) -> int64_t {
    int V = 0;
    return cuFuncGetAttribute(&V, A, F) == CUDA_SUCCESS ? V : -1;
  };
  FunctionAttributes A;
  A.Registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  A.StaticSharedBytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  A.MaxThreadsPerBlock = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  A.LocalBytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  return A;
}

Expected<std::vector<uint8_t>>
packParams(const LaunchCall &C, const std::vector<ParamInfo> &Layout) {
  if (!C.KernelParams && C.Extra)
    return fromExtra(C.Extra);
  uint64_t Size = 0;
  for (const ParamInfo &P : Layout)
    Size = std::max(Size, P.Offset + P.Size);
  std::vector<uint8_t> Buffer(Size, 0);
  if (!Layout.empty() && !C.KernelParams)
    return Error::make("the launch passes neither kernelParams nor extra, but "
                       "the kernel takes parameters");
  for (size_t I = 0; I < Layout.size(); ++I)
    std::memcpy(Buffer.data() + Layout[I].Offset, C.KernelParams[I],
                Layout[I].Size);
  return Buffer;
}

Expected<std::pair<Dim3, Dim3>>
plannedShape(const GridRule &Rule, const Dim3 &Block, const LaunchCall &C,
             const std::vector<ParamInfo> &Layout) {
  if (Block[0] == 0)
    return std::make_pair(C.Grid, C.Block);
  LaunchValues V;
  V.RecordedGrid = C.Grid;
  V.RecordedBlock = C.Block;
  V.Block = Block;
  if (Rule.Mode == GridRule::Expressions) {
    LaunchInfo Info;
    Info.Grid = C.Grid;
    Info.Block = C.Block;
    R3_TRY(moveInto(packParams(C, Layout), Info.Params));
    KernelInfo K;
    K.Params = Layout;
    V.Params = paramValues(Info, K);
  }
  Dim3 Grid;
  R3_TRY(moveInto(applyGridRule(Rule, V), Grid));
  return std::make_pair(Grid, Block);
}

bool rewriteLaunch(CUpti_CallbackId Cbid, void *Params, CUfunction F,
                   const Dim3 &Grid, const Dim3 &Block, uint32_t SharedBytes,
                   CUlaunchConfig &Storage) {
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
    auto &P = *static_cast<cuLaunchKernel_params *>(Params);
    P.f = F;
    P.gridDimX = Grid[0];
    P.gridDimY = Grid[1];
    P.gridDimZ = Grid[2];
    P.blockDimX = Block[0];
    P.blockDimY = Block[1];
    P.blockDimZ = Block[2];
    P.sharedMemBytes = SharedBytes;
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    auto &P = *static_cast<cuLaunchKernelEx_params *>(Params);
    if (!P.config)
      return false;
    Storage = *P.config;
    Storage.gridDimX = Grid[0];
    Storage.gridDimY = Grid[1];
    Storage.gridDimZ = Grid[2];
    Storage.blockDimX = Block[0];
    Storage.blockDimY = Block[1];
    Storage.blockDimZ = Block[2];
    Storage.sharedMemBytes = SharedBytes;
    P.config = &Storage;
    P.f = F;
    return true;
  }
  default:
    return false;
  }
}

} // namespace r3::cuda
