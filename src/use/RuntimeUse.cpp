// The host runtime under `r3 run --use` (UsePlan.h): the planned kernels'
// wrappers call the tuned code the campaign measured instead of their bodies.
//
// Start-up (the runtime's constructor, before the application's): the plan is
// read and the use-library loaded (HostUse.h). Each instrumented unit
// registers from its own constructor; a planned kernel of it is checked
// against the campaign's (the SHA-256 of its embedded bitcode against the
// module the capture recorded: a rebuilt application with another kernel
// body is refused, never patched) and compiled, and its descriptor's
// tuned_entry set. Calls of a replaced kernel are counted; the plan's first
// VerifyLaunches calls of each are checked: the regions the call reaches are
// snapshotted, the original code (the application's bitcode, compiled as the
// campaign's baseline) runs on them and its outputs are kept, the inputs are
// restored, the tuned code runs, and its outputs must match under the
// campaign's tolerance; a mismatch stops the process with the difference.
// At exit (and at a stop) the process writes its report. Nothing here runs
// unless r3 run gave a plan; R3_RUN_DISABLE=1 leaves the application alone.
#include "record/host/Runtime.h"

#include "record/RecordEnv.h"
#include "use/UsePlan.h"
#include "use/HostUse.h"
#include "support/FileUtil.h"
#include "support/Sha256.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <pthread.h>
#include <unistd.h>

namespace r3::host {

bool UseOn = false;

namespace {

/// What the runtime keeps about one planned kernel, in its runtime_state.
struct UseState {
  r3_host_kernel *Desc = nullptr;
  const use::KernelPlan *Plan = nullptr;
  use::Outcome What = use::Outcome::Replaced;
  std::string Message;
  r3_host_entry Tuned = nullptr, Original = nullptr;
  std::atomic<uint64_t> Launches{0}, Verified{0}, Timed{0}, KernelNs{0};
};

/// The state of one checked call between useEnter and useExit.
struct Checking {
  PendingCall Call;
  std::vector<std::vector<uint8_t>> Expected; ///< the original's outputs
  uint64_t ExpectedRet = 0;
};

struct User {
  use::Plan Plan;
  std::string ReportDir;
  r3_host_use_compile_fn Compile = nullptr;
  r3_host_use_compare_fn Compare = nullptr;
  std::mutex Lock; ///< Kernels, and the report
  std::vector<UseState *> Kernels;
  std::mutex CheckLock; ///< one checked call at a time, enter to exit
  bool Reported = false;
};

User *U = nullptr;

void warn(const std::string &Message) {
  std::fprintf(stderr, "r3 run: warning: %s\n", Message.c_str());
}

std::string compileError(const char *Buffer) {
  return Buffer[0] ? Buffer : "the use-library gave no reason";
}

/// Writes this process's report (once; Lock held).
void reportLocked() {
  if (U->Reported || U->ReportDir.empty())
    return;
  U->Reported = true;
  use::ProcessReport R;
  R.Pid = static_cast<uint64_t>(::getpid());
  for (const UseState *S : U->Kernels)
    R.Kernels.push_back({S->Desc->name, S->What, S->Launches.load(),
                         S->Verified.load(), S->Timed.load(),
                         S->KernelNs.load(), S->Message});
  if (Error E = use::writeReportFile(U->ReportDir, R.Pid, use::encodeReport(R)))
    warn("the run report could not be written: " + E.message());
}

void atExit() {
  BusyScope Busy;
  // The allocation table is destroyed at exit; frees after this (libLLVM's
  // destructors, among others) must not look into it.
  TrackingOn = false;
  std::lock_guard<std::mutex> L(U->Lock);
  reportLocked();
}

void atForkChild() {
  // The child writes its own report, of its own launches.
  U->Reported = false;
  for (UseState *S : U->Kernels) {
    S->Launches = 0;
    S->Verified = 0;
    S->Timed = 0;
    S->KernelNs = 0;
  }
}

Error loadLibrary(const char *Path) {
  if (!Path || !*Path)
    return makeError("no use-library was named (", use::HostLibraryEnv,
                     " is unset)");
  void *H = ::dlopen(Path, RTLD_NOW | RTLD_LOCAL);
  if (!H)
    return makeError("the use-library could not be loaded: ", ::dlerror());
  U->Compile = reinterpret_cast<r3_host_use_compile_fn>(
      ::dlsym(H, R3_HOST_USE_COMPILE));
  U->Compare = reinterpret_cast<r3_host_use_compare_fn>(
      ::dlsym(H, R3_HOST_USE_COMPARE));
  if (!U->Compile || !U->Compare)
    return makeError(Path, " is not r3's host use-library");
  return Error::success();
}

std::vector<r3_host_use_global> globalsOf(const r3_host_kernel &K) {
  std::vector<r3_host_use_global> Out;
  for (uint32_t I = 0; I < K.num_globals; ++I)
    Out.push_back({K.globals[I].name,
                   reinterpret_cast<uint64_t>(K.globals[I].address)});
  return Out;
}

Expected<r3_host_entry> compileCode(const r3_host_kernel &K,
                                    std::string_view Bitcode,
                                    const std::string &Pipeline,
                                    int CodegenOpt) {
  std::vector<r3_host_use_global> Globals = globalsOf(K);
  char Error[2048] = {};
  r3_host_entry E = U->Compile(
      reinterpret_cast<const uint8_t *>(Bitcode.data()), Bitcode.size(),
      K.name, Globals.data(), static_cast<uint32_t>(Globals.size()),
      Pipeline.c_str(), CodegenOpt, Error, sizeof Error);
  if (!E)
    return Error::make(compileError(Error));
  return E;
}

/// Checks K against its plan and compiles its tuned (and, when launches are
/// verified, its original) code; the outcome goes into S.
void prepare(UseState &S) {
  const r3_host_kernel &K = *S.Desc;
  const use::KernelPlan &P = *S.Plan;
  std::string_view Own(reinterpret_cast<const char *>(K.bitcode),
                       K.bitcode_size);
  std::string Hash = sha256Hex(Own);
  if (Hash != P.ModuleSha256) {
    S.What = use::Outcome::Refused;
    S.Message =
        use::changedKernelMessage(K.name, "bitcode", Hash, P.ModuleSha256);
    return;
  }
  if (U->Plan.KeepOriginal)
    return; // counted and timed, never replaced
  std::string Tuned;
  if (!P.Artifact.empty()) {
    auto Bytes = readWholeFile(P.Artifact, "tuned code");
    if (!Bytes) {
      S.What = use::Outcome::Failed;
      S.Message = Bytes.error().message();
      return;
    }
    Tuned = std::move(*Bytes);
  }
  auto Entry = compileCode(K, P.Artifact.empty() ? Own : Tuned, P.Pipeline,
                           P.CodegenOpt);
  if (Entry && U->Plan.VerifyLaunches > 0) {
    auto Original = compileCode(K, Own, "", -1);
    if (!Original)
      Entry = makeError("the original code (to verify against): ",
                        Original.error().message());
    else
      S.Original = *Original;
  }
  if (!Entry) {
    S.What = use::Outcome::Failed;
    S.Message = "the tuned code could not be compiled: " +
                Entry.error().message() + "; the application's own ran";
    return;
  }
  S.Tuned = *Entry;
}

std::string regionName(const SnapshotRegion &R) {
  if (!R.Name.empty())
    return "region '" + R.Name + "'";
  char Buf[96];
  std::snprintf(Buf, sizeof Buf, "memory at 0x%llx (%llu bytes)",
                static_cast<unsigned long long>(R.Where.Base),
                static_cast<unsigned long long>(R.Where.Size));
  return Buf;
}

/// Stops the process: the tuned code disagreed with the original.
[[noreturn]] void stopOnMismatch(UseState &S, uint64_t Ordinal,
                                 const std::string &What) {
  S.What = use::Outcome::VerifyFailed;
  S.Message = "launch " + std::to_string(Ordinal) + ": " + What;
  use::printMismatch(S.Desc->name, S.Message);
  {
    std::lock_guard<std::mutex> L(U->Lock);
    reportLocked();
  }
  ::_exit(1);
}

/// Runs the original code on the call's inputs and keeps its outputs, then
/// restores the inputs for the tuned code; null when the call cannot be
/// checked (the process has been stopped then).
Checking *beginCheck(UseState &S, const uint64_t *Args, uint64_t Ordinal) {
  U->CheckLock.lock();
  auto *C = new Checking;
  C->Call.Kernel = S.Desc;
  C->Call.Ordinal = Ordinal;
  C->Call.Args.assign(Args, Args + S.Desc->num_params);
  if (Error E = snapshotCall(C->Call, knownMemory(*S.Desc),
                             DefaultMaxSnapshotBytes))
    stopOnMismatch(S, Ordinal,
                   "its inputs could not be copied to check it (" +
                       E.message() + ")");
  C->ExpectedRet = S.Original(Args);
  for (const SnapshotRegion &R : C->Call.Regions) {
    auto *Live = reinterpret_cast<uint8_t *>(R.Where.Base);
    C->Expected.emplace_back(Live, Live + R.Where.Size);
    std::memcpy(Live, R.Pre, R.Where.Size);
  }
  return C;
}

void endCheck(UseState &S, Checking *C, const uint64_t *Ret) {
  std::string Wrong;
  for (size_t I = 0; I < C->Call.Regions.size() && Wrong.empty(); ++I) {
    const SnapshotRegion &R = C->Call.Regions[I];
    char Message[2048] = {};
    std::string Label = regionName(R);
    if (!U->Compare(Label.c_str(), C->Expected[I].data(),
                    reinterpret_cast<const uint8_t *>(R.Where.Base),
                    R.Where.Size, S.Plan->Tolerance, S.Plan->ToleranceValue,
                    S.Plan->ElementType, Message, sizeof Message))
      Wrong = Message;
  }
  if (Wrong.empty() && Ret && S.Desc->returns) {
    uint64_t Mask = S.Desc->returns >= 8
                        ? ~0ull
                        : (1ull << (8 * S.Desc->returns)) - 1;
    uint64_t Want = C->ExpectedRet & Mask, Got = *Ret & Mask;
    char Message[2048] = {};
    int Type = S.Desc->returns == 4 || S.Desc->returns == 8
                   ? S.Plan->ElementType
                   : 0;
    if (!U->Compare("the return value", reinterpret_cast<uint8_t *>(&Want),
                    reinterpret_cast<uint8_t *>(&Got), S.Desc->returns,
                    S.Plan->Tolerance, S.Plan->ToleranceValue, Type, Message,
                    sizeof Message))
      Wrong = Message;
  }
  uint64_t Ordinal = C->Call.Ordinal;
  delete C;
  if (!Wrong.empty())
    stopOnMismatch(S, Ordinal, Wrong);
  ++S.Verified;
  U->CheckLock.unlock();
}

} // namespace

void startUse() {
  const char *PlanPath = ::getenv(use::PlanEnv);
  if (!PlanPath || !*PlanPath)
    return;
  const char *Disable = ::getenv(use::DisableEnv);
  if (Disable && std::strcmp(Disable, "1") == 0) {
    warn(std::string(use::DisableEnv) +
         "=1: the application runs with its own kernels");
    return;
  }
  U = new User;
  const char *Dir = ::getenv(use::ReportDirEnv);
  U->ReportDir = Dir ? Dir : "";
  auto Plan = use::readPlan(PlanPath);
  Error E = Plan ? loadLibrary(::getenv(use::HostLibraryEnv)) : Plan.takeError();
  if (E) {
    warn(E.message() + "; the application runs with its own kernels");
    return;
  }
  U->Plan = std::move(*Plan);
  // Checked calls snapshot what they reach, as r3 record does: the heap
  // must be tracked from the start.
  if (U->Plan.VerifyLaunches > 0)
    TrackingOn = true;
  std::atexit(atExit);
  ::pthread_atfork(nullptr, nullptr, atForkChild);
  UseOn = true;
}

void useUnit(const r3_host_unit *Unit) {
  BusyScope Busy;
  if (Unit->abi_version != R3_HOST_ABI_VERSION) {
    warn(std::string(Unit->source_file) + " was instrumented for host ABI " +
         std::to_string(Unit->abi_version) + ", this runtime implements " +
         std::to_string(R3_HOST_ABI_VERSION) +
         ": its kernels keep their own code (rebuild it with this r3's "
         "host-flags)");
    return;
  }
  for (uint32_t I = 0; I < Unit->num_kernels; ++I) {
    r3_host_kernel *K = Unit->kernels[I];
    const use::KernelPlan *P = U->Plan.find(K->name);
    if (!P || K->runtime_state)
      continue;
    auto *S = new UseState;
    S->Desc = K;
    S->Plan = P;
    prepare(*S);
    {
      std::lock_guard<std::mutex> L(U->Lock);
      U->Kernels.push_back(S);
    }
    K->runtime_state = reinterpret_cast<uint64_t>(S);
    if (S->What != use::Outcome::Replaced)
      warn(S->Message);
    else if (S->Tuned)
      K->tuned_entry = S->Tuned;
  }
}

// A token is a Checking (aligned: its low bit is 0) or, for a timed call,
// its start time tagged with a low 1 bit.
void *useEnter(r3_host_kernel *K, const uint64_t *Args) {
  auto *S = reinterpret_cast<UseState *>(K->runtime_state);
  if (!S || S->What != use::Outcome::Replaced)
    return nullptr;
  uint64_t Ordinal = S->Launches++;
  if (K->tuned_entry && Ordinal < U->Plan.VerifyLaunches) {
    BusyScope Busy;
    return beginCheck(*S, Args, Ordinal);
  }
  if (U->Plan.TimeKernels)
    return reinterpret_cast<void *>((monotonicNs() << 1) | 1);
  return nullptr;
}

void useExit(r3_host_kernel *K, void *Token, const uint64_t *Ret) {
  BusyScope Busy;
  auto *S = reinterpret_cast<UseState *>(K->runtime_state);
  auto Bits = reinterpret_cast<uint64_t>(Token);
  if (Bits & 1) {
    S->KernelNs += monotonicNs() - (Bits >> 1);
    ++S->Timed;
    return;
  }
  endCheck(*S, static_cast<Checking *>(Token), Ret);
}

} // namespace r3::host
