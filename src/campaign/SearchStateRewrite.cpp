// The rewrite operator's knobs of a kernel's own source (compile/Rewrite.h):
// clang reads the file as the variants compile it, the recorded launch says
// which pointer parameters alias, and the file's text is instrumented with
// one knob per transformation.
#include "campaign/SearchState.h"

#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "compile/host/HostJit.h"
#include "support/StringUtil.h"

#ifdef R3_HAVE_CUDA
#include "compile/cuda/CudaCompiler.h"
#endif

#include <algorithm>
#include <cstring>

namespace r3 {

std::vector<ParamFact> paramFacts(const KernelInfo &K, const LaunchInfo &L) {
  std::vector<ParamFact> Facts;
  for (const ParamInfo &P : K.Params) {
    ParamFact F;
    if (P.Size == 8 && P.Offset + 8 <= L.Params.size()) {
      uint64_t V = 0;
      std::memcpy(&V, L.Params.data() + P.Offset, 8);
      for (size_t R = 0; R < L.Regions.size(); ++R) {
        const RegionInfo &G = L.Regions[R];
        if (V >= G.Base && V - G.Base < G.Size) {
          F.Pointer = true;
          F.Region = R;
          F.RegionWritten = G.Changed;
          break;
        }
      }
    }
    Facts.push_back(F);
  }
  return Facts;
}

Error SearchState::analyzeSource(KernelState &K, const CaptureReader &R,
                                 uint32_t Kernel, bool Rewrite, bool Grid) {
  const std::string &File = K.Model.Files.front();
  const KernelInfo &Info = R.kernels()[Kernel];
  std::string Demangled = Info.Demangled.empty()
                              ? kernelNamesOf({Info.Name}).front().Demangled
                              : Info.Demangled;
  std::string Name = baseName(Demangled.empty() ? Info.Name : Demangled);
  std::vector<ParamFact> Facts;
  if (!K.Launches.empty())
    Facts = paramFacts(Info, R.launches()[K.Launches.front()]);
  std::vector<std::string> Flags = sourceFlags(*K.Spec, File);
  Expected<std::vector<std::string>> Argv = std::vector<std::string>{};
  if (C.Target == Backend::Cuda) {
#ifdef R3_HAVE_CUDA
    const DeviceInfo &D = R.header().Device;
    Argv = cudaSyntaxArgv(File, Flags, D.ComputeMajor, D.ComputeMinor);
#else
    Argv = makeError("this r3 was built without the CUDA backend");
#endif
  } else {
    Argv = hostSyntaxArgv(File, Flags);
  }
  Expected<RewriteModel> M =
      Argv ? rewritesOf(std::move(*Argv), File, K.FileTexts[File], Name, Facts)
           : Expected<RewriteModel>(Argv.takeError());
  if (!M) {
    if (Grid)
      R3_TRY(H.addEvent("grid", K.Spec->Name + ": not known to stride over "
                                               "its grid (grid_x and "
                                               "grid_per_sm do not apply): " +
                                    M.error().message()));
    if (!Rewrite)
      return Error::success();
    return H.addEvent("rewrite", K.Spec->Name + ": no rewrites: " +
                                     M.error().message());
  }
  if (Grid) {
    K.GridStride = M->GridStride;
    R3_TRY(H.addEvent(
        "grid", K.Spec->Name + (M->GridStride
                                    ? ": a loop of its source reads gridDim: "
                                      "grid-stride, grid_x and grid_per_sm "
                                      "apply"
                                    : ": no loop of its source reads gridDim: "
                                      "grid_x and grid_per_sm do not apply "
                                      "(grid_stride = true says otherwise)")));
  }
  if (!Rewrite)
    return Error::success();
  std::vector<std::string> Offered;
  for (const RewriteSite &S : M->Sites) {
    K.Model.Knobs.push_back({S.Knob, S.Values});
    K.RewriteSites[S.Knob] = S.Describe;
    Offered.push_back(S.Knob + " (" + S.Describe + ": " + join(S.Values, "|") +
                      ")");
  }
  if (M->Sites.empty())
    return H.addEvent("rewrite", K.Spec->Name + ": no transformation applies");
  K.FileTexts[File] = instrument(K.FileTexts[File], *M);
  return H.addEvent("rewrite", K.Spec->Name + ": " + join(Offered, "; "));
}

} // namespace r3
