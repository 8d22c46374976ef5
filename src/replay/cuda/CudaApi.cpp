// Loading the CUDA driver at run time (CudaApi.h says why).
#include "replay/cuda/CudaApi.h"

#include <dlfcn.h>
#include <mutex>
#include <string>

namespace r3::cuda {

namespace {
Api Loaded;
std::once_flag Once;
std::string LoadError;

using GetProcFn = CUresult (*)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

bool entry(GetProcFn Get, const char *Name, void **Slot) {
  CUdriverProcAddressQueryResult Status{};
  CUresult R =
      Get(Name, Slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &Status);
  if (R == CUDA_SUCCESS && *Slot && Status == CU_GET_PROC_ADDRESS_SUCCESS)
    return true;
  LoadError = std::string("the CUDA driver lacks ") + Name +
              " (it is older than the CUDA " +
              std::to_string(CUDA_VERSION / 1000) + "." +
              std::to_string(CUDA_VERSION % 1000 / 10) +
              " this r3 was built with)";
  return false;
}

void load() {
  void *H = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!H) {
    const char *Why = ::dlerror();
    LoadError = std::string("no CUDA driver: ") + (Why ? Why : "libcuda.so.1");
    return;
  }
  auto Get = reinterpret_cast<GetProcFn>(::dlsym(H, "cuGetProcAddress_v2"));
  if (!Get) {
    LoadError = "the CUDA driver lacks cuGetProcAddress_v2 (it predates CUDA "
                "12)";
    return;
  }
  Api A;
#define R3_CUDA_ENTRY(Name)                                                    \
  if (!entry(Get, #Name, reinterpret_cast<void **>(&A.Name)))                  \
    return;
#include "replay/cuda/CudaEntries.def"
#undef R3_CUDA_ENTRY
  Loaded = A;
}
} // namespace

Expected<const Api *> loadApi() {
  std::call_once(Once, load);
  if (!LoadError.empty())
    return Error::make(LoadError);
  return &Loaded;
}

const Api &api() { return Loaded; }

std::string resultText(CUresult R) {
  const char *Name = nullptr, *Text = nullptr;
  if (Loaded.cuGetErrorName)
    Loaded.cuGetErrorName(R, &Name);
  if (Loaded.cuGetErrorString)
    Loaded.cuGetErrorString(R, &Text);
  std::string S = Name ? Name : "CUDA error " + std::to_string(R);
  if (Text)
    S += std::string(": ") + Text;
  return S;
}

Error check(CUresult R, const char *Call) {
  if (R == CUDA_SUCCESS)
    return Error::success();
  return makeError(Call, ": ", resultText(R));
}

bool isSticky(CUresult R) {
  switch (R) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    return true;
  default:
    return false;
  }
}

} // namespace r3::cuda
