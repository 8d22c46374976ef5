// Stand-in for the host runtime in the plugin run test: defines the three
// hooks of HostAbi.h and prints what an instrumented unit hands them, so
// that FileCheck sees the descriptors, the argument slots and the return
// slot. With R3_TEST_BITCODE_DIR set it writes each kernel's embedded
// bitcode to <dir>/<kernel>.bc for llvm-dis.
#include "record/host/HostAbi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Weak, so that units without a `scale` (the C++ test) link too.
extern double scale __attribute__((weak));

static const char *kindName(uint32_t Kind) {
  switch (Kind) {
  case R3_HOST_PARAM_POINTER:
    return "pointer";
  case R3_HOST_PARAM_INTEGER:
    return "integer";
  case R3_HOST_PARAM_FLOAT:
    return "float";
  }
  return "unknown";
}

static void writeBitcode(const r3_host_kernel *K) {
  const char *Dir = getenv("R3_TEST_BITCODE_DIR");
  if (!Dir)
    return;
  char Path[4096];
  snprintf(Path, sizeof(Path), "%s/%s.bc", Dir, K->name);
  FILE *F = fopen(Path, "wb");
  if (!F || fwrite(K->bitcode, 1, K->bitcode_size, F) != K->bitcode_size)
    abort();
  fclose(F);
}

static void printKernel(const r3_host_kernel *K) {
  printf(
      "kernel %s: %u params, returns %u, %u globals, bitcode %s, state %lu\n",
      K->name, K->num_params, K->returns, K->num_globals,
      K->bitcode_size > 4 && memcmp(K->bitcode, "BC\xC0\xDE", 4) == 0 ? "ok"
                                                                      : "bad",
      (unsigned long)K->runtime_state);
  for (uint32_t I = 0; I < K->num_params; ++I)
    printf("  param %u: %s %u %s\n", I, kindName(K->params[I].kind),
           K->params[I].size, K->params[I].name);
  for (uint32_t I = 0; I < K->num_globals; ++I)
    printf("  global %s: %lu bytes%s\n", K->globals[I].name,
           (unsigned long)K->globals[I].size,
           K->globals[I].address == &scale ? " (at &scale)" : "");
  writeBitcode(K);
}

void __r3_host_register_unit(const r3_host_unit *U) {
  const char *Base = strrchr(U->source_file, '/');
  printf("unit %s: abi %u, %u kernels, %u globals\n",
         Base ? Base + 1 : U->source_file, U->abi_version, U->num_kernels,
         U->num_globals);
  for (uint32_t I = 0; I < U->num_globals; ++I)
    printf("  unit global %s: %lu bytes%s\n", U->globals[I].name,
           (unsigned long)U->globals[I].size,
           U->globals[I].address == &scale ? " (at &scale)" : "");
  for (uint32_t I = 0; I < U->num_kernels; ++I)
    printKernel(U->kernels[I]);
}

static void printSlot(const r3_host_param *P, uint64_t Slot) {
  if (P->kind == R3_HOST_PARAM_POINTER) {
    printf(" %s=ptr->%g", P->name, *(const double *)(uintptr_t)Slot);
  } else if (P->kind == R3_HOST_PARAM_FLOAT && P->size == 4) {
    float F;
    uint32_t Bits = (uint32_t)Slot;
    memcpy(&F, &Bits, 4);
    printf(" %s=%#llx(%g)", P->name, (unsigned long long)Slot, F);
  } else if (P->kind == R3_HOST_PARAM_FLOAT) {
    double D;
    memcpy(&D, &Slot, 8);
    printf(" %s=%g", P->name, D);
  } else {
    printf(" %s=%#llx", P->name, (unsigned long long)Slot);
  }
}

static int Token;

void *__r3_host_enter(r3_host_kernel *K, const uint64_t *Args) {
  printf("enter %s:", K->name);
  for (uint32_t I = 0; I < K->num_params; ++I)
    printSlot(&K->params[I], Args[I]);
  printf("\n");
  K->runtime_state += 1; // the descriptor is writable
  return &Token;
}

void __r3_host_exit(r3_host_kernel *K, void *T, const uint64_t *Ret) {
  printf("exit %s: token %s, state %lu, ret ", K->name,
         T == &Token ? "ok" : "wrong", (unsigned long)K->runtime_state);
  if (Ret)
    printf("%#llx\n", (unsigned long long)*Ret);
  else
    printf("none\n");
}
