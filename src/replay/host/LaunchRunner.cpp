// Running one recorded launch of a host kernel: restore, run, verify, time.
#include "replay/host/LaunchRunner.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"

#include "support/Machine.h"

#include <cinttypes>
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

/// Every run starts from the same memory: the pre-state, the outputs
/// poisoned when the launch is, the slack filled with SlackByte. So the
/// verification run looks like any other to the candidate.
void prepare(const LaunchImage &L, const RunSettings &S) {
  restore(L);
  if (S.Poison == Poisoning::On)
    poison(L);
  for (const ByteRange &R : L.Slack)
    std::memset(reinterpret_cast<void *>(R.Begin), SlackByte,
                R.End - R.Begin);
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

/// Where Address lies relative to L's regions: "8 bytes past the end of
/// region 'y' (...)" or "16 bytes before region 'x' (...)".
std::string nearestRegion(const LaunchImage &L, uint64_t Address) {
  const MappedSpan *Below = nullptr, *Above = nullptr;
  for (const MappedSpan &S : L.Spans) {
    if (S.Base + S.Size <= Address &&
        (!Below || S.Base + S.Size > Below->Base + Below->Size))
      Below = &S;
    if (S.Base > Address && (!Above || S.Base < Above->Base))
      Above = &S;
  }
  if (Below)
    return std::to_string(Address - (Below->Base + Below->Size)) +
           " bytes past the end of " + Below->Label;
  if (Above)
    return std::to_string(Above->Base - Address) + " bytes before " +
           Above->Label;
  return "in no region's page";
}

/// Why the slack no longer holds SlackByte everywhere, or empty.
std::string slackWritten(const LaunchImage &L) {
  uint64_t Bytes = 0, First = 0;
  for (const ByteRange &R : L.Slack)
    for (uint64_t A = R.Begin; A < R.End; ++A)
      if (*reinterpret_cast<const uint8_t *>(A) != SlackByte && !Bytes++)
        First = A;
  if (!Bytes)
    return {};
  char Hex[24];
  std::snprintf(Hex, sizeof(Hex), "0x%" PRIx64, First);
  return "wrote outside every recorded region: " + std::to_string(Bytes) +
         (Bytes == 1 ? " byte" : " bytes") + " changed, the first at " + Hex +
         " (" + nearestRegion(L, First) + ")";
}

/// What the run left behind beyond the threads and processes it had: a
/// description, or empty.
std::string tasksLeft(const std::optional<TaskCount> &Before,
                      const std::optional<TaskCount> &After) {
  if (!Before || !After)
    return {};
  std::string What;
  auto Add = [&](unsigned N, const char *One, const char *Many) {
    if (!What.empty())
      What += " and ";
    What += std::to_string(N) + " " + (N == 1 ? One : Many);
  };
  if (After->Threads > Before->Threads)
    Add(After->Threads - Before->Threads, "thread", "threads");
  if (After->Children > Before->Children)
    Add(After->Children - Before->Children, "child process",
        "child processes");
  if (What.empty())
    return {};
  return "left " + What +
         " running after the kernel returned: a kernel must finish its work "
         "before it returns (the replay server is restarted)";
}

/// The checks of a run's memory: the slack, then the outputs. At starts the
/// message ("launch 0: "), Run names the run as oneRun says.
LaunchOutcome checkMemory(const LaunchImage &L, const KernelSignature &Sig,
                          const RunSettings &S, const std::string &Run,
                          uint64_t Ret) {
  LaunchOutcome O;
  std::string At = "launch " + std::to_string(L.Ordinal) + ": ";
  if (std::string Outside = slackWritten(L); !Outside.empty()) {
    O.Failure = FailureKind::WrongResult;
    O.Message = At + (Run.empty() ? "the verification run" : Run) + " " +
                Outside;
    return O;
  }
  VerifyReport Report = check(L, Sig, S.Verify, Ret);
  if (Report.passed())
    return O;
  O.Failure = FailureKind::WrongResult;
  O.Message = Run.empty()
                  ? At + Report.message()
                  : laterRunMessage(L.Ordinal, Run,
                                    "every run's outputs are checked", Report);
  return O;
}

/// One run of any kind: prepare, call, then check what the candidate left:
/// threads and processes, its time, its memory. Run names it in messages:
/// empty for the verification run, else "warm-up run 2" or "timed run 3".
LaunchOutcome oneRun(const LaunchImage &L, HostEntry Entry,
                     const KernelSignature &Sig, const RunSettings &S,
                     const std::string &Run, uint64_t &Ns) {
  if (S.Tick)
    S.Tick();
  prepare(L, S);
  uint64_t Ret = 0;
  std::optional<TaskCount> Before = countTasks();
  Ns = timedCall(Entry, L, Ret);
  std::string Left = tasksLeft(Before, countTasks());
  std::string Which = "launch " + std::to_string(L.Ordinal) + ": " +
                      (Run.empty() ? "the verification run" : Run);
  LaunchOutcome O;
  if (!Left.empty()) {
    O.Failure = FailureKind::WrongResult;
    O.Message = Which + " " + Left;
    O.Tainted = true;
  } else if (Ns > S.TimeoutSeconds * 1e9) {
    O.Failure = FailureKind::Timeout;
    O.Message = Which + " took " + secondsText(Ns / 1e9) +
                ", more than the timeout of " + secondsText(S.TimeoutSeconds);
  } else {
    O = checkMemory(L, Sig, S, Run, Ret);
  }
  return O;
}

/// The verification run: the first, before any warm-up.
LaunchOutcome verificationRun(const LaunchImage &L, HostEntry Entry,
                              const KernelSignature &Sig,
                              const RunSettings &S) {
  uint64_t Ns = 0;
  return oneRun(L, Entry, Sig, S, "", Ns);
}

/// Warm-ups, then the timed repetitions, each checked as the verification
/// run was: a candidate that works only when it is watched fails here.
LaunchOutcome timedRuns(const LaunchImage &L, HostEntry Entry,
                        const KernelSignature &Sig, const RunSettings &S) {
  LaunchOutcome O;
  for (uint32_t I = 0; I < S.Warmup || !S.Reps.enough(O.TimesNs); ++I) {
    uint64_t Ns = 0;
    LaunchOutcome Once = oneRun(L, Entry, Sig, S, runName(I, S.Warmup), Ns);
    if (Once.Failure != FailureKind::None)
      return Once;
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
  L.Ordinal = Info.Ordinal;
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
  L.Slack = slackRanges(L.Spans);
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
  return "launch " + std::to_string(L.Ordinal) + " recorded " +
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
    O = timedRuns(L, Entry, Sig, S);
  // A task the candidate left may still write: its pages stay mapped until
  // the server exits, right after this result.
  if (!O.Tainted)
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
