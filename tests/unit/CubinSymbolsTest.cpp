// The cubin symbol reader on a cubin nvcc compiled at build time, and on
// damaged images.
#include "Catch.h"

#include "cubin/CubinSymbols.h"

#include <algorithm>
#include <fstream>
#include <iterator>

using namespace r3;

namespace {
std::vector<uint8_t> fixtureCubin() {
  std::ifstream In(R3_TEST_CUBIN, std::ios::binary);
  return {std::istreambuf_iterator<char>(In), std::istreambuf_iterator<char>()};
}

const CubinGlobal *find(const CubinSymbols &S, const std::string &Name) {
  auto It = std::find_if(S.Globals.begin(), S.Globals.end(),
                         [&](const CubinGlobal &G) { return G.Name == Name; });
  return It == S.Globals.end() ? nullptr : &*It;
}
} // namespace

TEST_CASE("cubin globals and kernels are read from the ELF symbol table",
          "[cubin]") {
  std::vector<uint8_t> Image = fixtureCubin();
  REQUIRE(Image.size() > 64);
  auto S = readCubinSymbols(Image);
  REQUIRE(S);
  REQUIRE(S->Globals.size() == 4);
  const CubinGlobal *Table = find(*S, "table");
  REQUIRE(Table);
  CHECK(Table->Size == 37 * sizeof(float));
  CHECK(Table->Space == GlobalSpace::Device);
  CHECK_FALSE(Table->Initialized);
  const CubinGlobal *Coeffs = find(*S, "coeffs");
  REQUIRE(Coeffs);
  CHECK(Coeffs->Size == 5 * sizeof(double));
  CHECK(Coeffs->Space == GlobalSpace::Constant);
  const CubinGlobal *Init = find(*S, "initialized");
  REQUIRE(Init);
  CHECK(Init->Initialized);
  CHECK(find(*S, "counter")->Size == 4);
  std::vector<std::string> Kernels = S->Kernels;
  std::sort(Kernels.begin(), Kernels.end());
  CHECK(Kernels == std::vector<std::string>{"_Z5scalePfi", "plain"});
}

TEST_CASE("damaged cubins are errors, not crashes", "[cubin]") {
  std::vector<uint8_t> Image = fixtureCubin();
  REQUIRE(Image.size() > 64);
  auto NotElf = readCubinSymbols(std::vector<uint8_t>(100, 0));
  REQUIRE_FALSE(NotElf);
  CHECK(NotElf.error().message() == "cubin: not an ELF image");
  auto Empty = readCubinSymbols({});
  REQUIRE_FALSE(Empty);
  // Every truncation of the image either parses or fails cleanly.
  for (size_t Len = 0; Len < Image.size(); Len += 7) {
    auto R = readCubinSymbols(std::span(Image.data(), Len));
    if (!R)
      CHECK(R.error().message().rfind("cubin: ", 0) == 0);
  }
  // Section headers pointing past the end.
  std::vector<uint8_t> Bad = Image;
  Bad[0x28] = 0xFF; // e_shoff, low byte ...
  Bad[0x2F] = 0x7F; // ... and high byte
  auto R = readCubinSymbols(Bad);
  REQUIRE_FALSE(R);
  CHECK(R.error().message().find("lies outside the") != std::string::npos);
}
