// The r3 record ↔ recorded process contract: what the parent encodes, the
// child decodes unchanged; malformed values are errors naming the variable.
#include "Catch.h"

#include "record/RecordEnv.h"

#include <map>

using namespace r3;

namespace {
using EnvMap = std::map<std::string, std::string>;

RawEnvLookup lookupIn(const EnvMap &M) {
  return [&M](const char *Name) -> const char * {
    auto It = M.find(Name);
    return It == M.end() ? nullptr : It->second.c_str();
  };
}

EnvMap asMap(const RecordEnv &E) {
  EnvMap M;
  for (auto &[Name, Value] : encodeRecordEnv(E))
    M[Name] = Value;
  return M;
}
} // namespace

TEST_CASE("record env round-trips every field", "[recordenv]") {
  RecordEnv E;
  E.StreamFd = 7;
  E.Mode = RecordMode::List;
  E.Patterns = {"^stencil$", "a:b", "", "x|y"}; // colons and empties survive
  E.Range.First = 3;
  E.Range.Last = 9;
  E.Range.MaxLaunches = std::nullopt;
  E.MaxSnapshotBytes = 12345;
  E.RingFd = 11;
  E.RingSlots = 8;
  E.RingSlotBytes = 4194304;
  E.AllMemory = true;
  EnvMap M = asMap(E);
  CHECK(M.at(recordenv::Memory) == "all");
  CHECK(M.at(recordenv::Ring) == "11:8:4194304");
  CHECK(M.at(recordenv::Launches) == "3:9:-");
  auto D = decodeRecordEnv(lookupIn(M));
  REQUIRE(D);
  REQUIRE(D->has_value());
  const RecordEnv &G = **D;
  CHECK(G.StreamFd == 7);
  CHECK(G.Mode == RecordMode::List);
  CHECK(G.Patterns == E.Patterns);
  CHECK(G.Range.First == 3);
  CHECK(G.Range.Last == std::optional<uint64_t>(9));
  CHECK_FALSE(G.Range.MaxLaunches);
  CHECK(G.MaxSnapshotBytes == 12345);
  CHECK(G.RingFd == 11);
  CHECK(G.RingSlots == 8);
  CHECK(G.RingSlotBytes == 4194304);
  CHECK(G.AllMemory);
}

TEST_CASE("record env is absent outside r3 record", "[recordenv]") {
  EnvMap M;
  auto D = decodeRecordEnv(lookupIn(M));
  REQUIRE(D);
  CHECK_FALSE(D->has_value());
}

TEST_CASE("record env defaults: record mode, first launch, 4 GiB cap",
          "[recordenv]") {
  EnvMap M = {{recordenv::Fd, "5"}};
  auto D = decodeRecordEnv(lookupIn(M));
  REQUIRE(D);
  REQUIRE(D->has_value());
  CHECK((*D)->Mode == RecordMode::Record);
  CHECK((*D)->Patterns.empty());
  CHECK((*D)->Range.MaxLaunches == std::optional<uint64_t>(1));
  CHECK((*D)->MaxSnapshotBytes == DefaultMaxSnapshotBytes);
  CHECK((*D)->RingFd == -1); // no ring: bytes go through the stream
  CHECK_FALSE((*D)->AllMemory); // what the launch's pointers reach
  CHECK(asMap(RecordEnv()).at(recordenv::Memory) == "reachable");
  CHECK_FALSE(asMap(RecordEnv()).count(recordenv::Ring));
}

TEST_CASE("malformed record env values name the variable", "[recordenv]") {
  auto errorFor = [](EnvMap M) {
    M.emplace(recordenv::Fd, "5");
    auto D = decodeRecordEnv(lookupIn(M));
    REQUIRE_FALSE(D);
    return D.error().message();
  };
  CHECK(errorFor({{recordenv::Fd, "five"}}).find("R3_RECORD_FD='five'") !=
        std::string::npos);
  CHECK(errorFor({{recordenv::Mode, "replay"}}) ==
        "environment variable R3_RECORD_MODE='replay': expected 'record' or "
        "'list' (set by r3 record; do not set it by hand)");
  CHECK(errorFor({{recordenv::Kernels, "9:abc"}}).find("R3_RECORD_KERNELS") !=
        std::string::npos);
  CHECK(errorFor({{recordenv::Launches, "1:2"}}).find("FIRST:LAST:MAX") !=
        std::string::npos);
  CHECK(errorFor({{recordenv::MaxBytes, "-1"}}).find("R3_RECORD_MAX_BYTES") !=
        std::string::npos);
  CHECK(errorFor({{recordenv::Ring, "3:8"}}) ==
        "environment variable R3_RECORD_RING='3:8': expected "
        "FD:SLOTS:SLOTBYTES (set by r3 record; do not set it by hand)");
  CHECK(errorFor({{recordenv::Ring, "3:x:4096"}}).find("R3_RECORD_RING") !=
        std::string::npos);
  CHECK(errorFor({{recordenv::Memory, "some"}}) ==
        "environment variable R3_RECORD_MEMORY='some': expected 'reachable' "
        "or 'all' (set by r3 record; do not set it by hand)");
}
