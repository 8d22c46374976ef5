// PTX → cubin in this process with nvJitLink (a toolkit library, not the
// driver: no GPU is needed), and the kernel's resources. ptxas reports them
// in nvJitLink's info log when asked for verbose output:
//
//   ptxas info    : Compiling entry function '_Z8jacobi2dPKfPfii' for 'sm_90'
//   ptxas info    : Function properties for _Z8jacobi2dPKfPfii
//       16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
//   ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem, ...
//
// When a line is missing, the cubin itself is read: its .nv.info section holds
// per-function attributes (EIATTR_REGCOUNT 0x2f, EIATTR_FRAME_SIZE 0x11, each
// a symbol index and a value), and the static shared memory is the size of
// .nv.shared.<kernel>.
#include "compile/cuda/Stages.h"
#include "support/StringUtil.h"

#include <nvJitLink.h>

#include <cstring>
#include <regex>
#include <sstream>

namespace r3::cuda {

namespace {

std::string linkLog(nvJitLinkHandle H, bool Errors) {
  size_t Size = 0;
  if ((Errors ? nvJitLinkGetErrorLogSize(H, &Size)
              : nvJitLinkGetInfoLogSize(H, &Size)) != NVJITLINK_SUCCESS ||
      Size <= 1)
    return "";
  std::string Log(Size, '\0');
  if ((Errors ? nvJitLinkGetErrorLog(H, Log.data())
              : nvJitLinkGetInfoLog(H, Log.data())) != NVJITLINK_SUCCESS)
    return "";
  Log.resize(std::strlen(Log.c_str()));
  return Log;
}

/// Owns an nvJitLink handle.
struct Handle {
  nvJitLinkHandle H = nullptr;
  ~Handle() {
    if (H)
      nvJitLinkDestroy(&H);
  }
};

/// nvJitLink takes -O0 or -O3 only; ptxas gets the exact level.
std::vector<std::string> linkOptions(const CudaCompileOptions &O) {
  std::vector<std::string> Opts = {
      "-arch=" + smName(O.ComputeMajor, O.ComputeMinor),
      O.Settings.CodegenOpt == 0 ? "-O0" : "-O3",
      "-Xptxas=-O" + std::to_string(O.Settings.CodegenOpt), "-verbose",
      "-Xptxas=-v"};
  if (O.Settings.MaxRegisters)
    Opts.push_back("-maxrregcount=" + std::to_string(O.Settings.MaxRegisters));
  return Opts;
}

const char *resultName(nvJitLinkResult R) {
  switch (R) {
  case NVJITLINK_ERROR_UNRECOGNIZED_OPTION:
    return "unrecognized option";
  case NVJITLINK_ERROR_MISSING_ARCH:
    return "missing architecture";
  case NVJITLINK_ERROR_INVALID_INPUT:
    return "invalid input";
  case NVJITLINK_ERROR_PTX_COMPILE:
    return "PTX compilation failed";
  case NVJITLINK_ERROR_NVVM_COMPILE:
    return "NVVM compilation failed";
  case NVJITLINK_ERROR_INTERNAL:
    return "internal error";
  default:
    return "error";
  }
}

Error linkFailure(nvJitLinkResult R, const char *Step, nvJitLinkHandle H) {
  std::string Log = H ? linkLog(H, true) : "";
  return makeError("nvJitLink ", Step, " failed (", resultName(R), ", code ",
                   static_cast<int>(R), ")", Log.empty() ? "" : ":\n",
                   trimmedLog(Log));
}

/// A count from ptxas's log; one too large to be true reads as -1.
int64_t number(const std::smatch &M, size_t I) {
  auto N = parseInteger(M[I].str(), 0, INT64_MAX);
  return N ? *N : -1;
}

/// Whether a log line starts the section of function Name.
std::optional<std::string> functionOf(const std::string &Line) {
  static const std::regex Entry(R"(Compiling entry function '([^']+)')");
  static const std::regex Properties(R"(Function properties for (\S+))");
  std::smatch M;
  if (std::regex_search(Line, M, Entry) ||
      std::regex_search(Line, M, Properties))
    return M[1].str();
  return std::nullopt;
}

void readLine(const std::string &Line, CudaCompileReport &R) {
  static const std::regex Used(R"(Used (\d+) registers)");
  static const std::regex Smem(R"((\d+) bytes smem)");
  static const std::regex Frame(R"((\d+) bytes stack frame)");
  static const std::regex Spill(R"((\d+) bytes spill stores)");
  std::smatch M;
  if (std::regex_search(Line, M, Used)) {
    R.Registers = number(M, 1);
    R.SharedBytes = std::regex_search(Line, M, Smem) ? number(M, 1) : 0;
  }
  if (std::regex_search(Line, M, Frame))
    R.LocalBytes = number(M, 1);
  if (std::regex_search(Line, M, Spill))
    R.Spills = number(M, 1);
}

// --- the cubin's ELF sections, when the log lacks a value ---

template <typename T>
bool readAt(const std::vector<uint8_t> &B, uint64_t Off, T &Out) {
  if (Off > B.size() || B.size() - Off < sizeof(T))
    return false;
  std::memcpy(&Out, B.data() + Off, sizeof(T));
  return true;
}

struct Section {
  std::string Name;
  uint64_t Offset = 0, Size = 0;
  uint32_t Link = 0;
};

std::vector<Section> elfSections(const std::vector<uint8_t> &B) {
  uint64_t ShOff = 0;
  uint16_t ShEntSize = 0, ShNum = 0, ShStrIdx = 0;
  if (B.size() < 64 ||
      std::memcmp(B.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      !readAt(B, 0x28, ShOff) || !readAt(B, 0x3a, ShEntSize) ||
      !readAt(B, 0x3c, ShNum) || !readAt(B, 0x3e, ShStrIdx) || ShEntSize < 64 ||
      ShStrIdx >= ShNum)
    return {};
  uint64_t StrOff = 0;
  if (!readAt(B, ShOff + uint64_t(ShStrIdx) * ShEntSize + 0x18, StrOff))
    return {};
  std::vector<Section> Out;
  for (uint16_t I = 0; I < ShNum; ++I) {
    uint64_t At = ShOff + uint64_t(I) * ShEntSize;
    uint32_t NameOff = 0;
    Section S;
    if (!readAt(B, At, NameOff) || !readAt(B, At + 0x18, S.Offset) ||
        !readAt(B, At + 0x20, S.Size) || !readAt(B, At + 0x28, S.Link) ||
        StrOff + NameOff >= B.size())
      return Out;
    const char *Name = reinterpret_cast<const char *>(&B[StrOff + NameOff]);
    S.Name.assign(Name, strnlen(Name, B.size() - StrOff - NameOff));
    Out.push_back(std::move(S));
  }
  return Out;
}

std::string nameAt(const std::vector<uint8_t> &B, uint64_t Off) {
  if (Off >= B.size())
    return "";
  const char *P = reinterpret_cast<const char *>(&B[Off]);
  return std::string(P, strnlen(P, B.size() - Off));
}

/// The index of Kernel in the symbol table, if it is there.
std::optional<uint32_t> symbolIndex(const std::vector<uint8_t> &B,
                                    const std::vector<Section> &Sections,
                                    const std::string &Kernel) {
  for (const Section &S : Sections) {
    if (S.Name != ".symtab" || S.Link >= Sections.size())
      continue;
    for (uint64_t I = 0; I * 24 + 24 <= S.Size; ++I) {
      uint32_t NameOff = 0;
      if (!readAt(B, S.Offset + I * 24, NameOff))
        return std::nullopt;
      if (nameAt(B, Sections[S.Link].Offset + NameOff) == Kernel)
        return static_cast<uint32_t>(I);
    }
  }
  return std::nullopt;
}

/// The EIATTR_REGCOUNT and EIATTR_FRAME_SIZE of symbol Symbol in .nv.info.
void readNvInfo(const std::vector<uint8_t> &B, const Section &S,
                uint32_t Symbol, CudaCompileReport &R) {
  constexpr uint8_t FormatValue = 4, RegCount = 0x2f, FrameSize = 0x11;
  for (uint64_t P = 0; P + 4 <= S.Size;) {
    uint8_t Format = 0, Attr = 0;
    uint16_t Size = 0;
    if (!readAt(B, S.Offset + P, Format) ||
        !readAt(B, S.Offset + P + 1, Attr) ||
        !readAt(B, S.Offset + P + 2, Size))
      return;
    uint32_t Sym = 0, Value = 0;
    bool Pair = Format == FormatValue && Size == 8 &&
                readAt(B, S.Offset + P + 4, Sym) &&
                readAt(B, S.Offset + P + 8, Value) && Sym == Symbol;
    if (Pair && Attr == RegCount && R.Registers < 0)
      R.Registers = Value;
    if (Pair && Attr == FrameSize && R.LocalBytes < 0)
      R.LocalBytes = Value;
    P += 4 + (Format == FormatValue ? Size : 0);
  }
}

void readCubinResources(const std::vector<uint8_t> &Cubin,
                        const std::string &Kernel, CudaCompileReport &R) {
  std::vector<Section> Sections = elfSections(Cubin);
  auto Symbol = symbolIndex(Cubin, Sections, Kernel);
  for (const Section &S : Sections) {
    if (S.Name == ".nv.info" && Symbol)
      readNvInfo(Cubin, S, *Symbol, R);
    if (S.Name == ".nv.shared." + Kernel && R.SharedBytes <= 0)
      R.SharedBytes = static_cast<int64_t>(S.Size);
  }
  if (R.Registers >= 0 && R.SharedBytes < 0)
    R.SharedBytes = 0;
}

} // namespace

std::string trimmedLog(const std::string &Log) {
  size_t Last = Log.find_last_not_of(" \t\r\n");
  return Last == std::string::npos ? "" : Log.substr(0, Last + 1);
}

Expected<LinkOutput> linkPtx(const std::string &Ptx,
                             const CudaCompileOptions &O) {
  std::vector<std::string> Opts = linkOptions(O);
  std::vector<const char *> Argv;
  for (const std::string &S : Opts)
    Argv.push_back(S.c_str());
  Handle H;
  if (nvJitLinkResult R = nvJitLinkCreate(
          &H.H, static_cast<uint32_t>(Argv.size()), Argv.data()))
    return linkFailure(R, "create", nullptr);
  if (nvJitLinkResult R = nvJitLinkAddData(H.H, NVJITLINK_INPUT_PTX, Ptx.data(),
                                           Ptx.size(), "kernel.ptx"))
    return linkFailure(R, "reading the PTX", H.H);
  if (nvJitLinkResult R = nvJitLinkComplete(H.H))
    return linkFailure(R, "compiling the PTX", H.H);
  size_t Size = 0;
  if (nvJitLinkResult R = nvJitLinkGetLinkedCubinSize(H.H, &Size))
    return linkFailure(R, "sizing the cubin", H.H);
  LinkOutput Out;
  Out.Cubin.resize(Size);
  if (nvJitLinkResult R = nvJitLinkGetLinkedCubin(H.H, Out.Cubin.data()))
    return linkFailure(R, "copying the cubin", H.H);
  Out.Log = trimmedLog(linkLog(H.H, false));
  return Out;
}

void readResources(const std::string &Log, const std::vector<uint8_t> &Cubin,
                   CudaCompileReport &R) {
  std::istringstream In(Log);
  std::string Current;
  bool Seen = Log.find(R.Kernel) != std::string::npos;
  for (std::string Line; std::getline(In, Line);) {
    if (auto F = functionOf(Line))
      Current = *F;
    if (!Seen || Current == R.Kernel)
      readLine(Line, R);
  }
  if (R.Registers < 0 || R.SharedBytes < 0)
    readCubinResources(Cubin, R.Kernel, R);
}

std::string linkerIdentity() {
  unsigned Major = 0, Minor = 0;
  nvJitLinkVersion(&Major, &Minor);
  return "nvJitLink " + std::to_string(Major) + "." + std::to_string(Minor);
}

} // namespace r3::cuda
