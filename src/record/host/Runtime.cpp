// The host runtime's record hooks (HostAbi.h): which calls of instrumented
// functions are timed and which are recorded, the record stream to `r3
// record`, and what happens at start-up, fork and exit.
//
// Start-up: a high-priority constructor reads the contract of RecordEnv.h
// from the environment and removes it, marks the stream close-on-exec (so the
// programs the application runs are neither recorded nor write into it), and
// sends Hello. Without the contract the runtime stays inactive: every hook
// and allocation function costs one branch.
//
// Calls: each call of a selected kernel is timed with CLOCK_MONOTONIC; the
// token of a timed call carries its start time (tagged, no allocation). A call
// in the launch range is recorded: one at a time (a thread that wants to
// record while another records waits), never nested inside another recorded
// call on the same thread (nested calls are counted and timed only).
// Durations are sent at exit, with the Done frame.
#include "record/host/Runtime.h"

#include "record/Messages.h"
#include "record/RecordEnv.h"
#include "record/Selection.h"
#include "support/Demangle.h"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define R3_EXPORT extern "C" __attribute__((visibility("default")))

namespace r3::host {

namespace {
using namespace wire;

/// Durations kept per kernel; calls beyond it are counted, not kept.
constexpr size_t MaxDurationsPerKernel = 1u << 20;
constexpr size_t MaxUnits = 4096;

struct KernelState {
  r3_host_kernel *Desc = nullptr;
  uint64_t Id = 0;
  bool Selected = false;
  bool Announced = false; ///< its Module and Kernel frames were sent
  uint64_t Calls = 0, TotalNs = 0;
  std::vector<std::pair<uint64_t, uint64_t>> Durations; ///< ns, launch id
};

/// Everything the runtime keeps; built in init() and never destroyed, since
/// other threads may still call hooks while the process exits.
struct Recorder {
  RecordEnv Env;
  KernelSelector Selector;
  FrameWriter Writer{-1};
  std::mutex StateLock; ///< Kernels and the selector
  std::vector<KernelState *> Kernels;
  std::mutex SendLock; ///< the stream
  std::mutex TurnLock; ///< InFlight: one recorded call at a time
  std::condition_variable TurnFree;
  bool InFlight = false;
  uint64_t LaunchesSent = 0;
  bool Failed = false; ///< a failure was sent: the recording is over
};

alignas(Recorder) unsigned char Storage[sizeof(Recorder)];
Recorder *R = nullptr;
bool Active = false; ///< under r3 record and not finished: hooks do work
__thread int InRecordedCall __attribute__((tls_model("initial-exec"))) = 0;

std::mutex UnitLock;
const r3_host_unit *Units[MaxUnits];
size_t NumUnits = 0;
bool UnitsOverflowed = false;

void stop() {
  Active = false;
  TrackingOn = false;
}

/// Sends a Failure frame (the caller holds SendLock) and ends the recording.
void failLocked(const std::string &Message) {
  if (!R->Failed)
    (void)sendFrame(Type::Failure, encodeFailure(Message));
  R->Failed = true;
  stop();
}

void fail(const std::string &Message) {
  std::lock_guard<std::mutex> L(R->SendLock);
  failLocked(Message);
}

std::string cpuModel() {
  std::FILE *F = std::fopen("/proc/cpuinfo", "r");
  std::string Model = "host CPU";
  char Line[512];
  while (F && std::fgets(Line, sizeof(Line), F))
    if (std::strncmp(Line, "model name", 10) == 0) {
      const char *Colon = std::strchr(Line, ':');
      if (Colon) {
        Model = Colon + 1 + (Colon[1] == ' ');
        Model.erase(Model.find_last_not_of("\n ") + 1);
      }
      break;
    }
  if (F)
    std::fclose(F);
  return Model;
}

HelloMsg hello() {
  HelloMsg M;
  M.Source = Backend::Host;
  M.Pid = static_cast<uint64_t>(::getpid());
  M.Device.Name = cpuModel();
  M.Device.MemoryBytes = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                         static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return M;
}

KernelState *stateOf(r3_host_kernel *K) {
  std::lock_guard<std::mutex> L(R->StateLock);
  if (K->runtime_state)
    return reinterpret_cast<KernelState *>(K->runtime_state);
  auto *S = new KernelState;
  S->Desc = K;
  S->Id = R->Kernels.size();
  bool Listing = R->Env.Mode == RecordMode::List && R->Env.Patterns.empty();
  S->Selected = Listing || R->Selector.selects(K->name);
  R->Kernels.push_back(S);
  K->runtime_state = reinterpret_cast<uint64_t>(S);
  return S;
}

KernelInfo kernelInfo(const r3_host_kernel &K) {
  KernelInfo Info;
  Info.Name = K.name;
  Info.Demangled = demangle(K.name);
  for (uint32_t I = 0; I < K.num_params; ++I)
    Info.Params.push_back({8ull * I, K.params[I].size});
  for (uint32_t I = 0; I < K.num_globals; ++I) {
    const r3_host_global &G = K.globals[I];
    Info.Globals.push_back(
        {G.name, reinterpret_cast<uint64_t>(G.address), G.size});
  }
  return Info;
}

/// Sends the kernel's Module and Kernel frames once (SendLock held).
Error announceLocked(KernelState &S) {
  if (S.Announced)
    return Error::success();
  const r3_host_kernel &K = *S.Desc;
  if (!K.bitcode || K.bitcode_size == 0)
    return makeError("kernel '", K.name,
                     "' carries no bitcode (its instrumentation is broken)");
  R3_TRY(sendFrame(Type::Module, encode(ModuleMsg{S.Id, ModuleKind::Bitcode}),
                   std::span(K.bitcode, K.bitcode_size)));
  KernelMsg M;
  M.Id = S.Id;
  M.ModuleId = S.Id;
  M.Info = kernelInfo(K);
  R3_TRY(sendFrame(Type::Kernel, encode(M)));
  S.Announced = true;
  return Error::success();
}

void waitTurn() {
  std::unique_lock<std::mutex> L(R->TurnLock);
  R->TurnFree.wait(L, [] { return !R->InFlight; });
  R->InFlight = true;
}

void endTurn() {
  {
    std::lock_guard<std::mutex> L(R->TurnLock);
    R->InFlight = false;
  }
  R->TurnFree.notify_one();
}

/// Starts recording a call; null when it was refused (the failure is sent).
PendingCall *beginRecordedCall(KernelState &S, const uint64_t *Args,
                               uint64_t Ordinal) {
  waitTurn();
  auto *P = new PendingCall;
  P->Kernel = S.Desc;
  P->KernelId = S.Id;
  P->Ordinal = Ordinal;
  P->Args.assign(Args, Args + S.Desc->num_params);
  Error E = snapshotCall(*P, knownMemory(*S.Desc), R->Env.MaxSnapshotBytes);
  if (E) {
    fail(E.message());
    delete P;
    endTurn();
    return nullptr;
  }
  InRecordedCall = 1;
  return P;
}

void *enterSlow(r3_host_kernel *K, const uint64_t *Args) {
  BusyScope Busy;
  KernelState *S = stateOf(K);
  bool Record = false;
  uint64_t Ordinal = 0;
  {
    std::lock_guard<std::mutex> L(R->StateLock);
    Ordinal = S->Calls++; // counted even when not selected: "kernels seen"
    if (!S->Selected)
      return nullptr;
    Record = R->Env.Mode == RecordMode::Record &&
             R->Selector.countLaunch(K->name) && !InRecordedCall;
  }
  if (Record) {
    PendingCall *P = beginRecordedCall(*S, Args, Ordinal);
    if (!P)
      return nullptr;
    P->StartNs = monotonicNs();
    return P;
  }
  return reinterpret_cast<void *>((monotonicNs() << 1) | 1);
}

void addDuration(KernelState &S, uint64_t Ns, uint64_t LaunchId) {
  std::lock_guard<std::mutex> L(R->StateLock);
  S.TotalNs += Ns;
  if (S.Durations.size() < MaxDurationsPerKernel)
    S.Durations.push_back({Ns, LaunchId});
}

void finishRecordedCall(PendingCall *P, uint64_t EndNs, const uint64_t *Ret) {
  KernelState &S = *reinterpret_cast<KernelState *>(P->Kernel->runtime_state);
  InRecordedCall = 0;
  uint64_t Id = NoLaunch;
  {
    std::lock_guard<std::mutex> L(R->SendLock);
    if (!R->Failed) {
      Error E = announceLocked(S);
      if (!E)
        E = sendCall(*P, R->LaunchesSent, Ret);
      if (E)
        failLocked(E.message());
      else
        Id = R->LaunchesSent++;
    }
  }
  addDuration(S, EndNs - P->StartNs, Id);
  delete P;
  endTurn();
}

void exitSlow(r3_host_kernel *K, void *Token, const uint64_t *Ret,
              uint64_t EndNs) {
  BusyScope Busy;
  auto Bits = reinterpret_cast<uint64_t>(Token);
  if (Bits & 1) {
    addDuration(*stateOf(K), EndNs - (Bits >> 1), NoLaunch);
    return;
  }
  finishRecordedCall(static_cast<PendingCall *>(Token), EndNs, Ret);
}

std::string displayName(const KernelState &S) {
  std::string D = demangle(S.Desc->name);
  return D.empty() ? S.Desc->name : D;
}

std::string quotedPatterns() {
  if (R->Env.Patterns.empty())
    return "an instrumented kernel";
  std::string Out;
  for (const std::string &P : R->Env.Patterns)
    Out += (Out.empty() ? "'" : " or '") + P + "'";
  return Out;
}

std::string noLaunchMessage() {
  std::string Seen;
  bool SelectedRan = false;
  for (const KernelState *S : R->Kernels) {
    if (S->Calls == 0)
      continue;
    SelectedRan |= S->Selected;
    Seen += (Seen.empty() ? "" : ", ") + displayName(*S) + " (" +
            std::to_string(S->Calls) + (S->Calls == 1 ? " call)" : " calls)");
  }
  std::string Out = "no launch of " + quotedPatterns() + " was seen" +
                    (SelectedRan ? " in the selected launch range" : "") +
                    " (" +
                    (Seen.empty() ? "no instrumented kernel ran"
                                  : "kernels seen: " + Seen) +
                    ")";
  if (SelectedRan) {
    Out += "; launches are counted from 0:";
    for (const KernelState *S : R->Kernels)
      if (S->Selected && S->Calls > 0)
        Out += " '" + displayName(*S) + "' was launched " +
               (S->Calls == 1 ? std::string("once (launch 0)")
                              : std::to_string(S->Calls) +
                                    " times (launches 0 to " +
                                    std::to_string(S->Calls - 1) + ")");
  }
  return Out;
}

Error sendDurations() {
  for (KernelState *S : R->Kernels) {
    if (!S->Selected || S->Calls == 0)
      continue;
    R3_TRY(announceLocked(*S));
    for (auto [Ns, Launch] : S->Durations)
      R3_TRY(sendFrame(Type::Duration, encode(DurationMsg{S->Id, Launch, Ns})));
  }
  return Error::success();
}

Error sendList() {
  for (KernelState *S : R->Kernels) {
    if (!S->Selected || S->Calls == 0)
      continue;
    KernelStatsMsg M{S->Desc->name, demangle(S->Desc->name), S->Calls,
                     S->TotalNs};
    M.TimedLaunches = S->Calls; // every call is timed
    R3_TRY(sendFrame(Type::KernelStats, encode(M)));
  }
  return Error::success();
}

/// At exit: the durations (or the kernel list) and Done, or why not.
void finish() {
  if (!R || !Active)
    return;
  BusyScope Busy;
  stop();
  std::lock_guard<std::mutex> S(R->SendLock);
  std::lock_guard<std::mutex> L(R->StateLock);
  if (R->Failed)
    return;
  Error E;
  if (R->InFlight)
    E = Error::make("the application exited during a recorded call");
  else if (R->Env.Mode == RecordMode::List)
    E = sendList();
  else if (R->LaunchesSent == 0)
    E = Error::make(noLaunchMessage());
  else
    E = sendDurations();
  if (E)
    return failLocked(E.message());
  (void)sendFrame(Type::Done, MetaWriter());
}

void atForkChild() {
  if (!R)
    return;
  stop(); // the child is not recorded, and never writes into the stream
  ::close(R->Env.StreamFd);
}

void removeContract() {
  for (const char *Name : recordenv::All)
    ::unsetenv(Name);
}

Error checkUnits() {
  std::lock_guard<std::mutex> L(UnitLock);
  if (UnitsOverflowed)
    return makeError("more than ", MaxUnits,
                     " instrumented units registered; the host runtime keeps "
                     "at most that many");
  for (size_t U = 0; U < NumUnits; ++U)
    if (Units[U]->abi_version != R3_HOST_ABI_VERSION)
      return makeError(Units[U]->source_file, ": instrumented for host ABI ",
                       Units[U]->abi_version, ", but this runtime implements ",
                       R3_HOST_ABI_VERSION,
                       " (rebuild it with this r3's host-flags)");
  return Error::success();
}

Error start(RecordEnv Env) {
  if (::fcntl(Env.StreamFd, F_SETFD, FD_CLOEXEC) != 0)
    return Error::success(); // no stream: nothing to record into
  std::vector<std::string> Patterns = Env.Patterns;
  if (Patterns.empty())
    Patterns.push_back(""); // every instrumented kernel
  auto Sel = KernelSelector::create(Patterns, Env.Range);
  R = new (Storage) Recorder;
  R->Writer = FrameWriter(Env.StreamFd, SendMode::SocketNoSignal);
  R->Env = std::move(Env);
  R3_TRY(sendFrame(Type::Hello, encode(hello())));
  Active = true;
  TrackingOn = R->Env.Mode == RecordMode::Record;
  std::atexit(finish);
  ::pthread_atfork(nullptr, nullptr, atForkChild);
  if (!Sel)
    return Sel.takeError();
  R->Selector = std::move(*Sel);
  return checkUnits();
}

__attribute__((constructor(101))) void init() {
  BusyScope Busy;
  auto Env = decodeRecordEnv([](const char *N) { return ::getenv(N); });
  removeContract();
  if (!Env || !*Env) {
    // Not under r3 record (or a contract it cannot read): inactive, unless
    // r3 run applies a campaign's results.
    startUse();
    return;
  }
  if (Error E = start(std::move(**Env)); E && R)
    fail(E.message());
}

void addMemory(std::vector<KnownMemory> &Out, const r3_host_global &G) {
  if (G.size != 0 && G.address)
    Out.push_back({reinterpret_cast<uint64_t>(G.address), G.size,
                   RegionKind::Global, G.name ? G.name : ""});
}

} // namespace

std::vector<KnownMemory> knownMemory(const r3_host_kernel &K) {
  std::vector<KnownMemory> Out;
  for (const Allocation &A : trackedAllocations())
    Out.push_back(
        {A.Base, A.Size,
         A.Kind == AllocKind::Mmap ? RegionKind::Mmap : RegionKind::Heap, ""});
  for (uint32_t I = 0; I < K.num_globals; ++I)
    addMemory(Out, K.globals[I]);
  {
    std::lock_guard<std::mutex> L(UnitLock);
    for (size_t U = 0; U < NumUnits; ++U)
      for (uint32_t I = 0; I < Units[U]->num_globals; ++I)
        addMemory(Out, Units[U]->globals[I]);
  }
  // Stable, so that for one base the kernel's name for a global wins.
  std::stable_sort(Out.begin(), Out.end(),
                   [](const KnownMemory &A, const KnownMemory &B) {
                     return A.Base < B.Base;
                   });
  Out.erase(std::unique(Out.begin(), Out.end(),
                        [](const KnownMemory &A, const KnownMemory &B) {
                          return A.Base == B.Base;
                        }),
            Out.end());
  return Out;
}

Error sendFrame(Type T, const MetaWriter &Meta, std::span<const uint8_t> Bulk) {
  Error E = R->Writer.send(T, Meta, Bulk);
  if (E)
    stop(); // r3 record is gone: the application keeps running, unrecorded
  return E;
}

uint64_t monotonicNs() {
  timespec T;
  ::clock_gettime(CLOCK_MONOTONIC, &T);
  return static_cast<uint64_t>(T.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(T.tv_nsec);
}

} // namespace r3::host

using namespace r3::host;

R3_EXPORT void __r3_host_register_unit(const r3_host_unit *Unit) {
  BusyScope Busy;
  {
    std::lock_guard<std::mutex> L(UnitLock);
    if (NumUnits == MaxUnits)
      UnitsOverflowed = true;
    else
      Units[NumUnits++] = Unit;
  }
  if (Active && Unit->abi_version != R3_HOST_ABI_VERSION)
    if (r3::Error E = checkUnits())
      fail(E.message());
  if (UseOn)
    useUnit(Unit);
}

R3_EXPORT void *__r3_host_enter(r3_host_kernel *Kernel, const uint64_t *Args) {
  if (__builtin_expect(!Active, true))
    return __builtin_expect(!UseOn, true) ? nullptr : useEnter(Kernel, Args);
  return enterSlow(Kernel, Args);
}

R3_EXPORT void __r3_host_exit(r3_host_kernel *Kernel, void *Token,
                              const uint64_t *Ret) {
  if (!Token)
    return;
  if (UseOn)
    return useExit(Kernel, Token, Ret);
  uint64_t End = monotonicNs();
  exitSlow(Kernel, Token, Ret, End);
}
