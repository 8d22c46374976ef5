// Edit distance, suggestions and number parsing used by the CLI's messages.
#include "Catch.h"

#include "support/StringUtil.h"

#include <limits>

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

TEST_CASE("integers out of range are errors that say so", "[support]") {
  CHECK(*r3::parseInteger("-12", -100, 100) == -12);
  CHECK(*r3::parseInteger("9223372036854775807", 0, INT64_MAX) == INT64_MAX);
  auto Big = r3::parseInteger(std::string(300, '1'), 0, 1000);
  REQUIRE_FALSE(Big);
  CHECK(Big.error().message() == "expected an integer from 0 to 1000, got "
                                 "'111111111111111111111111...' (300 "
                                 "characters)");
  CHECK(r3::parseInteger("101", 0, 100).error().message() ==
        "expected an integer from 0 to 100, got '101'");
  CHECK(r3::parseInteger("1.5", 0, 100).error().message() ==
        "expected an integer, got '1.5'");
  CHECK_FALSE(r3::parseInteger("", 0, 100));
  CHECK_FALSE(r3::parseInteger("-", 0, 100));
  CHECK_FALSE(r3::parseInteger(" 4", 0, 100));
}

TEST_CASE("doubles out of range are errors, never exceptions", "[support]") {
  CHECK(*r3::parseDouble("1.5") == 1.5);
  CHECK(*r3::parseDouble("-2e-3") == -0.002);
  CHECK(*r3::parseDouble("1e+2") == 100);
  CHECK(*r3::parseDouble("1e-400") == 0); // underflow reads as zero, as in C
  auto Huge = r3::parseDouble("1" + std::string(400, '0'));
  REQUIRE_FALSE(Huge);
  CHECK(Huge.error().message() ==
        "number out of range, got '100000000000000000000000...' (401 "
        "characters) (a double holds magnitudes up to 1.8e308)");
  CHECK_FALSE(r3::parseDouble("1e999"));
  CHECK_FALSE(r3::parseDouble("-1e999"));
  for (const char *Bad : {"", "inf", "nan", "0x10", "+1", " 1", "1 ", "1e",
                          "1..2", "abc"})
    CHECK(r3::parseDouble(Bad).error().message().rfind("expected a number",
                                                       0) == 0);
}

TEST_CASE("shares and factors format as reports show them", "[support]") {
  CHECK(r3::formatShare(0.1234) == "12.3%");
  CHECK(r3::formatShare(1) == "100.0%");
  CHECK(r3::formatFactor(1.5678) == "1.57x");
  CHECK(r3::formatFactor(1.5678, 3) == "1.568x");
  CHECK(r3::formatFactor(std::numeric_limits<double>::infinity()) ==
        "unbounded");
}
