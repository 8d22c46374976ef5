// What a launch can reach (record/Reachable.h), over a fake device memory:
// pointers in the parameters, in globals, chains through memory, pointers
// into an allocation's middle, cycles, and data that only looks like
// addresses.
#include "Catch.h"

#include "record/Reachable.h"

#include <cstring>
#include <map>

using namespace r3;

namespace {
/// A device memory of a few allocations, each a host buffer at a made-up
/// address; reads count their bytes.
struct FakeMemory {
  std::map<uint64_t, std::vector<uint8_t>> At;
  uint64_t BytesRead = 0;
  std::vector<Extent> extents() const {
    std::vector<Extent> E;
    for (auto &[Base, Bytes] : At)
      E.push_back({Base, Bytes.size()});
    return E;
  }
  void put(uint64_t Address, uint64_t Value) {
    for (auto &[Base, Bytes] : At)
      if (Address >= Base && Address + 8 <= Base + Bytes.size())
        std::memcpy(Bytes.data() + (Address - Base), &Value, 8);
  }
  ReadMemory reader() {
    return [this](uint64_t Address, std::span<uint8_t> To) -> Error {
      for (auto &[Base, Bytes] : At)
        if (Address >= Base && Address + To.size() <= Base + Bytes.size()) {
          std::memcpy(To.data(), Bytes.data() + (Address - Base), To.size());
          BytesRead += To.size();
          return Error::success();
        }
      return Error::make("no memory at " + std::to_string(Address));
    };
  }
};

std::vector<uint8_t> params(std::initializer_list<uint64_t> Words,
                            size_t Offset = 0) {
  std::vector<uint8_t> P(Offset + 8 * Words.size(), 0);
  size_t At = Offset;
  for (uint64_t W : Words) {
    std::memcpy(P.data() + At, &W, 8);
    At += 8;
  }
  return P;
}

std::vector<bool> reach(FakeMemory &M, const std::vector<uint8_t> &P,
                        std::vector<Extent> Globals = {}) {
  auto R = reachableAllocations(M.extents(), {P}, Globals, M.reader(), 64);
  REQUIRE(R);
  return *R;
}
} // namespace

TEST_CASE("reachable: the parameters' pointers, and nothing else") {
  FakeMemory M;
  M.At[0x7f0000000000] = std::vector<uint8_t>(1024); // in
  M.At[0x7f0000100000] = std::vector<uint8_t>(1024); // out
  M.At[0x7f0000200000] = std::vector<uint8_t>(4096); // another kernel's
  // A pointer into the middle of `out`, an int beside it (4-byte offset).
  auto P = params({0x7f0000000000, 0x7f0000100010}, 4);
  CHECK(reach(M, P) == std::vector<bool>{true, true, false});
  // Only what was reached is read: never the unreached allocation.
  CHECK(M.BytesRead == 2048);
  // A parameter just past an allocation's end (an end pointer) reaches it;
  // in memory such a word does not.
  CHECK(reach(M, params({0x7f0000000000 + 1024})) ==
        std::vector<bool>{true, false, false});
  M.put(0x7f0000000000, 0x7f0000100000 + 1024);
  CHECK(reach(M, params({0x7f0000000000})) ==
        std::vector<bool>{true, false, false});
}

TEST_CASE("reachable: pointers stored in memory, transitively, cycles once") {
  FakeMemory M;
  uint64_t Table = 0x7f0000000000, A = 0x7f0000010000, B = 0x7f0000020000,
           C = 0x7f0000030000, Lone = 0x7f0000040000;
  for (uint64_t X : {Table, A, B, C, Lone})
    M.At[X] = std::vector<uint8_t>(256);
  M.put(Table + 8, A);   // a table of pointers
  M.put(Table + 200, B); // past the first piece of 64 bytes
  M.put(B + 16, C);      // a chain
  M.put(C, Table);       // and a cycle back
  M.put(Lone + 8, A);    // a pointer *from* an unreached allocation
  CHECK(reach(M, params({Table})) ==
        std::vector<bool>{true, true, true, true, false});
  CHECK(M.BytesRead == 4 * 256); // each reached allocation read once
}

TEST_CASE("reachable: globals are roots; data is not an address") {
  FakeMemory M;
  uint64_t G = 0x7f0000000000, Data = 0x7f0000010000, Lut = 0x7f0000020000;
  M.At[G] = std::vector<uint8_t>(64);
  M.At[Data] = std::vector<uint8_t>(256);
  M.At[Lut] = std::vector<uint8_t>(256);
  M.put(G, Lut); // a __device__ pointer to a lookup table
  // Floats and small integers in reached memory reach nothing.
  float F[64];
  for (int I = 0; I < 64; ++I)
    F[I] = 1.5f * I;
  std::memcpy(M.At[Data].data(), F, sizeof F);
  // The global is memory (a root), not an allocation of the list here.
  std::vector<Extent> All = {{Data, 256}, {Lut, 256}};
  auto P = params({Data, 42, 0});
  auto R = reachableAllocations(All, {P}, {{G, 64}}, M.reader(), 64);
  REQUIRE(R);
  CHECK(*R == std::vector<bool>{true, true});
  // Without the global, the table is out of reach.
  auto R2 = reachableAllocations(All, {P}, {}, M.reader(), 64);
  REQUIRE(R2);
  CHECK(*R2 == std::vector<bool>{true, false});
}

TEST_CASE("reachable: a read that fails is an error") {
  FakeMemory M;
  M.At[0x7f0000000000] = std::vector<uint8_t>(64);
  std::vector<Extent> All = {{0x7f0000000000, 64}, {0x7f0000001000, 64}};
  auto P = params({0x7f0000001000}); // reaches memory the reader lacks
  auto R = reachableAllocations(All, {P}, {}, M.reader(), 64);
  REQUIRE_FALSE(R);
  CHECK(R.error().message().find("no memory at") != std::string::npos);
}
