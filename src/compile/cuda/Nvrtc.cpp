// The second toolchain: NVRTC, NVIDIA's runtime compiler (a toolkit library,
// no GPU needed), compiles the source to PTX with the user's NVRTC flags
// (--use_fast_math, -maxrregcount=N, --extra-device-vectorization, -D, -I);
// the kernel is then found among the PTX's entries by the same naming rule as
// the LLVM toolchain's, and the PTX goes through the same nvJitLink stage.
// There is no LLVM pipeline and no IR to specialize; launch bounds and the
// register limit become PTX directives of the entry.
#include "compile/cuda/Stages.h"
#include "support/FileUtil.h"

#include <nvrtc.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace r3::cuda {

namespace {

struct Program {
  nvrtcProgram P = nullptr;
  ~Program() {
    if (P)
      nvrtcDestroyProgram(&P);
  }
};

Expected<std::string> readSource(const std::string &Path) {
  return readWholeFile(Path, "source file");
}

std::string directoryOf(const std::string &Path) {
  size_t Slash = Path.rfind('/');
  return Slash == std::string::npos ? "." : Path.substr(0, Slash);
}

std::string programLog(nvrtcProgram P) {
  size_t Size = 0;
  if (nvrtcGetProgramLogSize(P, &Size) != NVRTC_SUCCESS || Size <= 1)
    return "";
  std::string Log(Size, '\0');
  nvrtcGetProgramLog(P, Log.data());
  Log.resize(Size - 1);
  return trimmedLog(Log);
}

std::vector<std::string> nvrtcOptions(const CudaCompileOptions &O) {
  std::vector<std::string> Opts = {"--gpu-architecture=compute_" +
                                       std::to_string(O.ComputeMajor) +
                                       std::to_string(O.ComputeMinor),
                                   "-I" + directoryOf(O.SourcePath)};
  Opts.insert(Opts.end(), O.Flags.begin(), O.Flags.end());
  if (O.Settings.MaxRegisters)
    Opts.push_back("-maxrregcount=" + std::to_string(O.Settings.MaxRegisters));
  if (O.Settings.FastMath)
    Opts.push_back("--use_fast_math");
  return Opts;
}

Expected<std::string> ptxOf(nvrtcProgram P) {
  size_t Size = 0;
  if (nvrtcResult R = nvrtcGetPTXSize(P, &Size))
    return makeError("nvrtc: reading the PTX: ", nvrtcGetErrorString(R));
  std::string Ptx(Size, '\0');
  if (nvrtcResult R = nvrtcGetPTX(P, Ptx.data()))
    return makeError("nvrtc: reading the PTX: ", nvrtcGetErrorString(R));
  Ptx.resize(std::strlen(Ptx.c_str()));
  return Ptx;
}

std::vector<std::string> ptxEntries(const std::string &Ptx) {
  static const std::regex Entry(R"(\.entry\s+([A-Za-z_$][\w$]*))");
  std::vector<std::string> Names;
  for (auto It = std::sregex_iterator(Ptx.begin(), Ptx.end(), Entry);
       It != std::sregex_iterator(); ++It)
    Names.push_back((*It)[1].str());
  return Names;
}

} // namespace

Expected<NvrtcOutput> compileWithNvrtc(const CudaCompileOptions &O) {
  std::string Source;
  R3_TRY(moveInto(readSource(O.SourcePath), Source));
  Program Prog;
  if (nvrtcResult R = nvrtcCreateProgram(
          &Prog.P, Source.c_str(), O.SourcePath.c_str(), 0, nullptr, nullptr))
    return makeError("nvrtc: creating the program: ", nvrtcGetErrorString(R));
  std::vector<std::string> Opts = nvrtcOptions(O);
  std::vector<const char *> Argv;
  for (const std::string &S : Opts)
    Argv.push_back(S.c_str());
  nvrtcResult R =
      nvrtcCompileProgram(Prog.P, static_cast<int>(Argv.size()), Argv.data());
  NvrtcOutput Out;
  Out.Log = programLog(Prog.P);
  if (R != NVRTC_SUCCESS)
    return makeError("compiling '", O.SourcePath, "' with nvrtc failed (",
                     nvrtcGetErrorString(R), "):\n", Out.Log);
  R3_TRY(moveInto(ptxOf(Prog.P), Out.Ptx));
  R3_TRY(
      moveInto(resolveKernelName(ptxEntries(Out.Ptx), O.Kernel, O.SourcePath),
               Out.Kernel));
  Out.Ptx = withPtxBounds(Out.Ptx, Out.Kernel, O.Settings.Bounds,
                          O.Settings.MaxRegisters);
  return Out;
}

std::string withPtxBounds(const std::string &Ptx, const std::string &Kernel,
                          const std::optional<LaunchBoundsSpec> &Bounds,
                          uint32_t MaxRegisters) {
  size_t Entry = Ptx.find(".entry " + Kernel + "(");
  size_t Body = Entry == std::string::npos ? Entry : Ptx.find('{', Entry);
  if (Body == std::string::npos)
    return Ptx;
  std::string Directives;
  if (Bounds && Bounds->MaxThreads)
    Directives += ".maxntid " + std::to_string(Bounds->MaxThreads) + ", 1, 1\n";
  if (Bounds && Bounds->MinBlocks)
    Directives += ".minnctapersm " + std::to_string(Bounds->MinBlocks) + "\n";
  if (MaxRegisters)
    Directives += ".maxnreg " + std::to_string(MaxRegisters) + "\n";
  return Ptx.substr(0, Body) + Directives + Ptx.substr(Body);
}

std::string nvrtcIdentity() {
  int Major = 0, Minor = 0;
  nvrtcVersion(&Major, &Minor);
  return "nvrtc " + std::to_string(Major) + "." + std::to_string(Minor);
}

} // namespace r3::cuda
