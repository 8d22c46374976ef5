// The GPU's side of verification: r3_verify_scan runs one scan
// (VerifyScan.h) over a region on the device, each thread taking its share,
// and adds what it found to its count and lowest failing unit with two
// atomics, only when it found something. Built into PTX with clang when r3 is built (no CUDA headers,
// PTX old enough for any driver r3 supports) and loaded by
// cuda/DeviceVerify.cpp.
#include "replay/VerifyScan.h"

extern "C" __attribute__((global)) void
r3_verify_scan(r3::scan::Op O, uint64_t *Count, uint64_t *First) {
  uint64_t Thread = uint64_t(__nvvm_read_ptx_sreg_ctaid_x()) *
                        __nvvm_read_ptx_sreg_ntid_x() +
                    __nvvm_read_ptx_sreg_tid_x();
  uint64_t Threads = uint64_t(__nvvm_read_ptx_sreg_nctaid_x()) *
                     __nvvm_read_ptx_sreg_ntid_x();
  uint64_t Mine = 0, Lowest = r3::scan::NoUnit;
  r3::scan::scanUnits(O, Thread, Threads, Mine, Lowest);
  if (Mine) {
    __atomic_fetch_add(Count, Mine, __ATOMIC_RELAXED);
    __atomic_fetch_min(First, Lowest, __ATOMIC_RELAXED);
  }
}
