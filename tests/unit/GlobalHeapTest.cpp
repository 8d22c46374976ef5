// The checks of variable-length strings and their global heap collections
// (capture/GlobalHeap.h) on file images built here, laid out as HDF5 lays
// them out: what HDF5 writes passes, every damaged size or reference is an
// error that names the collection's offset.
#include "Catch.h"

#include "capture/GlobalHeap.h"

#include <cstring>
#include <string>
#include <vector>

using namespace r3;

namespace {
void put(std::vector<uint8_t> &B, size_t At, uint64_t V, int Bytes) {
  for (int I = 0; I < Bytes; ++I)
    B[At + I] = static_cast<uint8_t>(V >> (8 * I));
}

/// A file image: strings' elements at ElementsAt, one collection of 4096
/// bytes at HeapAt holding each string as an object (index 1, 2, ...), and
/// the free space after them.
struct Image {
  static constexpr uint64_t ElementsAt = 64, HeapAt = 1024;
  std::vector<uint8_t> Bytes = std::vector<uint8_t>(HeapAt + 4096);
  std::vector<uint64_t> ObjectAt; ///< each object's header

  explicit Image(const std::vector<std::string> &Strings) {
    std::memcpy(&Bytes[HeapAt], "GCOL", 4);
    Bytes[HeapAt + 4] = 1;
    put(Bytes, HeapAt + 8, 4096, 8);
    uint64_t Pos = HeapAt + 16;
    for (size_t I = 0; I < Strings.size(); ++I) {
      const std::string &S = Strings[I];
      ObjectAt.push_back(Pos);
      put(Bytes, Pos, I + 1, 2);
      put(Bytes, Pos + 2, 1, 2);
      put(Bytes, Pos + 8, S.size(), 8);
      std::memcpy(&Bytes[Pos + 16], S.data(), S.size());
      Pos += 16 + (S.size() + 7) / 8 * 8;
      size_t E = ElementsAt + 16 * I;
      put(Bytes, E, S.size(), 4);
      put(Bytes, E + 4, HeapAt, 8);
      put(Bytes, E + 12, I + 1, 4);
    }
    if (HeapAt + 4096 - Pos >= 16) { // the free space, with its header
      put(Bytes, Pos, 0, 2);
      put(Bytes, Pos + 8, HeapAt + 4096 - Pos, 8);
    }
  }

  std::string check(uint64_t Count) const {
    ReadAt Read = [&](uint64_t At, std::span<uint8_t> Out) -> Error {
      if (At > Bytes.size() || Out.size() > Bytes.size() - At)
        return makeError("cannot read at ", At);
      std::memcpy(Out.data(), &Bytes[At], Out.size());
      return Error::success();
    };
    Error E = checkVlenStrings(ElementsAt, Count, Bytes.size(), Read);
    return E ? E.message() : "";
  }
};
} // namespace

TEST_CASE("global heap: strings as HDF5 writes them pass", "[capture]") {
  Image I({"./app", "", "--size=512", "x"});
  CHECK(I.check(4) == "");
  // A null string (collection address 0) refers to no collection.
  put(I.Bytes, Image::ElementsAt + 16 * 1 + 4, 0, 8);
  CHECK(I.check(4) == "");
  // A collection whose last bytes are too few for an object header: they
  // are free space without one.
  Image Full({std::string(4096 - 16 - 16 - 8, 'a')});
  CHECK(Full.check(1) == "");
}

TEST_CASE("global heap: damaged sizes and references are errors", "[capture]") {
  const std::string At = "damaged global heap at offset 1024: ";
  SECTION("an object's size past the collection's end") {
    Image I({"./app", "--size=512"});
    put(I.Bytes, I.ObjectAt[0] + 8, 0x7fffffff, 8);
    CHECK(I.check(2) == At + "object 1 at offset 1040 claims 2147483647 "
                             "bytes, more than the 4080 bytes left in the "
                             "collection");
  }
  SECTION("the free space's size past the collection's end") {
    Image I({"./app"});
    put(I.Bytes, I.ObjectAt[0] + 24 + 8, 5000, 8);
    CHECK(I.check(1) == At + "its free space at offset 1064 claims 5000 "
                             "bytes, more than the 4056 bytes left in the "
                             "collection");
  }
  SECTION("a free space smaller than its header (HDF5 would loop)") {
    Image I({"./app"});
    put(I.Bytes, I.ObjectAt[0] + 24 + 8, 0, 8);
    CHECK(I.check(1) == At + "its free space at offset 1064 claims 0 bytes, "
                             "less than its own header");
  }
  SECTION("the collection larger than the file") {
    Image I({"./app"});
    put(I.Bytes, Image::HeapAt + 8, 1ull << 31, 8);
    CHECK(I.check(1) == At + "a collection of 2147483648 bytes does not fit "
                             "a file of 5120 bytes");
  }
  SECTION("no collection where an element points") {
    Image I({"./app"});
    I.Bytes[Image::HeapAt] = 'X';
    CHECK(I.check(1) == At + "no collection there (signature GCOL)");
    I.Bytes[Image::HeapAt] = 'G';
    I.Bytes[Image::HeapAt + 4] = 2;
    CHECK(I.check(1) == At + "collection version 2, expected 1");
  }
  SECTION("an element's object not in the collection, or of another size") {
    Image I({"./app", "--size=512"});
    put(I.Bytes, Image::ElementsAt + 16 + 12, 7, 4);
    CHECK(I.check(2) == At + "string 1 refers to object 7, which the "
                             "collection does not hold");
    put(I.Bytes, Image::ElementsAt + 16 + 12, 0, 4); // the free space
    CHECK(I.check(2) == At + "string 1 refers to object 0, which the "
                             "collection does not hold");
    put(I.Bytes, Image::ElementsAt + 16 + 12, 2, 4);
    put(I.Bytes, Image::ElementsAt + 16, 1000, 4);
    CHECK(I.check(2) == At + "object 2 holds 10 bytes, string 1 says 1000");
  }
  SECTION("a collection address past the end of the file") {
    Image I({"./app"});
    put(I.Bytes, Image::ElementsAt + 4, ~0ull, 8);
    CHECK(I.check(1) == "damaged global heap at offset 18446744073709551615: "
                        "past the end of the file (5120 bytes)");
  }
  SECTION("elements past the end of the file") {
    Image I({"./app"});
    CHECK(I.check(1000) == "1000 strings at offset 64 do not fit a file of "
                           "5120 bytes");
  }
}
