// A CUDA variant's compile options (VariantOptions.h).
#include "compile/cuda/VariantOptions.h"

#include "capture/CaptureReader.h"
#include "replay/LaunchRule.h"

namespace r3 {

namespace {
/// The recorded values of launch L, with the grid a changed block gives.
Expected<Specialization> specializationOf(const VariantLaunch &L) {
  const CaptureReader &R = *L.Capture;
  if (L.Index >= R.launches().size())
    return makeError(R.path(), ": no launch ", L.Index, " (the capture holds ",
                     R.launches().size(), ")");
  const LaunchInfo &Info = R.launches()[L.Index];
  const KernelInfo &K = R.kernels().at(Info.Kernel);
  Specialization S{K.Params, Info.Params, Info.Grid, Info.Block};
  if (!L.Block)
    return S;
  GridRule Rule;
  R3_TRY(moveInto(
      parseGridRule(L.GridRule.empty() ? "keep-threads" : L.GridRule), Rule));
  LaunchValues V{Info.Grid, Info.Block, *L.Block, paramValues(Info, K)};
  R3_TRY(moveInto(applyGridRule(Rule, V), S.Grid));
  S.Block = *L.Block;
  return S;
}
} // namespace

Expected<CudaCompileOptions> cudaCompileOptions(const VariantSource &Source,
                                                const CompileSettings &Settings,
                                                const VariantLaunch &Launch,
                                                std::string CacheDir) {
  CudaCompileOptions O;
  O.SourcePath = Source.Path;
  O.Flags = Source.Flags;
  O.Kernel = Source.Kernel;
  O.Settings = Settings;
  O.CacheDir = std::move(CacheDir);
  if (Launch.Capture) {
    const CaptureHeader &H = Launch.Capture->header();
    O.ComputeMajor = H.Device.ComputeMajor;
    O.ComputeMinor = H.Device.ComputeMinor;
    if (O.ComputeMajor <= 0)
      return makeError(Launch.Capture->path(),
                       ": the capture does not say which compute capability "
                       "it was recorded on");
  }
  if (!Settings.specialized())
    return O;
  if (!Launch.Capture)
    return Error::make("specialization folds in a recorded launch's values: "
                       "it needs a capture");
  Specialization S;
  R3_TRY(moveInto(specializationOf(Launch), S));
  O.Specialize = std::move(S);
  return O;
}

} // namespace r3
