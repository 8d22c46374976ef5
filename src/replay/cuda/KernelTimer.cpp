// CUPTI kernel activity in the replay server (KernelTimer.h). The buffers
// CUPTI fills are handed back through bufferCompleted, on CUPTI's thread or
// inside a flush; the kernels' (start, end) pairs gather under a lock and
// durations() sorts them by start, which is launch order since the server runs
// one launch at a time. The verification kernel's records are left out: it
// runs between a candidate's runs, and its time is not theirs.
#include "replay/cuda/KernelTimer.h"

#include "replay/cuda/CudaScans.h"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

namespace r3::cuda {

namespace {
struct Cupti {
  decltype(&::cuptiActivityEnable) Enable = nullptr;
  decltype(&::cuptiActivityDisable) Disable = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) Register = nullptr;
  decltype(&::cuptiActivityFlushAll) Flush = nullptr;
  decltype(&::cuptiActivityGetNextRecord) Next = nullptr;
  decltype(&::cuptiGetResultString) ResultString = nullptr;
};

Cupti Api;
std::mutex Lock;
std::vector<std::pair<uint64_t, uint64_t>> Spans; ///< (start, end), ns
constexpr size_t BufferBytes = 1 << 20;

void CUPTIAPI bufferRequested(uint8_t **Buffer, size_t *Size,
                              size_t *MaxRecords) {
  *Buffer = static_cast<uint8_t *>(std::aligned_alloc(8, BufferBytes));
  *Size = *Buffer ? BufferBytes : 0;
  *MaxRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *Buffer, size_t,
                              size_t Valid) {
  {
    std::lock_guard<std::mutex> L(Lock);
    CUpti_Activity *Record = nullptr;
    while (Api.Next(Buffer, Valid, &Record) == CUPTI_SUCCESS)
      if (Record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
          Record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        auto *K = reinterpret_cast<CUpti_ActivityKernel10 *>(Record);
        uint64_t Start = K->start, End = K->end; // packed fields
        if (!K->name || std::strcmp(K->name, ScanKernelName) != 0)
          Spans.push_back({Start, End});
      }
  }
  std::free(Buffer);
}

Error check(CUptiResult R, const char *Call) {
  if (R == CUPTI_SUCCESS)
    return Error::success();
  const char *Text = nullptr;
  if (Api.ResultString)
    Api.ResultString(R, &Text);
  return makeError(Call, ": ", Text ? Text : "CUPTI error " + std::to_string(R));
}

/// libcupti from the toolkit r3 was built with, else from the loader's path.
void *openCupti(std::string &Why) {
  for (const char *Name : {R3_CUPTI_DIR "/libcupti.so", "libcupti.so",
                           "libcupti.so.13", "libcupti.so.12"})
    if (void *H = ::dlopen(Name, RTLD_NOW | RTLD_LOCAL))
      return H;
  const char *E = ::dlerror();
  Why = std::string("no CUPTI: ") + (E ? E : "libcupti.so");
  return nullptr;
}

template <typename T> bool symbol(void *H, const char *Name, T &Slot) {
  Slot = reinterpret_cast<T>(::dlsym(H, Name));
  return Slot != nullptr;
}

Error load() {
  std::string Why;
  void *H = openCupti(Why);
  if (!H)
    return Error::make(Why);
  bool Ok = symbol(H, "cuptiActivityEnable", Api.Enable) &&
            symbol(H, "cuptiActivityDisable", Api.Disable) &&
            symbol(H, "cuptiActivityRegisterCallbacks", Api.Register) &&
            symbol(H, "cuptiActivityFlushAll", Api.Flush) &&
            symbol(H, "cuptiActivityGetNextRecord", Api.Next) &&
            symbol(H, "cuptiGetResultString", Api.ResultString);
  if (!Ok)
    return Error::make("CUPTI lacks the activity API r3 uses");
  return Error::success();
}
} // namespace

Expected<std::unique_ptr<KernelTimer>> KernelTimer::start() {
  R3_TRY(load());
  R3_TRY(check(Api.Register(bufferRequested, bufferCompleted),
               "cuptiActivityRegisterCallbacks"));
  R3_TRY(check(Api.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
               "cuptiActivityEnable"));
  return std::unique_ptr<KernelTimer>(new KernelTimer());
}

KernelTimer::~KernelTimer() {
  Api.Disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

Error KernelTimer::clear() {
  R3_TRY(check(Api.Flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
               "cuptiActivityFlushAll"));
  std::lock_guard<std::mutex> L(Lock);
  Spans.clear();
  return Error::success();
}

Expected<std::optional<std::vector<uint64_t>>>
KernelTimer::durations(size_t Count) {
  R3_TRY(check(Api.Flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
               "cuptiActivityFlushAll"));
  std::vector<std::pair<uint64_t, uint64_t>> Got;
  {
    std::lock_guard<std::mutex> L(Lock);
    Got = Spans;
  }
  if (Got.size() != Count)
    return std::optional<std::vector<uint64_t>>();
  std::sort(Got.begin(), Got.end());
  std::vector<uint64_t> Ns;
  for (auto [Start, End] : Got)
    Ns.push_back(End > Start ? End - Start : 0);
  return std::optional<std::vector<uint64_t>>(std::move(Ns));
}

} // namespace r3::cuda
