// Edit distance, suggestions and number parsing used by the CLI's messages.
#include "Catch.h"

#include "support/StringUtil.h"

using namespace r3;

TEST_CASE("edit distance counts insertions, deletions and substitutions",
          "[support]") {
  CHECK(editDistance("replay", "replay") == 0);
  CHECK(editDistance("reply", "replay") == 1);
  CHECK(editDistance("", "abc") == 3);
  CHECK(editDistance("kitten", "sitting") == 3);
}

TEST_CASE("closest match suggests near typos only", "[support]") {
  std::vector<std::string> Commands{"record", "replay", "report", "inspect"};
  CHECK(closestMatch("reply", Commands) ==
        std::optional<std::string>("replay"));
  CHECK(closestMatch("inspct", Commands) ==
        std::optional<std::string>("inspect"));
  CHECK_FALSE(closestMatch("frobnicate", Commands).has_value());
}

TEST_CASE("byte sizes format with binary units", "[support]") {
  CHECK(formatBytes(17) == "17 B");
  CHECK(formatBytes(1536) == "1.5 KiB");
  CHECK(formatBytes(256ull << 20) == "256.0 MiB");
}

TEST_CASE("unsigned parsing rejects partial and negative input", "[support]") {
  CHECK(parseUnsigned("42") == std::optional<uint64_t>(42));
  CHECK_FALSE(parseUnsigned("42x").has_value());
  CHECK_FALSE(parseUnsigned("-1").has_value());
  CHECK_FALSE(parseUnsigned("").has_value());
}

TEST_CASE("sizes with binary units", "[support]") {
  CHECK(r3::parseSize("1048576") == 1048576u);
  CHECK(r3::parseSize("64k") == 65536u);
  CHECK(r3::parseSize("512M") == 512ull << 20);
  CHECK(r3::parseSize("4G") == 4ull << 30);
  CHECK_FALSE(r3::parseSize(""));
  CHECK_FALSE(r3::parseSize("G"));
  CHECK_FALSE(r3::parseSize("0"));
  CHECK_FALSE(r3::parseSize("4T"));
  CHECK_FALSE(r3::parseSize("-1M"));
  CHECK_FALSE(r3::parseSize("99999999999G"));
}
