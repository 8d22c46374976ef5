// The host replay device: finds the kernel and launches a candidate names,
// resolves its default pipeline, decides poisoning, compiles it with the host
// JIT and runs each launch (LaunchRunner.h).
#include "replay/host/HostDevice.h"

#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "replay/host/LaunchRunner.h"
#include "support/Machine.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace r3 {

namespace {
class HostDevice final : public ReplayDevice {
public:
  explicit HostDevice(std::unique_ptr<CaptureReader> R)
      : Reader(std::move(R)) {}
  Error reserve();
  Expected<CandidateResult> evaluate(const Candidate &C,
                                     const RunHooks &Hooks) override;
  std::string name() const override { return hostCpuName(); }

private:
  Expected<uint32_t> findKernel(const Candidate &C) const;
  Expected<const LaunchImage *> image(uint32_t Launch);
  Expected<std::vector<uint8_t>> recordedCode(uint32_t Kernel) const;
  std::map<std::string, uint64_t> globalsOf(uint32_t Kernel) const;
  Expected<HostEntry> compile(std::span<const uint8_t> Code,
                              const std::string &Kernel,
                              const HostCompileOptions &O,
                              HostCompileReport &Report, uint32_t K);
  Expected<Poisoning> poisoning(const Candidate &C, uint32_t K, uint32_t Launch,
                                int OptLevel);
  Expected<CandidateResult> runAll(const Candidate &C, HostEntry Entry,
                                   const KernelSignature &Sig,
                                   const std::vector<Poisoning> &Poison,
                                   const RunHooks &Hooks);

  std::unique_ptr<CaptureReader> Reader;
  std::unique_ptr<AddressReservation> Space;
  std::unique_ptr<HostJit> Jit;
  std::map<uint32_t, LaunchImage> Images;
  std::map<uint32_t, bool> PoisonSafe;           ///< by launch
  std::map<uint32_t, HostEntry> RecordedDefault; ///< by kernel
};

Error HostDevice::reserve() {
  std::vector<MappedSpan> Spans;
  const auto &Launches = Reader->launches();
  for (uint32_t L = 0; L < Launches.size(); ++L)
    for (uint32_t I = 0; I < Launches[L].Regions.size(); ++I) {
      const RegionInfo &R = Launches[L].Regions[I];
      Spans.push_back(
          {R.Base, R.Size,
           shownLaunchName(viewOf(*Reader), L) + ", " + regionLabel(R, I)});
    }
  return moveInto(AddressReservation::reserve(Spans), Space);
}

Expected<uint32_t> HostDevice::findKernel(const Candidate &C) const {
  const auto &Kernels = Reader->kernels();
  for (uint32_t K = 0; K < Kernels.size(); ++K)
    if (Kernels[K].Name == C.Kernel)
      return K;
  return makeError("the capture has no kernel '", C.Kernel, "'");
}

Expected<const LaunchImage *> HostDevice::image(uint32_t Launch) {
  auto It = Images.find(Launch);
  if (It == Images.end()) {
    auto L = loadLaunch(*Reader, Launch);
    if (!L)
      return L.takeError();
    It = Images.emplace(Launch, std::move(*L)).first;
  }
  return &It->second;
}

Expected<std::vector<uint8_t>> HostDevice::recordedCode(uint32_t Kernel) const {
  uint32_t M = Reader->kernels()[Kernel].Module;
  if (Reader->modules()[M].Kind != ModuleKind::Bitcode)
    return makeError("module ", M, " of kernel '",
                     Reader->kernels()[Kernel].Name, "' is a ",
                     moduleKindName(Reader->modules()[M].Kind),
                     ", not LLVM bitcode: the host backend cannot run it");
  return Reader->readModule(M);
}

std::map<std::string, uint64_t> HostDevice::globalsOf(uint32_t Kernel) const {
  std::map<std::string, uint64_t> G;
  for (const GlobalInfo &Info : Reader->kernels()[Kernel].Globals)
    G[Info.Name] = Info.Address;
  for (const LaunchInfo &L : Reader->launches())
    if (L.Kernel == Kernel)
      for (const RegionInfo &R : L.Regions)
        if (R.Kind == RegionKind::Global && !R.Name.empty())
          G.emplace(R.Name, R.Base);
  return G;
}

Expected<HostEntry> HostDevice::compile(std::span<const uint8_t> Code,
                                        const std::string &Kernel,
                                        const HostCompileOptions &O,
                                        HostCompileReport &Report, uint32_t K) {
  if (!Jit)
    R3_TRY(moveInto(HostJit::create(), Jit));
  return Jit->compile(Code, Kernel, globalsOf(K), O, Report);
}

/// Auto: poison a launch when the recorded kernel, under its default pipeline,
/// still verifies on it poisoned (kernels that read their outputs do not).
Expected<Poisoning> HostDevice::poisoning(const Candidate &C, uint32_t K,
                                          uint32_t Launch, int OptLevel) {
  if (C.Verify.Poison != PoisonMode::Auto)
    return C.Verify.Poison == PoisonMode::On ? Poisoning::On : Poisoning::Off;
  if (auto It = PoisonSafe.find(Launch); It != PoisonSafe.end())
    return It->second ? Poisoning::On : Poisoning::Off;
  std::vector<uint8_t> Code;
  R3_TRY(moveInto(recordedCode(K), Code));
  KernelSignature Sig;
  R3_TRY(moveInto(readSignature(Code, C.Kernel), Sig));
  if (!RecordedDefault.count(K)) {
    HostCompileOptions O{"default<O" + std::to_string(OptLevel) + ">",
                         OptLevel};
    HostCompileReport Report;
    auto Entry = compile(Code, C.Kernel, O, Report, K);
    if (!Entry)
      return makeError("the recorded kernel '", C.Kernel,
                       "' does not compile: ", Entry.takeError().message());
    RecordedDefault[K] = *Entry;
  }
  const LaunchImage *L;
  R3_TRY(moveInto(image(Launch), L));
  RunSettings S;
  S.TimeoutSeconds = C.TimeoutSeconds;
  S.Verify = C.Verify;
  bool Safe = verifiesPoisoned(*Space, *L, RecordedDefault[K], Sig, S);
  PoisonSafe[Launch] = Safe;
  return Safe ? Poisoning::On : Poisoning::Off;
}

/// Each launch's runs; the first launch decides how many timed runs there
/// are (adaptive repetitions), the others take as many, so that the times
/// of one repetition add up over the launches.
Expected<CandidateResult>
HostDevice::runAll(const Candidate &C, HostEntry Entry,
                   const KernelSignature &Sig,
                   const std::vector<Poisoning> &Poison, const RunHooks &Hooks) {
  CandidateResult Res;
  Res.Timer = "host";
  auto Start = std::chrono::steady_clock::now();
  RepetitionRule Reps{C.MinRepetitions, C.Repetitions, C.TargetCi};
  for (size_t I = 0; I < C.Launches.size(); ++I) {
    const LaunchImage *L;
    R3_TRY(moveInto(image(C.Launches[I]), L));
    RunSettings S{C.Warmup, Reps,     C.TimeoutSeconds,
                  Poison[I], C.Verify, Hooks.Tick};
    LaunchOutcome O;
    R3_TRY(moveInto(runLaunch(*Space, *L, Entry, Sig, S), O));
    if (O.Failure != FailureKind::None) {
      CandidateResult Failed = failedResult(O.Failure, O.Message);
      Failed.DeviceLost = O.Tainted; // the server exits after sending it
      return Failed;
    }
    Res.TimesNs.resize(O.TimesNs.size());
    for (size_t R = 0; R < O.TimesNs.size(); ++R)
      Res.TimesNs[R] += O.TimesNs[R];
    uint32_t Taken = static_cast<uint32_t>(O.TimesNs.size());
    Reps = RepetitionRule{0, Taken, 0};
  }
  Res.BusyMs = std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - Start)
                   .count();
  Res.Verified = true;
  return Res;
}

Expected<CandidateResult> HostDevice::evaluate(const Candidate &C,
                                               const RunHooks &Hooks) {
  uint32_t K;
  R3_TRY(moveInto(findKernel(C), K));
  if (C.Launches.empty())
    return makeError("the candidate for '", C.Kernel, "' names no launch");
  for (uint32_t L : C.Launches)
    if (L >= Reader->launches().size() || Reader->launches()[L].Kernel != K)
      return makeError("launch ", L, " is not a launch of kernel '", C.Kernel,
                       "' in the capture");
  if (C.Grid || C.Block)
    return failedResult(FailureKind::InvalidLaunch,
                        "grid and block overrides apply to CUDA kernels; a "
                        "host kernel runs as the application called it");
  if (C.Code == CodeKind::Cubin)
    return Error::make("a cubin cannot run on the host backend");
  std::vector<uint8_t> Recorded;
  if (C.Code == CodeKind::Recorded)
    R3_TRY(moveInto(recordedCode(K), Recorded));
  std::span<const uint8_t> Code = C.Code == CodeKind::Recorded
                                      ? std::span<const uint8_t>(Recorded)
                                      : std::span<const uint8_t>(C.Image);
  auto Sig = readSignature(Code, C.Kernel);
  if (!Sig)
    return failedResult(FailureKind::CompileError, Sig.takeError().message());
  int N = Sig->OptLevel;
  if (N < 0 && C.Code != CodeKind::Recorded) {
    auto Rec = recordedCode(K);
    auto RecSig = Rec ? readSignature(*Rec, C.Kernel)
                      : Expected<KernelSignature>(Rec.takeError());
    N = RecSig ? RecSig->OptLevel : -1;
  }
  if (N < 0 || N > 3)
    N = 2;
  HostCompileOptions O{
      C.Pipeline.empty() ? "default<O" + std::to_string(N) + ">" : C.Pipeline,
      C.CodegenOpt < 0 ? N : C.CodegenOpt};
  std::vector<Poisoning> Poison;
  for (uint32_t L : C.Launches) {
    Poisoning P = Poisoning::Off;
    R3_TRY(moveInto(poisoning(C, K, L, N), P));
    Poison.push_back(P);
  }
  HostCompileReport Report;
  CompiledInfo Info{0, O.Pipeline, O.CodegenOpt,
                    std::all_of(Poison.begin(), Poison.end(), [](Poisoning P) {
                      return P == Poisoning::On;
                    })};
  auto Described = [&](CandidateResult R) {
    R.CompileMs = Report.CompileMs;
    R.Pipeline = Info.Pipeline;
    R.CodegenOpt = Info.CodegenOpt;
    R.Poisoned = Info.Poisoned;
    return R;
  };
  auto Entry = compile(Code, C.Kernel, O, Report, K);
  if (!Entry)
    return Described(
        failedResult(FailureKind::CompileError, Entry.takeError().message()));
  Info.CompileMs = Report.CompileMs;
  R3_TRY(Hooks.Running(Info));
  auto Res = runAll(C, *Entry, *Sig, Poison, Hooks);
  // A long-lived server must not keep every candidate's code, unless a
  // thread the candidate left may still run it: the server exits after this
  // result, and until then that thread must find its code where it was.
  if (!Res || !Res->DeviceLost)
    R3_TRY(Jit->release(*Entry));
  if (!Res)
    return Res;
  return Described(std::move(*Res));
}
} // namespace

Expected<std::unique_ptr<ReplayDevice>>
openHostDevice(std::unique_ptr<CaptureReader> R) {
  std::string Path = R->path();
  auto D = std::make_unique<HostDevice>(std::move(R));
  if (Error E = D->reserve())
    return std::move(E).context(Path);
  return std::unique_ptr<ReplayDevice>(std::move(D));
}

} // namespace r3
