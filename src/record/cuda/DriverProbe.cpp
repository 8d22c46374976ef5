// The driver probe: libcuda.so.1 through dlopen, cuInit and cuGetErrorName
// declared here by their C signatures so that r3 needs no CUDA headers.
#include "record/cuda/DriverProbe.h"

#include <dlfcn.h>
#include <string>

namespace r3 {

namespace {
using CuInit = int (*)(unsigned);
using CuErrorText = int (*)(int, const char **);

std::string errorText(void *Lib, int Code) {
  auto Name = reinterpret_cast<CuErrorText>(dlsym(Lib, "cuGetErrorName"));
  auto Text = reinterpret_cast<CuErrorText>(dlsym(Lib, "cuGetErrorString"));
  const char *N = nullptr, *T = nullptr;
  if (Name)
    Name(Code, &N);
  if (Text)
    Text(Code, &T);
  std::string Out = N ? N : "error " + std::to_string(Code);
  return T ? Out + ": " + T : Out;
}
} // namespace

Error probeCudaDriver() {
  void *Lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!Lib) {
    const char *Why = dlerror();
    return makeError("no CUDA device is available (the CUDA driver cannot be "
                     "loaded: ",
                     Why ? Why : "libcuda.so.1 not found", ")");
  }
  auto Init = reinterpret_cast<CuInit>(dlsym(Lib, "cuInit"));
  if (!Init)
    return Error::make("no CUDA device is available (libcuda.so.1 has no "
                       "cuInit: not a CUDA driver)");
  int R = Init(0);
  if (R != 0)
    return makeError("no CUDA device is available (cuInit: ", errorText(Lib, R),
                     ")");
  return Error::success(); // the library stays loaded: the process ends soon
}

} // namespace r3
