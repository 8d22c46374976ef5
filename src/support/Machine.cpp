// What this machine has (Machine.h).
#include "support/Machine.h"

#include "support/StringUtil.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

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

double nowSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

} // namespace r3
