// The CUDA part of `r3 export` (ExportCuda.h). The compile uses the
// campaign's compile cache, so a candidate a campaign evaluated compiles
// again in milliseconds; it runs isolated like every compile of r3.
#include "cli/ExportCuda.h"

#include "campaign/Campaign.h"
#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "cli/VariantOptions.h"
#include "compile/cuda/CudaCompiler.h"
#include "compile/cuda/VariantOptions.h"
#include "support/FileUtil.h"
#include "support/Paths.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace r3::cli {

namespace {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

/// A word for a shell command line: quoted when it needs to be.
std::string shellWord(const std::string &W) {
  bool Plain = !W.empty();
  for (char C : W)
    Plain &= std::isalnum(static_cast<unsigned char>(C)) ||
             std::string_view("-_./=,:+").find(C) != std::string_view::npos;
  if (Plain)
    return W;
  std::string Q = "'";
  for (char C : W)
    Q += C == '\'' ? std::string("'\\''") : std::string(1, C);
  return Q + "'";
}

std::string text(const json &S, const char *Key) {
  return S.contains(Key) && S[Key].is_string() ? S[Key].get<std::string>()
                                               : "";
}

/// The launch options of a replay: block and grid rule, a grid-stride
/// kernel's grid, dynamic shared memory, cache preference.
std::vector<std::string> launchWords(const CudaExportInput &In) {
  std::vector<std::string> W;
  const json &S = In.Settings;
  if (S.contains("block") && S["block"].is_array()) {
    std::vector<std::string> D;
    for (const json &V : S["block"])
      D.push_back(std::to_string(V.get<uint32_t>()));
    W.insert(W.end(), {"--block", join(D, ","), "--grid-rule",
                       In.GridRule.empty() ? "keep-threads" : In.GridRule});
  }
  // A grid-stride kernel's grid (the campaign's grid_x or grid_per_sm).
  for (auto [Key, Option] :
       {std::pair{"grid_x", "--grid-x"}, {"grid_per_sm", "--grid-per-sm"}})
    if (S.contains(Key) && S[Key].is_number_unsigned() &&
        S[Key].get<uint64_t>() > 0)
      W.insert(W.end(), {Option, std::to_string(S[Key].get<uint64_t>())});
  if (S.contains("dynamic_shared") && S["dynamic_shared"].is_number() &&
      S["dynamic_shared"].get<uint64_t>() > 0)
    W.insert(W.end(), {"--dynamic-shared",
                       std::to_string(S["dynamic_shared"].get<uint64_t>())});
  if (std::string C = text(S, "cache_preference"); !C.empty() && C != "none")
    W.insert(W.end(), {"--cache-preference", C});
  return W;
}

/// The compiler options of a replay with --source.
std::vector<std::string> compileWords(const CudaExportInput &In) {
  std::vector<std::string> W = {
      "--source", (fs::path(In.Dir) / In.SourceName).string(), "--cflags",
      join(In.Flags, " ")};
  for (std::string &X : settingsWords(In.Compiler))
    W.push_back(std::move(X));
  return W;
}

std::string replayCommand(const CudaExportInput &In) {
  std::vector<std::string> W = {"r3", "replay", In.Capture, "--kernel",
                                In.KernelName};
  if (!In.SourceText.empty())
    for (std::string &X : compileWords(In))
      W.push_back(std::move(X));
  for (std::string &X : launchWords(In))
    W.push_back(std::move(X));
  std::vector<std::string> Quoted;
  for (const std::string &X : W)
    Quoted.push_back(shellWord(X));
  return join(Quoted, " ");
}

Expected<std::vector<uint8_t>> recordedCubin(const CudaExportInput &In) {
  std::unique_ptr<CaptureReader> R;
  R3_TRY(moveInto(CaptureReader::open(In.Capture), R));
  uint32_t K = 0;
  R3_TRY(moveInto(findKernel(*R, In.KernelName), K));
  return R->readModule(R->kernels()[K].Module);
}

/// The best's compile options: its source in a temporary folder (under its
/// own name, so that messages name it), the settings the campaign measured
/// it with (launch bounds included: a cubin without them was never
/// measured), built as the campaign's worker built them.
Expected<CudaCompiled> compileBest(const CudaExportInput &In,
                                   const std::string &Tmp) {
  if (In.Compiler.specialized())
    return Error::make("the best is specialized on its recorded launch: its "
                       "cubin is not exported (the replay command rebuilds "
                       "it)");
  std::unique_ptr<CaptureReader> R;
  R3_TRY(moveInto(CaptureReader::open(In.Capture), R));
  std::string Source = (fs::path(Tmp) / In.SourceName).string();
  R3_TRY(writeFileAtomically(Source, In.SourceText));
  CudaCompileOptions O;
  R3_TRY(moveInto(cudaCompileOptions({Source, In.Flags, In.KernelName},
                                     In.Compiler, {R.get()}, defaultCacheDir()),
                  O));
  return compileCudaKernelIsolated(O);
}
} // namespace

Expected<CudaExportFiles> exportCudaCode(const CudaExportInput &In) {
  CudaExportFiles Out;
  Out.ReplayCommand = replayCommand(In);
  std::string Base = In.SourceName.empty() ? In.KernelName : In.SourceName;
  Base = fs::path(Base).stem().string();
  if (In.SourceText.empty()) {
    std::vector<uint8_t> Cubin;
    R3_TRY(moveInto(recordedCubin(In), Cubin));
    Out.Files.push_back({Base + ".cubin", std::string(Cubin.begin(), Cubin.end())});
    return Out;
  }
  auto Tmp = makeTemporaryFolder("r3-export");
  if (!Tmp)
    return Tmp.takeError();
  auto C = compileBest(In, *Tmp);
  std::error_code EC;
  fs::remove_all(*Tmp, EC);
  if (!C)
    return makeError("recompiling the best candidate: ", C.error().message());
  Out.Files.push_back(
      {Base + ".cubin", std::string(C->Cubin.begin(), C->Cubin.end())});
  Out.Files.push_back({Base + ".ptx", C->Ptx});
  return Out;
}

} // namespace r3::cli
