// SHA-256 against the FIPS 180-4 examples, across block boundaries and in
// pieces, so that identities and cache keys keep their values.
#include "Catch.h"

#include "support/Sha256.h"

#include <string>

using namespace r3;

TEST_CASE("sha256 of the standard test vectors", "[sha256]") {
  CHECK(sha256Hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256Hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 in pieces equals sha256 at once", "[sha256]") {
  std::string Text;
  for (int I = 0; I < 300; ++I)
    Text += static_cast<char>(I * 7);
  for (size_t Cut : {0, 1, 55, 56, 63, 64, 65, 128, 299}) {
    Sha256 H;
    H.update(std::string_view(Text).substr(0, Cut));
    H.update(std::string_view(Text).substr(Cut));
    CHECK(H.hexDigest() == sha256Hex(Text));
  }
}
