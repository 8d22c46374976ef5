// The rewrite operator's knobs of a kernel's own source (compile/Rewrite.h):
// clang reads the file as the variants compile it, the recorded launch says
// which pointer parameters alias, and the file's text is instrumented with
// one knob per transformation.
#include "campaign/SearchState.h"

#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "compile/KernelAlone.h"
#include "compile/host/HostJit.h"
#include "support/FileUtil.h"
#include "support/Process.h"
#include "support/StringUtil.h"

#ifdef R3_HAVE_CUDA
#include "compile/cuda/CudaCompiler.h"
#endif

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace r3 {

namespace fs = std::filesystem;

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

namespace {
/// The name a kernel's source defines it by.
std::string sourceName(const KernelInfo &Info) {
  std::string Demangled = Info.Demangled.empty()
                              ? kernelNamesOf({Info.Name}).front().Demangled
                              : Info.Demangled;
  return baseName(Demangled.empty() ? Info.Name : Demangled);
}

/// A temporary file holding Text, named like File (its extension decides
/// the language).
Expected<TempFile> textFile(const std::string &File, const std::string &Text) {
  std::string Ext = fs::path(File).extension().string();
  auto T = TempFile::create(Ext.c_str());
  if (!T)
    return T.takeError();
  R3_TRY(writeFileAtomically(T->path(), Text));
  return T;
}
} // namespace

Expected<std::vector<std::string>>
SearchState::syntaxArgv(const KernelState &K, const CaptureReader &R,
                        const std::string &Path) const {
  std::vector<std::string> Flags = sourceFlags(*K.Spec, K.Model.Files.front());
  if (C.Target == Backend::Cuda) {
#ifdef R3_HAVE_CUDA
    const DeviceInfo &D = R.header().Device;
    return cudaSyntaxArgv(Path, Flags, D.ComputeMajor, D.ComputeMinor);
#else
    (void)R;
    return makeError("this r3 was built without the CUDA backend");
#endif
  }
  return hostSyntaxArgv(Path, Flags);
}

Error SearchState::extractKernel(KernelState &K, const CaptureReader &R,
                                 uint32_t Kernel) {
  const std::string &File = K.Model.Files.front();
  std::string Name = sourceName(R.kernels()[Kernel]);
  std::string &Text = K.FileTexts[File];
  KernelAlone A = kernelAlone(Text, Name);
  auto whole = [&](const std::string &Why) {
    return H.addEvent("extract", K.Spec->Name + ": compiled whole: " + Why);
  };
  if (!A.Found)
    return whole(File + " defines no function named " + Name +
                 " that r3's scanner sees");
  if (A.Dropped.empty())
    return whole("the kernel reaches every function of " + File);
  Expected<TempFile> T = textFile(File, A.Text);
  if (!T)
    return whole(T.error().message());
  auto Argv = syntaxArgv(K, R, T->path());
  if (!Argv)
    return whole(Argv.error().message());
  Argv->push_back("-fsyntax-only");
  auto Run = runCapturing(*Argv);
  if (!Run)
    return whole(Run.error().message());
  if (!Run->succeeded())
    return whole("clang does not compile it alone: " +
                 split(trimmedDiagnostics(Run->Output), '\n').front());
  size_t Lines = std::count(Text.begin(), Text.end(), '\n');
  std::string Kept = A.Kept.empty() ? "none" : join(A.Kept, ", ");
  R3_TRY(H.addEvent("extract", K.Spec->Name + ": the kernel alone, " +
                                   std::to_string(Lines - A.DroppedLines) +
                                   " of " + std::to_string(Lines) +
                                   " lines; functions kept: " + Kept +
                                   "; dropped: " + join(A.Dropped, ", ")));
  Text = std::move(A.Text);
  return Error::success();
}

Error SearchState::analyzeSource(KernelState &K, const CaptureReader &R,
                                 uint32_t Kernel, bool Rewrite, bool Grid) {
  const std::string &File = K.Model.Files.front();
  const KernelInfo &Info = R.kernels()[Kernel];
  std::string Name = sourceName(Info);
  std::vector<ParamFact> Facts;
  if (!K.Launches.empty())
    Facts = paramFacts(Info, R.launches()[K.Launches.front()]);
  // clang reads the text the variants compile (the kernel alone, where it
  // is extracted), as a file of its own.
  Expected<TempFile> T = textFile(File, K.FileTexts[File]);
  Expected<std::vector<std::string>> Argv =
      T ? syntaxArgv(K, R, T->path())
        : Expected<std::vector<std::string>>(T.takeError());
  Expected<RewriteModel> M = Argv ? rewritesOf(std::move(*Argv), T->path(),
                                               K.FileTexts[File], Name, Facts)
                                  : Expected<RewriteModel>(Argv.takeError());
  if (!M) {
    if (Grid)
      R3_TRY(H.addEvent("grid", K.Spec->Name +
                                    ": not known to stride over "
                                    "its grid (grid_x and "
                                    "grid_per_sm do not apply): " +
                                    M.error().message()));
    if (!Rewrite)
      return Error::success();
    return H.addEvent("rewrite",
                      K.Spec->Name + ": no rewrites: " + M.error().message());
  }
  if (Grid) {
    K.GridStride = M->GridStride;
    bool Rewritten =
        Rewrite &&
        std::any_of(M->Sites.begin(), M->Sites.end(), [](const RewriteSite &S) {
          return S.What == RewriteSite::Kind::GridStride;
        });
    R3_TRY(H.addEvent(
        "grid",
        K.Spec->Name +
            (M->GridStride ? ": a loop of its source reads gridDim: "
                             "grid-stride, grid_x and grid_per_sm apply"
             : Rewritten   ? ": no loop of its source reads gridDim: grid_x "
                             "and grid_per_sm apply to the variants the "
                             "rewrite R3_RW_GRIDSTRIDE makes grid-stride"
                           : ": no loop of its source reads gridDim: grid_x "
                             "and grid_per_sm do not apply (grid_stride = "
                             "true says otherwise)")));
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
