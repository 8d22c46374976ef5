/* A host-backend application instrumented by hand, the way the pass plugin
 * does it (descriptors, a wrapper calling __r3_host_enter/_exit, a
 * registering constructor), so that the runtime is tested on its own. Its
 * kernel reads and writes memory of every kind the runtime tracks: malloc,
 * calloc, aligned_alloc, posix_memalign, anonymous mmap, data globals, and an
 * allocation reached only through a pointer stored in a struct.
 *
 * usage: record-regions MODE [DUMPDIR]
 *   MODE: once, twice, none, stack, exit3, abort, fork, system (see main)
 *   DUMPDIR: write each region's bytes before and after the call there. */
#include "record/host/HostAbi.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct Pair {
  int *values; /* an allocation only this pointer reaches */
  long count;
};

int counter_global = 5;                 /* a global the kernel uses */
int table_global[4] = {10, 20, 30, 40}; /* a global an argument points into */

long combine(struct Pair *p, int *h, double *c, float *al, unsigned char *m,
             const int *t, int n) {
  for (long i = 0; i < p->count; ++i)
    p->values[i] *= 2;
  for (int i = 0; i < n; ++i)
    h[i] += 1;
  for (int i = 0; i < n; ++i)
    al[i] = (float)c[i] + 1.5f + (float)t[0];
  m[0] = 0xAB;
  counter_global += 1;
  return (long)n * 0x0101;
}

void helper(int *v) { v[0] = 7; }

static const uint8_t combine_bitcode[] = "not really bitcode: combine";
static const uint8_t helper_bitcode[] = "not really bitcode: helper";
static const r3_host_param combine_params[] = {
    {R3_HOST_PARAM_POINTER, 8, "p"}, {R3_HOST_PARAM_POINTER, 8, "h"},
    {R3_HOST_PARAM_POINTER, 8, "c"}, {R3_HOST_PARAM_POINTER, 8, "al"},
    {R3_HOST_PARAM_POINTER, 8, "m"}, {R3_HOST_PARAM_POINTER, 8, "t"},
    {R3_HOST_PARAM_INTEGER, 4, "n"}};
static const r3_host_param helper_params[] = {{R3_HOST_PARAM_POINTER, 8, "v"}};
static const r3_host_global combine_globals[] = {
    {"counter_global", &counter_global, sizeof(counter_global)}};
static r3_host_kernel combine_desc = {"combine",
                                      combine_bitcode,
                                      sizeof(combine_bitcode),
                                      7,
                                      combine_params,
                                      1,
                                      combine_globals,
                                      8,
                                      0};
static r3_host_kernel helper_desc = {"helper",
                                     helper_bitcode,
                                     sizeof(helper_bitcode),
                                     1,
                                     helper_params,
                                     0,
                                     NULL,
                                     0,
                                     0};
static r3_host_kernel *const unit_kernels[] = {&combine_desc, &helper_desc};
static const r3_host_global unit_globals[] = {
    {"counter_global", &counter_global, sizeof(counter_global)},
    {"table_global", table_global, sizeof(table_global)}};
static const r3_host_unit unit = {R3_HOST_ABI_VERSION, __FILE__, 2,
                                  unit_kernels,        2,        unit_globals};

__attribute__((constructor)) static void register_unit(void) {
  __r3_host_register_unit(&unit);
}

static long call_combine(struct Pair *p, int *h, double *c, float *al,
                         unsigned char *m, const int *t, int n) {
  uint64_t slots[7] = {(uint64_t)p,          (uint64_t)h, (uint64_t)c,
                       (uint64_t)al,         (uint64_t)m, (uint64_t)t,
                       (uint64_t)(uint32_t)n};
  void *token = __r3_host_enter(&combine_desc, slots);
  long r = combine(p, h, c, al, m, t, n);
  uint64_t ret = (uint64_t)r;
  __r3_host_exit(&combine_desc, token, &ret);
  return r;
}

static void call_helper(int *v) {
  uint64_t slots[1] = {(uint64_t)v};
  void *token = __r3_host_enter(&helper_desc, slots);
  helper(v);
  __r3_host_exit(&helper_desc, token, NULL);
}

static void dump(const char *dir, const char *phase, const char *name,
                 const void *p, size_t n) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s-%s.bin", dir, phase, name);
  FILE *f = fopen(path, "wb");
  fwrite(p, 1, n, f);
  fclose(f);
}

enum { N = 16 };
struct Inputs {
  struct Pair *p;
  int *h;
  double *c;
  float *al;
  unsigned char *m;
  size_t mbytes;
};

static void dump_all(const char *dir, const char *phase, struct Inputs *in) {
  if (!dir)
    return;
  dump(dir, phase, "p", in->p, sizeof(*in->p));
  dump(dir, phase, "values", in->p->values, 8 * sizeof(int));
  dump(dir, phase, "h", in->h, N * sizeof(int));
  dump(dir, phase, "c", in->c, N * sizeof(double));
  dump(dir, phase, "al", in->al, N * sizeof(float));
  dump(dir, phase, "m", in->m, in->mbytes);
  dump(dir, phase, "counter", &counter_global, sizeof(counter_global));
  dump(dir, phase, "table", table_global, sizeof(table_global));
}

static void make_inputs(struct Inputs *in) {
  in->p = malloc(sizeof(struct Pair));
  in->p->values = malloc(8 * sizeof(int));
  in->p->count = 8;
  for (int i = 0; i < 8; ++i)
    in->p->values[i] = i + 1;
  in->h = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i)
    in->h[i] = 100 * i;
  in->c = calloc(N, sizeof(double));
  in->c[3] = 3.25;
  in->al = aligned_alloc(64, N * sizeof(float));
  memset(in->al, 0, N * sizeof(float));
  in->mbytes = 2 * (size_t)sysconf(_SC_PAGESIZE);
  in->m = mmap(NULL, in->mbytes, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  in->m[1] = 0x11;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "once";
  const char *dir = argc > 2 ? argv[2] : NULL;
  struct Inputs in;
  make_inputs(&in);
  /* posix_memalign: the helper's argument */
  int *v = NULL;
  if (posix_memalign((void **)&v, 32, 4 * sizeof(int)) != 0)
    return 1;
  printf("app: mode %s\n", mode);
  fprintf(stderr, "app: this line goes to stderr\n");
  if (strcmp(mode, "stack") == 0) {
    int on_stack[N] = {0};
    call_combine(in.p, on_stack, in.c, in.al, in.m, table_global + 1, N);
    printf("app: survived the refusal, h[0]=%d\n", on_stack[0]);
    return 0;
  }
  if (strcmp(mode, "system") == 0) {
    /* A program the application runs is not recorded: the contract is gone
     * from the environment and the stream is closed on exec. */
    fflush(stdout);
    int rc = system("env | grep -c '^R3_RECORD_'; ls -l /proc/self/fd | "
                    "grep -c socket");
    (void)rc;
  }
  if (strcmp(mode, "fork") == 0) {
    /* A forked child's call is not recorded (nor does it write into the
     * stream); the parent's later call is launch 1 of combine. */
    pid_t pid = fork();
    if (pid == 0) {
      call_combine(in.p, in.h, in.c, in.al, in.m, table_global + 1, N);
      _exit(0);
    }
    waitpid(pid, NULL, 0);
  }
  if (strcmp(mode, "none") == 0) {
    call_helper(v);
    return 0;
  }
  dump_all(dir, "pre", &in);
  long r = call_combine(in.p, in.h, in.c, in.al, in.m, table_global + 1, N);
  dump_all(dir, "post", &in);
  call_helper(v);
  if (strcmp(mode, "twice") == 0)
    r += call_combine(in.p, in.h, in.c, in.al, in.m, table_global + 1, N);
  printf("app: combine returned %ld, values[7]=%d\n", r, in.p->values[7]);
  fflush(stdout);
  if (strcmp(mode, "exit3") == 0)
    return 3;
  if (strcmp(mode, "abort") == 0)
    abort();
  return 0;
}
