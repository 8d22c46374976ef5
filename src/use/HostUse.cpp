// libr3-host-use.so (HostUse.h): loaded into an application built with r3's
// host instrumentation when `r3 run --use` applies a campaign's results. It
// compiles each tuned kernel with the host JIT that measured it (the same
// pipeline and code generation level, its globals bound to the application's
// own), and compares outputs under a campaign's tolerance when launches are
// verified.
#include "use/HostUse.h"

#include "compile/host/HostJit.h"
#include "replay/Verify.h"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace {

void copyMessage(const std::string &Text, char *Out, size_t Size) {
  if (!Out || Size == 0)
    return;
  size_t N = std::min(Text.size(), Size - 1);
  std::memcpy(Out, Text.data(), N);
  Out[N] = 0;
}

std::mutex JitLock;

r3::Expected<r3::HostEntry>
compile(std::span<const uint8_t> Bitcode, const std::string &Kernel,
        const std::map<std::string, uint64_t> &Globals, std::string Pipeline,
        int CodegenOpt) {
  std::lock_guard<std::mutex> L(JitLock);
  // One JIT for the process; never destroyed, as its code runs until exit.
  static r3::HostJit *Jit = nullptr;
  if (!Jit) {
    auto J = r3::HostJit::create();
    if (!J)
      return J.takeError();
    Jit = J->release();
  }
  int Level = 2;
  R3_TRY(r3::moveInto(r3::recordedOptLevel(Bitcode), Level));
  r3::HostCompileOptions O;
  O.Pipeline = Pipeline.empty() ? "default<O" + std::to_string(Level) + ">"
                                : std::move(Pipeline);
  O.CodegenOpt = CodegenOpt < 0 ? Level : CodegenOpt;
  r3::HostCompileReport Report;
  return Jit->compile(Bitcode, Kernel, Globals, O, Report);
}

} // namespace

extern "C" __attribute__((visibility("default"))) r3_host_entry
r3_host_use_compile(const uint8_t *Bitcode, uint64_t Size, const char *Kernel,
                    const r3_host_use_global *Globals, uint32_t NumGlobals,
                    const char *Pipeline, int CodegenOpt, char *Error,
                    size_t ErrorSize) {
  std::map<std::string, uint64_t> Addresses;
  for (uint32_t I = 0; I < NumGlobals; ++I)
    Addresses[Globals[I].name] = Globals[I].address;
  auto E = compile(std::span(Bitcode, Size), Kernel, Addresses,
                   Pipeline ? Pipeline : "", CodegenOpt);
  if (!E) {
    copyMessage(E.error().message(), Error, ErrorSize);
    return nullptr;
  }
  return *E;
}

extern "C" __attribute__((visibility("default"))) int
r3_host_use_compare(const char *Label, const uint8_t *Expected,
                    const uint8_t *Actual, uint64_t Size, int Tolerance,
                    double Value, int Type, char *Message,
                    size_t MessageSize) {
  r3::VerifySettings S;
  S.Tolerance = static_cast<r3::ToleranceKind>(Tolerance);
  S.Value = Value;
  S.Type = static_cast<r3::ElementType>(Type);
  r3::Verifier V(S);
  V.checkRegion({Label, std::span(Expected, Size), std::span(Actual, Size),
                 r3::RegionRole::Output});
  if (V.report().passed())
    return 1;
  copyMessage(V.report().message(), Message, MessageSize);
  return 0;
}
