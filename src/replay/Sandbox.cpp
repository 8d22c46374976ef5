// The replay server's sandbox through rlimits and Landlock (the kernel's
// unprivileged access control: a process restricts itself, irrevocably, and
// its children inherit it). Landlock is asked for the write-side rights its
// ABI knows; reading stays allowed everywhere, since a candidate's code reads
// nothing but its process may need libraries and /proc.
#include "replay/Sandbox.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define R3_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define R3_UNDER_ASAN 1
#endif
#endif

namespace r3 {

namespace {
// Rights of newer ABIs than the oldest header r3 builds against.
constexpr uint64_t FsRefer = 1ull << 13;    // ABI 2
constexpr uint64_t FsTruncate = 1ull << 14; // ABI 3

uint64_t writeRights(int Abi) {
  uint64_t R = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
               LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
               LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
               LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (Abi >= 2)
    R |= FsRefer;
  if (Abi >= 3)
    R |= FsTruncate;
  return R;
}

/// Allows Rights beneath Path in the ruleset.
Error allowBeneath(int Ruleset, const std::string &Path, uint64_t Rights) {
  int Fd = ::open(Path.c_str(), O_PATH | O_CLOEXEC);
  if (Fd < 0)
    return errnoError("sandbox: open " + Path);
  landlock_path_beneath_attr Rule{};
  Rule.allowed_access = Rights;
  Rule.parent_fd = Fd;
  long Rc = ::syscall(SYS_landlock_add_rule, Ruleset,
                      LANDLOCK_RULE_PATH_BENEATH, &Rule, 0);
  ::close(Fd);
  if (Rc != 0)
    return errnoError("sandbox: landlock rule for " + Path);
  return Error::success();
}

/// Restricts writes to the scratch directory; false if the kernel cannot.
bool enterLandlock(const std::string &Scratch,
                   const std::vector<std::string> &Writable) {
  int Abi = landlockAbiVersion();
  if (Abi <= 0)
    return false;
  uint64_t Rights = writeRights(Abi);
  landlock_ruleset_attr Attr{};
  Attr.handled_access_fs = Rights;
  long Ruleset = ::syscall(SYS_landlock_create_ruleset, &Attr, sizeof(Attr), 0);
  if (Ruleset < 0)
    return false;
  int Fd = static_cast<int>(Ruleset);
  uint64_t FileRights = LANDLOCK_ACCESS_FS_WRITE_FILE | (Rights & FsTruncate);
  bool Ok = !allowBeneath(Fd, Scratch, Rights) &&
            !allowBeneath(Fd, "/dev/null", FileRights);
  for (const std::string &Path : Writable)
    Ok = Ok && !allowBeneath(Fd, Path, Rights);
  Ok = Ok && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
       ::syscall(SYS_landlock_restrict_self, Fd, 0) == 0;
  ::close(Fd);
  return Ok;
}

Error setSoftLimit(int Resource, rlim_t Value, const char *Name) {
  rlimit L;
  if (::getrlimit(Resource, &L) != 0)
    return errnoError(std::string("sandbox: getrlimit ") + Name);
  L.rlim_cur =
      L.rlim_max == RLIM_INFINITY ? Value : std::min(Value, L.rlim_max);
  if (::setrlimit(Resource, &L) != 0)
    return errnoError(std::string("sandbox: setrlimit ") + Name);
  return Error::success();
}

double usedCpuSeconds() {
  rusage U;
  ::getrusage(RUSAGE_SELF, &U);
  return U.ru_utime.tv_sec + U.ru_stime.tv_sec +
         (U.ru_utime.tv_usec + U.ru_stime.tv_usec) / 1e6;
}
} // namespace

int landlockAbiVersion() {
  long V = ::syscall(SYS_landlock_create_ruleset, nullptr, 0,
                     LANDLOCK_CREATE_RULESET_VERSION);
  return V < 0 ? 0 : static_cast<int>(V);
}

Error extendCpuLimit(double Seconds) {
  rlim_t Limit = static_cast<rlim_t>(std::ceil(usedCpuSeconds() + Seconds));
  return setSoftLimit(RLIMIT_CPU, Limit, "RLIMIT_CPU");
}

/// A candidate's fault must kill the server by its signal, which the client
/// reports as `crashed: SIGSEGV`. Handlers installed before (a sanitizer
/// runtime's turn a fault into a report and exit status 1) are removed.
static void defaultFaultSignals() {
  for (int Signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP})
    std::signal(Signal, SIG_DFL);
}

Expected<std::string> enterSandbox(const SandboxSettings &S) {
  defaultFaultSignals();
  rlimit NoCore{0, 0};
  if (::setrlimit(RLIMIT_CORE, &NoCore) != 0)
    return errnoError("sandbox: setrlimit RLIMIT_CORE");
  R3_TRY(extendCpuLimit(S.CpuSeconds));
#ifndef R3_UNDER_ASAN
  if (S.AddressSpaceBytes)
    R3_TRY(setSoftLimit(RLIMIT_AS, S.AddressSpaceBytes, "RLIMIT_AS"));
#endif
  if (::chdir(S.ScratchDir.c_str()) != 0)
    return errnoError("sandbox: cannot enter the scratch directory " +
                      S.ScratchDir);
  if (enterLandlock(S.ScratchDir, S.WritablePaths))
    return std::string("landlock");
  return std::string("rlimits");
}

} // namespace r3
