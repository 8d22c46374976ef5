/* The interface between the r3 pass plugin (which generates code against it in
 * every instrumented translation unit) and the host runtime (which implements
 * it). C, so that the generated IR and the runtime agree on one layout; the
 * plugin builds LLVM struct types with exactly these fields, in this order.
 *
 * For each selected function F the plugin
 *   - embeds the LLVM bitcode of F and the functions it reaches (before any
 *     optimization), as an r3_host_kernel descriptor;
 *   - renames F's body to an internal function and gives F's symbol a wrapper
 *     that stores every argument into a uint64_t slot array, calls
 *     __r3_host_enter, calls the body (or, when the descriptor's
 *     tuned_entry is set, tuned_entry with the slots), and calls
 *     __r3_host_exit with the return value's slot (NULL for void);
 *   - adds a constructor that calls __r3_host_register_unit once.
 *
 * Argument slots: one uint64_t per parameter, the value in its low bytes
 * (pointers as addresses, integers zero-extended, float and double as their
 * bits). A replay loads each parameter with its IR type from offset 8*i. */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define R3_HOST_ABI_VERSION 2u

enum {
  R3_HOST_PARAM_POINTER = 1,
  R3_HOST_PARAM_INTEGER = 2,
  R3_HOST_PARAM_FLOAT = 3
};

typedef struct r3_host_param {
  uint32_t kind; /* R3_HOST_PARAM_* */
  uint32_t size; /* bytes of the value: 8 for pointers, 4 for float, ... */
  const char *name; /* the parameter's name in the source, or "arg<i>" */
} r3_host_param;

typedef struct r3_host_global {
  const char *name;    /* the variable's name in the embedded bitcode */
  const void *address; /* where it lives in this process */
  uint64_t size;       /* bytes */
} r3_host_global;

typedef struct r3_host_kernel {
  const char *name; /* the function's symbol name (mangled for C++) */
  const uint8_t *bitcode;
  uint64_t bitcode_size;
  uint32_t num_params;
  const r3_host_param *params;
  /* The non-constant globals F and its callees use, by their names in the
   * bitcode (internal ones renamed "__r3_internal.<name>"). */
  uint32_t num_globals;
  const r3_host_global *globals;
  uint32_t returns; /* 0: void; else the size in bytes of the return value */
  uint64_t runtime_state; /* zero; owned by the runtime */
  /* Null; set by the runtime under `r3 run --use` to the tuned code's entry,
   * which takes the argument slots and returns the result in a slot (as
   * r3's HostEntry does). The wrapper calls it instead of the body. */
  uint64_t (*tuned_entry)(const uint64_t *args);
} r3_host_kernel;

typedef struct r3_host_unit {
  uint32_t abi_version; /* R3_HOST_ABI_VERSION */
  const char *source_file;
  uint32_t num_kernels;
  r3_host_kernel *const *kernels;
  /* Every global variable the unit defines, so that a pointer argument into
   * one (a static array, say) is recognized. */
  uint32_t num_globals;
  const r3_host_global *globals;
} r3_host_unit;

/* Called once per instrumented unit, from a constructor. */
void __r3_host_register_unit(const r3_host_unit *unit);
/* Called before every call of an instrumented function with its argument
 * slots. Returns a token for __r3_host_exit; NULL when the call is neither
 * timed nor recorded (the fast path when r3 record is not running). */
void *__r3_host_enter(r3_host_kernel *kernel, const uint64_t *args);
/* Called after the call; ret points at the return value's slot, or is NULL
 * for a void function. */
void __r3_host_exit(r3_host_kernel *kernel, void *token, const uint64_t *ret);

#ifdef __cplusplus
}
#endif
