// What the injection library learns about a kernel launch from the driver:
// the launch call's arguments (cuLaunchKernel, cuLaunchKernelEx and their
// per-thread-stream variants), and the kernel's name, parameter layout
// (cuFuncGetParamInfo) and attributes, from which the raw parameter buffer is
// packed as the capture stores it (parameter p at its offset and size).
#pragma once

#include "capture/Capture.h"
#include "replay/LaunchRule.h"
#include "support/Error.h"

#include <cuda.h>
#include <cupti.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace r3::cuda {

/// Why a launch cannot be recorded faithfully, or None.
enum class Unsupported { None, Cooperative, ClusterDims };

/// One launch call, decoded from its CUPTI parameter struct.
struct LaunchCall {
  CUfunction Function = nullptr;
  Dim3 Grid = {1, 1, 1}, Block = {1, 1, 1};
  uint32_t SharedBytes = 0;
  CUstream Stream = nullptr; ///< as the library's calls name it: the
                             ///< per-thread stream is CU_STREAM_PER_THREAD
  void **KernelParams = nullptr;
  void **Extra = nullptr;
  Unsupported Refusal = Unsupported::None;
};

/// The launch callbacks decodeLaunch understands.
const std::vector<CUpti_CallbackId> &launchCallbacks();
/// Decodes a launch callback's parameters; false for other callbacks.
bool decodeLaunch(CUpti_CallbackId Cbid, const void *Params, LaunchCall &Out);

/// The context's CUfunction for a launch's handle: cudart passes library
/// kernels (CUkernel, accepted by cuLaunchKernel in place of a CUfunction),
/// which the cuFunc* queries reject, so those are mapped with
/// cuKernelGetFunction.
Expected<CUfunction> contextFunction(CUfunction Handle);
/// The kernel's mangled name (cuFuncGetName).
Expected<std::string> kernelName(CUfunction F);
/// Each parameter's offset and size (cuFuncGetParamInfo), in order.
Expected<std::vector<ParamInfo>> paramLayout(CUfunction F);
/// Registers, static shared, max threads, local bytes (-1 when not reported).
FunctionAttributes attributes(CUfunction F);
/// The parameter buffer of a launch: from kernelParams (one pointer per
/// parameter) or from extra's CU_LAUNCH_PARAM_BUFFER_POINTER.
Expected<std::vector<uint8_t>> packParams(const LaunchCall &C,
                                          const std::vector<ParamInfo> &Layout);

// --- r3 run --use: a launch under a plan (InjectUse.cpp) ---

/// The grid and block of a launch when the plan sets Block (all zero: the
/// launch's own): the grid follows the launch's own grid and block through
/// Rule, whose expressions may read the launch's scalar parameters (argN,
/// from Layout).
Expected<std::pair<Dim3, Dim3>> plannedShape(const GridRule &Rule,
                                             const Dim3 &Block,
                                             const LaunchCall &C,
                                             const std::vector<ParamInfo> &Layout);

/// Rewrites a launch callback's parameters (on API enter, the driver then
/// launches what they say): the function, grid, block and dynamic shared
/// bytes. A cuLaunchKernelEx call's config is copied into Storage (which must
/// outlive the call) and pointed at, its attributes kept. False for a
/// callback decodeLaunch does not understand.
bool rewriteLaunch(CUpti_CallbackId Cbid, void *Params, CUfunction F,
                   const Dim3 &Grid, const Dim3 &Block, uint32_t SharedBytes,
                   CUlaunchConfig &Storage);

} // namespace r3::cuda
