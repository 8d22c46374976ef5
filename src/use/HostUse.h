/* The interface between the host runtime (libr3-host-rt, linked into the
 * application) and the use-library (libr3-host-use.so), which the runtime
 * loads only under `r3 run --use`. The runtime stays small (libc and the C++
 * runtime); the use-library brings LLVM: it compiles the tuned code with the
 * same JIT, pipeline and code generation level the campaign measured, and
 * compares outputs under the campaign's tolerance. C, looked up with dlsym. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t (*r3_host_entry)(const uint64_t *args);

typedef struct r3_host_use_global {
  const char *name; /* as the bitcode names it */
  uint64_t address;
} r3_host_use_global;

/* Compiles the function `kernel` of the bitcode with the pipeline (empty:
 * default<On>, n the level the application was compiled with) and code
 * generation level (-1: that level), binding the global declarations to the
 * given addresses. Returns the entry, or null with a message in error. */
typedef r3_host_entry (*r3_host_use_compile_fn)(
    const uint8_t *bitcode, uint64_t size, const char *kernel,
    const r3_host_use_global *globals, uint32_t num_globals,
    const char *pipeline, int codegen_opt, char *error, size_t error_size);
#define R3_HOST_USE_COMPILE "r3_host_use_compile"

/* Compares actual with expected (size bytes) under a tolerance (the
 * ToleranceKind and ElementType values of r3's Candidate.h). Returns 1 when
 * they agree, else 0 with a description of the first mismatches. */
typedef int (*r3_host_use_compare_fn)(const char *label,
                                      const uint8_t *expected,
                                      const uint8_t *actual, uint64_t size,
                                      int tolerance, double value,
                                      int element_type, char *message,
                                      size_t message_size);
#define R3_HOST_USE_COMPARE "r3_host_use_compare"

#ifdef __cplusplus
}
#endif
