// A C++ host application instrumented by hand: its kernel's arguments come
// from new[], a std::vector and a new'd object, which reach the runtime's
// allocation table through libstdc++'s operator new (it calls malloc).
#include "record/host/HostAbi.h"

#include <cstdio>
#include <vector>

struct Accumulator {
  double *target; // points into a new[] array
  double scale;
};

extern "C" void accumulate(Accumulator *acc, const float *in, int n) {
  for (int i = 0; i < n; ++i)
    acc->target[i] += acc->scale * in[i];
}

static const uint8_t Bitcode[] = "not really bitcode: accumulate";
static const r3_host_param Params[] = {{R3_HOST_PARAM_POINTER, 8, "acc"},
                                       {R3_HOST_PARAM_POINTER, 8, "in"},
                                       {R3_HOST_PARAM_INTEGER, 4, "n"}};
static r3_host_kernel Desc = {
    "accumulate", Bitcode, sizeof(Bitcode), 3, Params, 0, nullptr, 0, 0};
static r3_host_kernel *const Kernels[] = {&Desc};
static const r3_host_unit Unit = {
    R3_HOST_ABI_VERSION, __FILE__, 1, Kernels, 0, nullptr};
__attribute__((constructor)) static void registerUnit() {
  __r3_host_register_unit(&Unit);
}

int main() {
  std::vector<float> In(32, 2.0f);
  auto *Acc = new Accumulator{new double[32](), 0.5};
  uint64_t Slots[3] = {reinterpret_cast<uint64_t>(Acc),
                       reinterpret_cast<uint64_t>(In.data()), 32};
  void *Token = __r3_host_enter(&Desc, Slots);
  accumulate(Acc, In.data(), 32);
  __r3_host_exit(&Desc, Token, nullptr);
  std::printf("target[31]=%g\n", Acc->target[31]);
  delete[] Acc->target;
  delete Acc;
  return 0;
}
