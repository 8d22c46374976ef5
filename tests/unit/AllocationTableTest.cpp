// The host runtime's allocation table: insert, exact and containing lookups,
// erase with backward shifts, growth past many rehashes, realloc-style moves
// and partial munmap — checked against a std::map model.
#include "Catch.h"

#include "record/host/AllocationTable.h"

#include <map>
#include <random>

using namespace r3::host;

namespace {
/// Checks that T holds exactly the entries of Model.
void checkSame(const AllocationTable &T,
               const std::map<uint64_t, uint64_t> &Model) {
  REQUIRE(T.size() == Model.size());
  for (auto [Base, Size] : Model) {
    const Allocation *A = T.find(Base);
    REQUIRE(A);
    CHECK(A->Size == Size);
  }
  auto Snap = T.snapshot();
  REQUIRE(Snap.size() == Model.size());
  auto It = Model.begin();
  for (const Allocation &A : Snap) {
    CHECK(A.Base == It->first);
    ++It;
  }
}
} // namespace

TEST_CASE("allocation table finds what was inserted and forgets what was "
          "erased",
          "[alloc]") {
  AllocationTable T;
  CHECK(T.find(0x1000) == nullptr);
  CHECK(T.findContaining(0x1000) == nullptr);
  REQUIRE(T.insert({0x1000, 64, AllocKind::Heap}));
  REQUIRE(T.insert({0x2000, 4096, AllocKind::Mmap}));
  CHECK(T.size() == 2);
  REQUIRE(T.find(0x1000));
  CHECK(T.find(0x1000)->Size == 64);
  CHECK(T.find(0x1008) == nullptr); // exact lookups need the base
  REQUIRE(T.findContaining(0x1008));
  CHECK(T.findContaining(0x1008)->Base == 0x1000);
  CHECK(T.findContaining(0x103f)->Base == 0x1000);
  CHECK(T.findContaining(0x1040) == nullptr); // one past the end
  CHECK(T.findContaining(0x2fff)->Kind == AllocKind::Mmap);

  Allocation Out;
  REQUIRE(T.erase(0x1000, &Out));
  CHECK(Out.Size == 64);
  CHECK_FALSE(T.erase(0x1000));
  CHECK(T.find(0x1000) == nullptr);
  CHECK(T.size() == 1);
}

TEST_CASE("allocation table replaces an entry at the same base", "[alloc]") {
  AllocationTable T;
  REQUIRE(T.insert({0x5000, 16, AllocKind::Heap}));
  REQUIRE(T.insert({0x5000, 32, AllocKind::Heap}));
  CHECK(T.size() == 1);
  CHECK(T.find(0x5000)->Size == 32);
}

TEST_CASE("allocation table grows and survives random inserts and erases",
          "[alloc]") {
  AllocationTable T;
  std::map<uint64_t, uint64_t> Model;
  std::mt19937_64 Rng(42);
  for (int Step = 0; Step < 60000; ++Step) {
    // Bases 16-aligned in a small space so that erases often hit.
    uint64_t Base = 0x10000 + (Rng() % 40000) * 16;
    if (Rng() % 3 == 0) {
      bool Had = Model.erase(Base) != 0;
      REQUIRE(T.erase(Base) == Had);
    } else {
      uint64_t Size = 1 + Rng() % 16;
      REQUIRE(T.insert({Base, Size, AllocKind::Heap}));
      Model[Base] = Size;
    }
  }
  CHECK(T.capacity() > 4096); // it grew past its first array
  checkSame(T, Model);
  // Empty it completely: backward shifts must keep every run reachable.
  for (auto [Base, Size] : Model)
    REQUIRE(T.erase(Base));
  CHECK(T.size() == 0);
  CHECK(T.snapshot().empty());
}

TEST_CASE("allocation table follows realloc-style moves", "[alloc]") {
  AllocationTable T;
  REQUIRE(T.insert({0x1000, 100, AllocKind::Heap}));
  // realloc(p, 300) moved the block: the old base goes, the new one comes.
  Allocation Old;
  REQUIRE(T.erase(0x1000, &Old));
  REQUIRE(T.insert({0x9000, 300, Old.Kind}));
  CHECK(T.findContaining(0x1010) == nullptr);
  REQUIRE(T.findContaining(0x9000 + 299));
  // realloc in place: same base, new size.
  REQUIRE(T.insert({0x9000, 50, AllocKind::Heap}));
  CHECK(T.findContaining(0x9000 + 60) == nullptr);
  CHECK(T.size() == 1);
}

TEST_CASE("allocation table trims and splits mappings on partial munmap",
          "[alloc]") {
  AllocationTable T;
  REQUIRE(T.insert({0x100000, 0x10000, AllocKind::Mmap}));
  REQUIRE(T.insert({0x200000, 0x1000, AllocKind::Heap}));
  T.unmapRange(0x104000, 0x2000); // a hole in the middle
  REQUIRE(T.find(0x100000));
  CHECK(T.find(0x100000)->Size == 0x4000);
  REQUIRE(T.find(0x106000));
  CHECK(T.find(0x106000)->Size == 0xa000);
  CHECK(T.findContaining(0x105000) == nullptr);
  T.unmapRange(0x0, 0x105000); // the head, and nothing of the heap block
  CHECK(T.find(0x100000) == nullptr);
  CHECK(T.find(0x200000));
  T.unmapRange(0x106000, 0xa000);
  CHECK(T.size() == 1);
}

TEST_CASE("sorted snapshot lookups find the containing allocation", "[alloc]") {
  std::vector<Allocation> S = {{0x1000, 16, AllocKind::Heap},
                               {0x2000, 0, AllocKind::Heap},
                               {0x3000, 0x1000, AllocKind::Mmap}};
  CHECK(findIn(S, 0xfff) == nullptr);
  CHECK(findIn(S, 0x100f)->Base == 0x1000);
  CHECK(findIn(S, 0x1010) == nullptr);
  CHECK(findIn(S, 0x2000)->Base == 0x2000); // malloc(0) owns its address
  CHECK(findIn(S, 0x2001) == nullptr);
  CHECK(findIn(S, 0x3fff)->Base == 0x3000);
  CHECK(findIn(S, 0x4000) == nullptr);
}
