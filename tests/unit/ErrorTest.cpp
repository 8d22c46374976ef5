// The error model: success, failure, context, Expected.
#include "Catch.h"

#include "support/Error.h"

using namespace r3;

namespace {
Expected<int> half(int X) {
  if (X % 2)
    return makeError("expected an even number, got ", X);
  return X / 2;
}
Error chain(int X) {
  int H = 0;
  R3_TRY(moveInto(half(X), H));
  return Error::success();
}
} // namespace

TEST_CASE("errors carry messages and context", "[support]") {
  CHECK_FALSE(Error::success());
  Error E =
      Error::make("missing dataset").context("/launches/3").context("cap.h5");
  REQUIRE(E);
  CHECK(E.message() == "cap.h5: /launches/3: missing dataset");
}

TEST_CASE("expected holds a value or an error", "[support]") {
  auto Good = half(8);
  REQUIRE(Good);
  CHECK(*Good == 4);
  auto Bad = half(3);
  REQUIRE_FALSE(Bad);
  CHECK(Bad.error().message() == "expected an even number, got 3");
  Error Chained = chain(5);
  REQUIRE(Chained);
  CHECK(Chained.message() == "expected an even number, got 5");
  CHECK_FALSE(chain(6));
}
