// The allocation table: open addressing in raw-mmap'd pages (see the header).
#include "record/host/AllocationTable.h"

#include <algorithm>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace r3::host {

namespace {
constexpr size_t InitialCapacity = 4096;

// The runtime interposes mmap; the table maps its pages with the system call
// directly so that they are never mistaken for the application's.
void *mapPages(size_t Bytes) {
  long P = ::syscall(SYS_mmap, nullptr, Bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (P < 0 && P > -4096)
    return nullptr;
  return reinterpret_cast<void *>(P);
}

void unmapPages(void *P, size_t Bytes) {
  if (P)
    ::syscall(SYS_munmap, P, Bytes);
}

uint64_t mix(uint64_t X) { // splitmix64's finalizer: addresses share low bits
  X ^= X >> 30;
  X *= 0xbf58476d1ce4e5b9ull;
  X ^= X >> 27;
  X *= 0x94d049bb133111ebull;
  return X ^ (X >> 31);
}
} // namespace

AllocationTable::~AllocationTable() {
  unmapPages(Slots, Capacity * sizeof(Slot));
}

size_t AllocationTable::home(uint64_t Base) const {
  return mix(Base) & (Capacity - 1);
}

size_t AllocationTable::probe(uint64_t Base) const {
  size_t I = home(Base);
  while (Slots[I].Base != 0 && Slots[I].Base != Base)
    I = (I + 1) & (Capacity - 1);
  return I;
}

bool AllocationTable::grow() {
  size_t NewCapacity = Capacity ? Capacity * 2 : InitialCapacity;
  auto *New = static_cast<Slot *>(mapPages(NewCapacity * sizeof(Slot)));
  if (!New)
    return false;
  Slot *Old = Slots;
  size_t OldCapacity = Capacity;
  Slots = New; // fresh anonymous pages are zero: every slot empty
  Capacity = NewCapacity;
  for (size_t I = 0; I < OldCapacity; ++I)
    if (Old[I].Base != 0)
      Slots[probe(Old[I].Base)] = Old[I];
  unmapPages(Old, OldCapacity * sizeof(Slot));
  return true;
}

bool AllocationTable::insert(const Allocation &A) {
  if (A.Base == 0)
    return true;
  if ((Count + 1) * 2 > Capacity && !grow())
    return false;
  size_t I = probe(A.Base);
  if (Slots[I].Base == 0)
    ++Count;
  Slots[I] = {A.Base, A.Size, A.Kind};
  return true;
}

void AllocationTable::eraseAt(size_t I) {
  // Backward-shift deletion: move later members of the probe run into the
  // hole while their home position allows it, so lookups never need
  // tombstones.
  size_t Mask = Capacity - 1;
  for (size_t J = (I + 1) & Mask; Slots[J].Base != 0; J = (J + 1) & Mask) {
    size_t H = home(Slots[J].Base);
    bool Movable = I <= J ? (H <= I || H > J) : (H <= I && H > J);
    if (Movable) {
      Slots[I] = Slots[J];
      I = J;
    }
  }
  Slots[I] = {0, 0, AllocKind::Heap};
  --Count;
}

bool AllocationTable::erase(uint64_t Base, Allocation *Out) {
  if (Count == 0 || Base == 0)
    return false;
  size_t I = probe(Base);
  if (Slots[I].Base == 0)
    return false;
  if (Out)
    *Out = {Slots[I].Base, Slots[I].Size, Slots[I].Kind};
  eraseAt(I);
  return true;
}

const Allocation *AllocationTable::find(uint64_t Base) const {
  if (Count == 0 || Base == 0)
    return nullptr;
  size_t I = probe(Base);
  if (Slots[I].Base == 0)
    return nullptr;
  static_assert(sizeof(Slot) == sizeof(Allocation));
  return reinterpret_cast<const Allocation *>(&Slots[I]);
}

const Allocation *AllocationTable::findContaining(uint64_t Address) const {
  for (size_t I = 0; I < Capacity; ++I) {
    const Slot &S = Slots[I];
    if (S.Base != 0 && Address >= S.Base &&
        Address - S.Base < std::max<uint64_t>(S.Size, 1))
      return reinterpret_cast<const Allocation *>(&S);
  }
  return nullptr;
}

void AllocationTable::unmapRange(uint64_t Base, uint64_t Size) {
  uint64_t End = Base + Size;
  // Collect first: erasing shifts slots under a running scan. At most a few
  // mappings overlap one munmap; more are handled by scanning again.
  for (bool Again = true; Again;) {
    Again = false;
    for (size_t I = 0; I < Capacity; ++I) {
      Slot S = Slots[I];
      if (S.Base == 0 || S.Kind != AllocKind::Mmap || S.Base >= End ||
          S.Base + S.Size <= Base)
        continue;
      eraseAt(I);
      if (S.Base < Base)
        insert({S.Base, Base - S.Base, AllocKind::Mmap});
      if (S.Base + S.Size > End)
        insert({End, S.Base + S.Size - End, AllocKind::Mmap});
      Again = true;
      break;
    }
  }
}

std::vector<Allocation> AllocationTable::snapshot() const {
  std::vector<Allocation> Out;
  Out.reserve(Count);
  for (size_t I = 0; I < Capacity; ++I)
    if (Slots[I].Base != 0)
      Out.push_back({Slots[I].Base, Slots[I].Size, Slots[I].Kind});
  std::sort(
      Out.begin(), Out.end(),
      [](const Allocation &A, const Allocation &B) { return A.Base < B.Base; });
  return Out;
}

const Allocation *findIn(const std::vector<Allocation> &Sorted,
                         uint64_t Address) {
  auto It = std::upper_bound(
      Sorted.begin(), Sorted.end(), Address,
      [](uint64_t A, const Allocation &E) { return A < E.Base; });
  if (It == Sorted.begin())
    return nullptr;
  --It;
  // A zero-size allocation (malloc(0)) still owns its base address.
  if (Address - It->Base < std::max<uint64_t>(It->Size, 1))
    return &*It;
  return nullptr;
}

} // namespace r3::host
