// The host runtime's table of live allocations (heap blocks and anonymous
// mappings), keyed by base address. It sits under malloc, so it must never
// call malloc itself: its slots live in pages mapped with a raw mmap system
// call, and it grows by mapping a larger array and rehashing. Open addressing
// with linear probing and backward-shift deletion (no tombstones), so insert
// and erase on the allocation fast path are O(1) on average; the rare
// containing-address queries of a capture take a sorted snapshot instead.
// The table does no locking: the runtime holds its mutex around every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace r3::host {

/// What kind of allocation an entry is.
enum class AllocKind : uint32_t { Heap = 1, Mmap = 2 };

/// One live allocation: [Base, Base + Size).
struct Allocation {
  uint64_t Base = 0;
  uint64_t Size = 0;
  AllocKind Kind = AllocKind::Heap;
};

class AllocationTable {
public:
  AllocationTable() = default;
  AllocationTable(const AllocationTable &) = delete;
  AllocationTable &operator=(const AllocationTable &) = delete;
  ~AllocationTable();

  /// Records an allocation; one already at Base is replaced. Returns false
  /// only when the table could not map memory to grow (the entry is lost).
  bool insert(const Allocation &A);
  /// Removes the allocation at Base; returns whether there was one, and it in
  /// Out when Out is not null.
  bool erase(uint64_t Base, Allocation *Out = nullptr);
  /// The allocation starting exactly at Base, or null.
  const Allocation *find(uint64_t Base) const;
  /// The allocation whose bytes contain Address, or null (a linear scan: for
  /// tests and rare queries; captures use snapshot()).
  const Allocation *findContaining(uint64_t Address) const;
  /// Removes [Base, Base + Size) from every Mmap entry it overlaps, keeping
  /// what lies outside it (munmap of part of a mapping); a hole in the middle
  /// splits the entry in two.
  void unmapRange(uint64_t Base, uint64_t Size);
  /// Every entry, sorted by base. Allocates through operator new: call it only
  /// where the runtime's own allocations are not tracked.
  std::vector<Allocation> snapshot() const;

  size_t size() const { return Count; }
  size_t capacity() const { return Capacity; }

private:
  struct Slot {
    uint64_t Base; ///< 0: empty
    uint64_t Size;
    AllocKind Kind;
  };
  bool grow();
  size_t home(uint64_t Base) const;
  size_t probe(uint64_t Base) const; ///< the slot holding Base, or an empty one
  void eraseAt(size_t I);

  Slot *Slots = nullptr;
  size_t Capacity = 0; ///< a power of two, or 0 before the first insert
  size_t Count = 0;
};

/// Finds the allocation containing Address in a sorted snapshot.
const Allocation *findIn(const std::vector<Allocation> &Sorted,
                         uint64_t Address);

} // namespace r3::host
