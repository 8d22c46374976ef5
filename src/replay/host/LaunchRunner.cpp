// Running one recorded launch of a host kernel: restore, run, verify, time.
#include "replay/host/LaunchRunner.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>
#include <ctime>
#include <sys/wait.h>
#include <unistd.h>

namespace r3 {

namespace {
uint64_t nowNs() {
  timespec T;
  ::clock_gettime(CLOCK_MONOTONIC, &T);
  return static_cast<uint64_t>(T.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(T.tv_nsec);
}

std::string secondsText(double S) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.3g s", S);
  return Buf;
}

void restore(const LaunchImage &L) {
  for (size_t I = 0; I < L.Regions.size(); ++I)
    std::memcpy(reinterpret_cast<void *>(L.Regions[I].Base), L.Pre[I].data(),
                L.Pre[I].size());
}

void poison(const LaunchImage &L) {
  for (size_t I = 0; I < L.Regions.size(); ++I) {
    if (L.Post[I].empty())
      continue;
    auto *Live = reinterpret_cast<uint8_t *>(L.Regions[I].Base);
    poisonOutputs(std::span(Live, L.Pre[I].size()), L.Pre[I], L.Post[I]);
  }
}

/// Calls Entry once on L's slots; returns the time and the return value.
uint64_t timedCall(HostEntry Entry, const LaunchImage &L, uint64_t &Ret) {
  uint64_t T0 = nowNs();
  Ret = Entry(L.Slots.data());
  return nowNs() - T0;
}

VerifyReport check(const LaunchImage &L, const KernelSignature &Sig,
                   const VerifySettings &S, uint64_t Ret) {
  Verifier V(S);
  for (size_t I = 0; I < L.Regions.size(); ++I) {
    const RegionInfo &R = L.Regions[I];
    bool Out = !L.Post[I].empty();
    std::span<const uint8_t> Live(reinterpret_cast<const uint8_t *>(R.Base),
                                  L.Pre[I].size());
    V.checkRegion({L.Spans[I].Label, Out ? L.Post[I] : L.Pre[I], Live,
                   Out ? RegionRole::Output : RegionRole::Unchanged});
  }
  if (Sig.ReturnSize)
    V.checkReturn(Sig.Return, Sig.ReturnSize, L.Slots[Sig.NumParams], Ret);
  return V.report();
}

/// The verification run: restore, poison, run, check.
LaunchOutcome verificationRun(const LaunchImage &L, HostEntry Entry,
                              const KernelSignature &Sig,
                              const RunSettings &S) {
  LaunchOutcome O;
  if (S.Tick)
    S.Tick();
  restore(L);
  if (S.Poison == Poisoning::On)
    poison(L);
  uint64_t Ret = 0;
  uint64_t Ns = timedCall(Entry, L, Ret);
  if (Ns > S.TimeoutSeconds * 1e9) {
    O.Failure = FailureKind::Timeout;
    O.Message = "launch " + std::to_string(L.Index) +
                ": the verification run took " + secondsText(Ns / 1e9) +
                ", more than the timeout of " + secondsText(S.TimeoutSeconds);
    return O;
  }
  VerifyReport Report = check(L, Sig, S.Verify, Ret);
  if (!Report.passed()) {
    O.Failure = FailureKind::WrongResult;
    O.Message = "launch " + std::to_string(L.Index) + ": " + Report.message();
  }
  return O;
}

/// Warm-ups, then the timed repetitions; the pre-state restored before each.
LaunchOutcome timedRuns(const LaunchImage &L, HostEntry Entry,
                        const RunSettings &S) {
  LaunchOutcome O;
  uint64_t Ret;
  for (uint32_t I = 0; I < S.Warmup || !S.Reps.enough(O.TimesNs); ++I) {
    if (S.Tick)
      S.Tick();
    restore(L);
    uint64_t Ns = timedCall(Entry, L, Ret);
    if (Ns > S.TimeoutSeconds * 1e9) {
      O.Failure = FailureKind::Timeout;
      O.Message = "launch " + std::to_string(L.Index) + ": run " +
                  std::to_string(I + 1) + " took " + secondsText(Ns / 1e9) +
                  ", more than the timeout of " + secondsText(S.TimeoutSeconds);
      return O;
    }
    if (I >= S.Warmup)
      O.TimesNs.push_back(Ns);
  }
  return O;
}

ValueType valueType(const llvm::Type *T) {
  if (T->isFloatTy())
    return ValueType::F32;
  if (T->isDoubleTy())
    return ValueType::F64;
  return ValueType::Bits;
}
} // namespace

Expected<LaunchImage> loadLaunch(const CaptureReader &R, uint32_t Launch) {
  const LaunchInfo &Info = R.launches()[Launch];
  LaunchImage L;
  L.Index = Launch;
  L.Regions = Info.Regions;
  L.Slots.resize(Info.Params.size() / 8);
  std::memcpy(L.Slots.data(), Info.Params.data(), L.Slots.size() * 8);
  if (Info.Params.size() % 8)
    L.Slots.clear(); // slotMismatch() reports it
  for (uint32_t I = 0; I < Info.Regions.size(); ++I) {
    const RegionInfo &Reg = Info.Regions[I];
    L.Spans.push_back({Reg.Base, Reg.Size, regionLabel(Reg, I)});
    L.Pre.emplace_back(Reg.Size);
    R3_TRY(R.readRegion(Launch, I, Phase::Pre, 0, L.Pre.back()));
    L.Post.emplace_back();
    if (Reg.Changed) {
      L.Post.back().resize(Reg.Size);
      R3_TRY(R.readRegion(Launch, I, Phase::Post, 0, L.Post.back()));
    }
  }
  return L;
}

Expected<KernelSignature> readSignature(std::span<const uint8_t> Bitcode,
                                        const std::string &Kernel) {
  llvm::LLVMContext Ctx;
  llvm::MemoryBufferRef Buf(
      llvm::StringRef(reinterpret_cast<const char *>(Bitcode.data()),
                      Bitcode.size()),
      "candidate");
  auto M = llvm::parseBitcodeFile(Buf, Ctx);
  if (!M)
    return makeError("the code is not LLVM bitcode: ",
                     llvm::toString(M.takeError()));
  const llvm::Function *F = (*M)->getFunction(Kernel);
  if (!F || F->isDeclaration())
    return makeError("the bitcode does not define the kernel '", Kernel, "'");
  KernelSignature Sig;
  Sig.NumParams = static_cast<unsigned>(F->arg_size());
  llvm::Type *Ret = F->getReturnType();
  if (!Ret->isVoidTy()) {
    Sig.ReturnSize = static_cast<unsigned>(
        (*M)->getDataLayout().getTypeStoreSize(Ret).getFixedValue());
    Sig.Return = valueType(Ret);
  }
  if (auto *Flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(
          (*M)->getModuleFlag("r3.opt-level")))
    Sig.OptLevel = static_cast<int>(Flag->getZExtValue());
  return Sig;
}

std::string slotMismatch(const LaunchImage &L, const KernelSignature &Sig) {
  size_t Want = Sig.NumParams + (Sig.ReturnSize ? 1 : 0);
  if (L.Slots.size() == Want)
    return {};
  return "launch " + std::to_string(L.Index) + " recorded " +
         std::to_string(L.Slots.size()) +
         " argument slots (8 bytes each, the return value's last), but the " +
         "kernel takes " + std::to_string(Sig.NumParams) + " parameters" +
         (Sig.ReturnSize ? " and returns a value" : " and returns void") +
         " (" + std::to_string(Want) + " slots)";
}

Expected<LaunchOutcome> runLaunch(AddressReservation &Space,
                                  const LaunchImage &L, HostEntry Entry,
                                  const KernelSignature &Sig,
                                  const RunSettings &S) {
  std::string Mismatch = slotMismatch(L, Sig);
  if (!Mismatch.empty())
    return LaunchOutcome{FailureKind::InvalidLaunch, Mismatch, {}};
  R3_TRY(Space.commit(L.Spans));
  LaunchOutcome O = verificationRun(L, Entry, Sig, S);
  if (O.Failure == FailureKind::None)
    O = timedRuns(L, Entry, S);
  Space.decommitAll();
  return O;
}

bool verifiesPoisoned(AddressReservation &Space, const LaunchImage &L,
                      HostEntry Entry, const KernelSignature &Sig,
                      const RunSettings &S) {
  if (!slotMismatch(L, Sig).empty() || Space.commit(L.Spans))
    return false;
  pid_t Child = ::fork();
  if (Child == 0) {
    ::alarm(static_cast<unsigned>(std::ceil(S.TimeoutSeconds)) + 1);
    RunSettings Probe = S;
    Probe.Poison = Poisoning::On;
    Probe.Tick = nullptr; // only the server itself talks to the client
    LaunchOutcome O = verificationRun(L, Entry, Sig, Probe);
    ::_exit(O.Failure == FailureKind::None ? 0 : 1);
  }
  int Status = 0;
  bool Ok = false;
  if (Child > 0) {
    while (::waitpid(Child, &Status, 0) < 0 && errno == EINTR) {
    }
    Ok = WIFEXITED(Status) && WEXITSTATUS(Status) == 0;
  }
  Space.decommitAll();
  return Ok;
}

} // namespace r3
