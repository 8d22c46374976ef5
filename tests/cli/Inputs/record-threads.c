/* Threads calling one instrumented kernel at once, each on its own buffers
 * (allocated on its thread): every call is timed, the selected ones are
 * recorded one at a time, and nothing deadlocks. */
#include "record/host/HostAbi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void bump(int *v, int n) {
  for (int i = 0; i < n; ++i)
    v[i] += i;
}

static const uint8_t bitcode[] = "not really bitcode: bump";
static const r3_host_param params[] = {{R3_HOST_PARAM_POINTER, 8, "v"},
                                       {R3_HOST_PARAM_INTEGER, 4, "n"}};
static r3_host_kernel desc = {
    "bump", bitcode, sizeof(bitcode), 2, params, 0, NULL, 0, 0};
static r3_host_kernel *const kernels[] = {&desc};
static const r3_host_unit unit = {
    R3_HOST_ABI_VERSION, __FILE__, 1, kernels, 0, NULL};
__attribute__((constructor)) static void register_unit(void) {
  __r3_host_register_unit(&unit);
}

enum { Threads = 4, Calls = 50, N = 256 };

static void *worker(void *arg) {
  (void)arg;
  for (int c = 0; c < Calls; ++c) {
    int *v = calloc(N, sizeof(int));
    uint64_t slots[2] = {(uint64_t)v, N};
    void *token = __r3_host_enter(&desc, slots);
    bump(v, N);
    __r3_host_exit(&desc, token, NULL);
    free(v);
  }
  return NULL;
}

int main(void) {
  pthread_t t[Threads];
  for (int i = 0; i < Threads; ++i)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < Threads; ++i)
    pthread_join(t[i], NULL);
  printf("threads done\n");
  return 0;
}
