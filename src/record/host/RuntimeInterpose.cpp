// Allocation tracking for the host runtime: this library defines the malloc
// family and mmap/munmap/mremap, so that the dynamic linker binds the
// application's calls (and libstdc++'s operator new/delete, which call malloc
// and free) to them. Each forwards to glibc's own entry points (__libc_malloc
// and friends, exported for exactly this purpose) or to the raw system call
// for mmap — never dlsym, which itself allocates and would recurse. Only when
// the process records under `r3 record` (TrackingOn, decided by the runtime's
// constructor) is an allocation entered into the table; otherwise each call
// costs one predictable branch.
//
// Limitation: allocations made before the runtime's constructor ran (by the
// constructors of libraries initialized earlier) are unknown; a kernel
// argument pointing into one is refused like a stack pointer.
#include "record/host/Runtime.h"

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <mutex>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern "C" {
void *__libc_malloc(size_t);
void __libc_free(void *);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void *__libc_valloc(size_t);
void *__libc_pvalloc(size_t);
}

__thread int R3RuntimeBusy __attribute__((tls_model("initial-exec"))) = 0;

#define R3_EXPORT extern "C" __attribute__((visibility("default")))

namespace r3::host {

bool TrackingOn = false;

namespace {
std::mutex TableLock;
AllocationTable Table;

bool tracking() {
  return __builtin_expect(TrackingOn, false) && R3RuntimeBusy == 0;
}

void track(void *P, size_t N, AllocKind K) {
  if (!P)
    return;
  std::lock_guard<std::mutex> L(TableLock);
  Table.insert({reinterpret_cast<uint64_t>(P), N, K});
}

bool untrack(void *P, Allocation *Out = nullptr) {
  std::lock_guard<std::mutex> L(TableLock);
  return Table.erase(reinterpret_cast<uint64_t>(P), Out);
}

void untrackPages(void *P, size_t N) {
  std::lock_guard<std::mutex> L(TableLock);
  uint64_t Base = reinterpret_cast<uint64_t>(P);
  const Allocation *A = Table.find(Base);
  if (A && A->Kind == AllocKind::Mmap && A->Size <= N) {
    uint64_t Size = A->Size;
    Table.erase(Base); // the common case: the whole mapping goes
    if (Size == N)
      return;
  }
  Table.unmapRange(Base, N);
}

size_t pageRound(size_t N) {
  size_t Page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return (N + Page - 1) & ~(Page - 1);
}

void *rawMmap(void *Addr, size_t Len, int Prot, int Flags, int Fd, off_t Off) {
  return reinterpret_cast<void *>(
      ::syscall(SYS_mmap, Addr, Len, Prot, Flags, Fd, Off));
}

void *trackedMmap(void *Addr, size_t Len, int Prot, int Flags, int Fd,
                  off_t Off) {
  void *P = rawMmap(Addr, Len, Prot, Flags, Fd, Off);
  if (P == MAP_FAILED || !tracking())
    return P;
  if (Flags & MAP_FIXED)
    untrackPages(P, pageRound(Len)); // it replaced whatever was there
  if (Flags & MAP_ANONYMOUS)
    track(P, pageRound(Len), AllocKind::Mmap);
  return P;
}
} // namespace

std::vector<Allocation> trackedAllocations() {
  std::lock_guard<std::mutex> L(TableLock);
  return Table.snapshot();
}

bool stillTracked(uint64_t Base, uint64_t Size) {
  std::lock_guard<std::mutex> L(TableLock);
  const Allocation *A = Table.find(Base);
  return A && A->Size == Size;
}

} // namespace r3::host

using namespace r3::host;

R3_EXPORT void *malloc(size_t N) {
  void *P = __libc_malloc(N);
  if (tracking())
    track(P, N, AllocKind::Heap);
  return P;
}

R3_EXPORT void free(void *P) {
  if (P && tracking())
    untrack(P); // before the block can be handed out again
  __libc_free(P);
}

R3_EXPORT void *calloc(size_t N, size_t Size) {
  void *P = __libc_calloc(N, Size);
  if (tracking())
    track(P, N * Size, AllocKind::Heap); // no overflow: calloc succeeded
  return P;
}

R3_EXPORT void *realloc(void *Old, size_t N) {
  if (!tracking())
    return __libc_realloc(Old, N);
  Allocation Was;
  bool Had = Old && untrack(Old, &Was);
  void *P = __libc_realloc(Old, N);
  if (P)
    track(P, N, AllocKind::Heap);
  else if (Had && N != 0) // failed: the old block is still there
    track(Old, Was.Size, AllocKind::Heap);
  return P;
}

R3_EXPORT void *reallocarray(void *Old, size_t N, size_t Size) {
  size_t Bytes = 0;
  if (__builtin_mul_overflow(N, Size, &Bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(Old, Bytes);
}

R3_EXPORT void *memalign(size_t Align, size_t N) {
  void *P = __libc_memalign(Align, N);
  if (tracking())
    track(P, N, AllocKind::Heap);
  return P;
}

R3_EXPORT void *aligned_alloc(size_t Align, size_t N) {
  return memalign(Align, N);
}

R3_EXPORT int posix_memalign(void **Out, size_t Align, size_t N) {
  if (Align == 0 || (Align & (Align - 1)) != 0 || Align % sizeof(void *) != 0)
    return EINVAL;
  int Saved = errno; // posix_memalign reports through its result, not errno
  void *P = memalign(Align, N);
  errno = Saved;
  if (!P)
    return ENOMEM;
  *Out = P;
  return 0;
}

R3_EXPORT void *valloc(size_t N) {
  void *P = __libc_valloc(N);
  if (tracking())
    track(P, N, AllocKind::Heap);
  return P;
}

R3_EXPORT void *pvalloc(size_t N) {
  void *P = __libc_pvalloc(N);
  if (tracking())
    track(P, pageRound(N), AllocKind::Heap);
  return P;
}

R3_EXPORT void *mmap(void *Addr, size_t Len, int Prot, int Flags, int Fd,
                     off_t Off) {
  return trackedMmap(Addr, Len, Prot, Flags, Fd, Off);
}

R3_EXPORT void *mmap64(void *Addr, size_t Len, int Prot, int Flags, int Fd,
                       off_t Off) {
  return trackedMmap(Addr, Len, Prot, Flags, Fd, Off);
}

R3_EXPORT int munmap(void *Addr, size_t Len) {
  if (tracking())
    untrackPages(Addr, pageRound(Len));
  return static_cast<int>(::syscall(SYS_munmap, Addr, Len));
}

R3_EXPORT void *mremap(void *Old, size_t OldLen, size_t NewLen, int Flags,
                       ...) {
  void *Want = nullptr;
  if (Flags & MREMAP_FIXED) {
    va_list Ap;
    va_start(Ap, Flags);
    Want = va_arg(Ap, void *);
    va_end(Ap);
  }
  bool Track = tracking();
  Allocation Was;
  bool Had = Track && untrack(Old, &Was);
  void *P = reinterpret_cast<void *>(
      ::syscall(SYS_mremap, Old, OldLen, NewLen, Flags, Want));
  if (Had && P != MAP_FAILED)
    track(P, pageRound(NewLen), Was.Kind);
  else if (Had)
    track(Old, Was.Size, Was.Kind);
  return P;
}
