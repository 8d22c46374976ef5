// What this machine has (Machine.h).
#include "support/Machine.h"

#include "support/StringUtil.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <thread>
#include <unistd.h>

namespace r3 {

std::string hostCpuName() {
  std::ifstream In("/proc/cpuinfo");
  std::string Line;
  while (std::getline(In, Line))
    if (Line.starts_with("model name")) {
      size_t Colon = Line.find(':');
      if (Colon != std::string::npos && Colon + 2 <= Line.size())
        return Line.substr(Colon + 2);
    }
  return "cpu";
}

std::vector<std::string> visibleGpus() {
  std::vector<std::string> Out;
  if (const char *Visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    for (std::string W : split(Visible, ',')) {
      size_t First = W.find_first_not_of(" \t");
      if (First != std::string::npos)
        Out.push_back(W.substr(First, W.find_last_not_of(" \t") - First + 1));
    }
    return Out;
  }
  std::error_code EC;
  size_t N = 0;
  for (auto It = std::filesystem::directory_iterator(
           "/proc/driver/nvidia/gpus", EC);
       !EC && It != std::filesystem::directory_iterator(); It.increment(EC))
    ++N;
  for (size_t I = 0; I < N; ++I)
    Out.push_back(std::to_string(I));
  return Out;
}

namespace {
/// The first Size - 1 bytes of a /proc file, NUL-terminated; false if it
/// cannot be read. Plain read(2): a replay server asks after every run.
bool readProc(const char *Path, char *Buf, size_t Size) {
  int Fd = ::open(Path, O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return false;
  ssize_t N = ::read(Fd, Buf, Size - 1);
  ::close(Fd);
  if (N < 0)
    return false;
  Buf[N] = 0;
  return true;
}
} // namespace

std::optional<TaskCount> countTasks() {
  char Buf[4096];
  if (!readProc("/proc/self/status", Buf, sizeof(Buf)))
    return std::nullopt;
  const char *Line = std::strstr(Buf, "\nThreads:");
  TaskCount C;
  if (!Line || std::sscanf(Line, "\nThreads: %u", &C.Threads) != 1)
    return std::nullopt;
  // Space-separated pids; absent without CONFIG_PROC_CHILDREN.
  if (readProc("/proc/thread-self/children", Buf, sizeof(Buf)))
    for (const char *P = Buf; *P;) {
      while (*P == ' ' || *P == '\n')
        ++P;
      if (!*P)
        break;
      ++C.Children;
      while (*P && *P != ' ' && *P != '\n')
        ++P;
    }
  return C;
}

unsigned usableCores() {
  cpu_set_t Set;
  if (::sched_getaffinity(0, sizeof Set, &Set) == 0 && CPU_COUNT(&Set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&Set));
  return std::max(1u, std::thread::hardware_concurrency());
}

double nowSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

} // namespace r3
