// What a launch can reach (Reachable.h): a worklist over allocations, each
// scanned once for words that point into another.
#include "record/Reachable.h"

#include <algorithm>
#include <cstring>

namespace r3 {

namespace {
/// The allocations by base, and a lookup of the one holding an address.
class Index {
public:
  explicit Index(const std::vector<Extent> &A) : All(A) {
    for (size_t I = 0; I < A.size(); ++I)
      if (A[I].Size)
        ByBase.push_back(I);
    std::sort(ByBase.begin(), ByBase.end(),
              [&](size_t X, size_t Y) { return A[X].Base < A[Y].Base; });
    if (!ByBase.empty()) {
      Low = A[ByBase.front()].Base;
      for (size_t I : ByBase)
        High = std::max(High, A[I].Base + A[I].Size);
    }
  }
  /// The allocation holding address V, or -1.
  long holding(uint64_t V) const {
    if (V < Low || V >= High) // most data words, at one comparison
      return -1;
    auto It =
        std::upper_bound(ByBase.begin(), ByBase.end(), V,
                         [&](uint64_t X, size_t I) { return X < All[I].Base; });
    if (It == ByBase.begin())
      return -1;
    size_t I = *(It - 1);
    return V < All[I].Base + All[I].Size ? static_cast<long>(I) : -1;
  }

  /// The allocation that ends just before address V, or -1.
  long endingAt(uint64_t V) const {
    long I = holding(V - 1);
    return I >= 0 && All[I].Base + All[I].Size == V ? I : -1;
  }

private:
  const std::vector<Extent> &All;
  std::vector<size_t> ByBase;
  uint64_t Low = 0, High = 0;
};

/// Every word of Bytes at a multiple of Step: the allocations it reaches
/// that are not reached yet go onto Todo. With Ends, a word just past an
/// allocation's end reaches it too (an end pointer, as a parameter may be).
void scan(std::span<const uint8_t> Bytes, size_t Step, bool Ends,
          const Index &Ix, std::vector<bool> &Reached,
          std::vector<size_t> &Todo) {
  for (size_t At = 0; At + 8 <= Bytes.size(); At += Step) {
    uint64_t V;
    std::memcpy(&V, Bytes.data() + At, 8);
    long I = Ix.holding(V);
    if (I < 0 && Ends && V)
      I = Ix.endingAt(V);
    if (I >= 0 && !Reached[I]) {
      Reached[I] = true;
      Todo.push_back(static_cast<size_t>(I));
    }
  }
}

/// Reads [E.Base, E.Base + E.Size) a piece at a time and scans it.
Error scanMemory(const Extent &E, const ReadMemory &Read, uint64_t ChunkBytes,
                 std::vector<uint8_t> &Buffer, const Index &Ix,
                 std::vector<bool> &Reached, std::vector<size_t> &Todo) {
  ChunkBytes = std::max<uint64_t>(8, ChunkBytes & ~uint64_t(7));
  for (uint64_t Off = 0; Off < E.Size; Off += ChunkBytes) {
    uint64_t N = std::min(ChunkBytes, E.Size - Off);
    Buffer.resize(N);
    R3_TRY(Read(E.Base + Off, Buffer));
    scan(Buffer, 8, false, Ix, Reached, Todo);
  }
  return Error::success();
}
} // namespace

Expected<std::vector<bool>>
reachableAllocations(const std::vector<Extent> &Allocations,
                     const std::vector<std::span<const uint8_t>> &Roots,
                     const std::vector<Extent> &RootMemory,
                     const ReadMemory &Read, uint64_t ChunkBytes) {
  Index Ix(Allocations);
  std::vector<bool> Reached(Allocations.size(), false);
  std::vector<size_t> Todo;
  for (std::span<const uint8_t> R : Roots)
    scan(R, 4, true, Ix, Reached, Todo);
  std::vector<uint8_t> Buffer;
  for (const Extent &E : RootMemory)
    R3_TRY(scanMemory(E, Read, ChunkBytes, Buffer, Ix, Reached, Todo));
  while (!Todo.empty()) {
    size_t I = Todo.back();
    Todo.pop_back();
    R3_TRY(scanMemory(Allocations[I], Read, ChunkBytes, Buffer, Ix, Reached,
                      Todo));
  }
  return Reached;
}

} // namespace r3
