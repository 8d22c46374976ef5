// Tuning caches (Kernel Tuner's format) and the simulation mode: the space a
// cache becomes, lookups, failures as points without a time, every error a
// bad file gets, and strategies run against caches (grid search reaches the
// optimum exactly where lexicographic order puts it; random search finds it
// within as many evaluations as the cache has entries).
#include "Catch.h"

#include "search/Simulate.h"
#include "search/TuningCache.h"

#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

using namespace r3::search;

namespace {

/// A fresh directory, removed with everything in it at the end of a test.
class TempDir {
public:
  TempDir() {
    std::string Pattern =
        (std::filesystem::temp_directory_path() / "r3-cache-XXXXXX").string();
    REQUIRE(::mkdtemp(Pattern.data()));
    Dir = Pattern;
  }
  ~TempDir() { std::filesystem::remove_all(Dir); }
  std::string path(const std::string &Name) const { return Dir + "/" + Name; }

private:
  std::string Dir;
};

std::string writePlain(const std::string &Path, const std::string &Text) {
  std::ofstream(Path, std::ios::binary) << Text;
  return Path;
}

std::string writeGzip(const std::string &Path, const std::string &Text) {
  gzFile F = gzopen(Path.c_str(), "wb");
  REQUIRE(F);
  REQUIRE(gzwrite(F, Text.data(), static_cast<unsigned>(Text.size())) ==
          static_cast<int>(Text.size()));
  REQUIRE(gzclose(F) == Z_OK);
  return Path;
}

/// Three parameters: a numeric one given out of order, strings in an order
/// that is not alphabetical, and one more number. 9 of the 12 combinations
/// are in the cache, two of them failures; entries carry the individual
/// times and other fields a real cache has.
const char *const TinyCache = R"({
  "device_name": "Test GPU", "kernel_name": "tiny_kernel",
  "problem_size": [1024, 1024], "objective": "time",
  "tune_params_keys": ["block", "variant", "unroll"],
  "tune_params": {"block": [64, 16, 32], "variant": ["b", "a"],
                  "unroll": [1, 2]},
  "cache": {
    "16,b,1": {"block": 16, "variant": "b", "unroll": 1, "time": 3.0,
               "times": [3.1, 2.9], "compile_time": 10.5},
    "16,b,2": {"block": 16, "variant": "b", "unroll": 2, "time": 2.5,
               "times": [2.5, 2.5], "extra": {"nested": [1, 2]}},
    "16,a,1": {"block": 16, "variant": "a", "unroll": 1,
               "time": "CompileFailedConfig"},
    "32,b,1": {"block": 32, "variant": "b", "unroll": 1, "time": 1.5},
    "32,b,2": {"block": 32, "variant": "b", "unroll": 2, "time": 1.2},
    "32,a,2": {"block": 32, "variant": "a", "unroll": 2, "time": 1.25},
    "64,b,1": {"block": 64, "variant": "b", "unroll": 1, "time": 2.0},
    "64,a,1": {"block": 64, "variant": "a", "unroll": 1,
               "time": "RuntimeFailedConfig"},
    "64,a,2": {"block": 64, "variant": "a", "unroll": 2, "time": 1.8}
  }
})";

/// The header of a cache over the tiny parameters, before its "cache".
const char *const TinyHead =
    R"({"tune_params_keys": ["block", "variant", "unroll"],
  "tune_params": {"block": [64, 16, 32], "variant": ["b", "a"],
                  "unroll": [1, 2]}, )";

/// The point of the tiny cache with these values (block given by value).
Point tinyPoint(unsigned Block, const std::string &Variant, unsigned Unroll) {
  uint32_t B = Block == 16 ? 0 : Block == 32 ? 1 : 2;
  return Point{{{B}, {Variant == "b" ? 0u : 1u}, {Unroll - 1}}};
}

TuningCache load(const std::string &Path) {
  auto C = loadTuningCache(Path);
  if (!C)
    FAIL(C.error().message());
  return std::move(*C);
}

std::string loadError(const std::string &Path) {
  auto C = loadTuningCache(Path);
  REQUIRE_FALSE(C);
  return C.error().message();
}

/// A 5 x 4 x 3 space with a unique optimum at (3, 1, 0); combinations with
/// (a + b + c) % 7 == 3 are absent and those with a * b % 5 == 4 fail.
std::string generatedCache() {
  std::string Entries;
  for (int A = 0; A < 5; ++A)
    for (int B = 0; B < 4; ++B)
      for (int C = 0; C < 3; ++C) {
        if ((A + B + C) % 7 == 3)
          continue;
        double T = 1 + (A - 3) * (A - 3) + 0.5 * (B - 1) * (B - 1) + 0.1 * C;
        std::string Time =
            A * B % 5 == 4 ? "\"RuntimeFailedConfig\"" : std::to_string(T);
        std::string Key = std::to_string(A) + "," + std::to_string(B) + "," +
                          std::to_string(C);
        Entries += std::string(Entries.empty() ? "" : ",") + "\"" + Key +
                   "\": {\"a\": " + std::to_string(A) +
                   ", \"b\": " + std::to_string(B) +
                   ", \"c\": " + std::to_string(C) + ", \"time\": " + Time +
                   "}";
      }
  return R"({"tune_params_keys": ["a", "b", "c"], "tune_params": {"a": [0, 1, 2, 3, 4], "b": [0, 1, 2, 3], "c": [0, 1, 2]}, "cache": {)" +
         Entries + "}}";
}

} // namespace

TEST_CASE("a tuning cache becomes a constrained space", "[cache]") {
  TempDir D;
  TuningCache C = load(writePlain(D.path("tiny.json"), TinyCache));
  CHECK(C.Path == D.path("tiny.json"));
  CHECK(C.DeviceName == "Test GPU");
  CHECK(C.KernelName == "tiny_kernel");
  const Space &S = C.SearchSpace;
  REQUIRE(S.Params.size() == 3);
  CHECK(S.Params[0].Name == "block");
  CHECK(S.Params[0].Kind == ParamKind::Ordinal);
  CHECK(S.Params[0].Values == std::vector<std::string>{"16", "32", "64"});
  CHECK(S.Params[0].Numbers == std::vector<double>{16, 32, 64});
  CHECK(S.Params[1].Name == "variant");
  CHECK(S.Params[1].Kind == ParamKind::Ordinal);
  CHECK(S.Params[1].Values == std::vector<std::string>{"b", "a"});
  CHECK(S.Params[1].Numbers.empty());
  CHECK(S.Params[2].Values == std::vector<std::string>{"1", "2"});
  CHECK(S.Allowed.size() == 9);
  CHECK(S.size() == 9);
  CHECK(C.Entries.size() == 9);
  CHECK(C.combinations() == 12);
  CHECK(C.failures() == 2);
  std::set<std::string> Described;
  for (const Point &P : S.Allowed)
    Described.insert(S.describe(P));
  CHECK(Described ==
        std::set<std::string>{
            "block=16,variant=b,unroll=1", "block=16,variant=b,unroll=2",
            "block=16,variant=a,unroll=1", "block=32,variant=b,unroll=1",
            "block=32,variant=b,unroll=2", "block=32,variant=a,unroll=2",
            "block=64,variant=b,unroll=1", "block=64,variant=a,unroll=1",
            "block=64,variant=a,unroll=2"});
  CHECK(C.OptimumMs == 1.2);
  CHECK(S.describe(S.Allowed[C.OptimumIndex]) == "block=32,variant=b,unroll=2");
}

TEST_CASE("tuning cache lookups give times and failures", "[cache]") {
  TempDir D;
  TuningCache C = load(writePlain(D.path("tiny.json"), TinyCache));
  const CacheEntry *E = C.lookup(tinyPoint(32, "a", 2));
  REQUIRE(E);
  REQUIRE(E->TimeMs);
  CHECK(*E->TimeMs == 1.25);
  CHECK(E->Failure.empty());
  E = C.lookup(tinyPoint(16, "a", 1));
  REQUIRE(E);
  CHECK_FALSE(E->TimeMs);
  CHECK(E->Failure == "CompileFailedConfig");
  E = C.lookup(tinyPoint(64, "a", 1));
  REQUIRE(E);
  CHECK(E->Failure == "RuntimeFailedConfig");
  // Combinations absent from the cache are invalid.
  CHECK_FALSE(C.lookup(tinyPoint(16, "a", 2)));
  CHECK_FALSE(C.lookup(tinyPoint(32, "a", 1)));
  CHECK_FALSE(C.lookup(Point{{{0}, {0}}}));
  // Every allowed point is found, with the entry of its own index.
  for (size_t I = 0; I < C.SearchSpace.Allowed.size(); ++I)
    CHECK(C.lookup(C.SearchSpace.Allowed[I]) == &C.Entries[I]);
}

TEST_CASE("gzip is told from plain JSON by content, not name", "[cache]") {
  TempDir D;
  TuningCache Plain = load(writePlain(D.path("a.json.gz"), TinyCache));
  TuningCache Gz = load(writeGzip(D.path("b.json"), TinyCache));
  TuningCache Named = load(writeGzip(D.path("c.json.gz"), TinyCache));
  for (const TuningCache *C : {&Gz, &Named}) {
    CHECK(C->SearchSpace.Allowed == Plain.SearchSpace.Allowed);
    CHECK(C->SearchSpace.Params[1].Values ==
          Plain.SearchSpace.Params[1].Values);
    CHECK(C->OptimumMs == Plain.OptimumMs);
    CHECK(C->failures() == 2);
    CHECK(C->KernelName == "tiny_kernel");
  }
}

TEST_CASE("unreadable and malformed cache files are errors naming the file",
          "[cache]") {
  TempDir D;
  std::string Missing = D.path("missing.json");
  CHECK(loadError(Missing) == "cannot open tuning cache '" + Missing +
                                  "': No such file or directory");

  std::string Text = writePlain(D.path("text.json"), "hello, world\n");
  CHECK(loadError(Text).rfind(Text + ": not gzip'd or plain JSON (", 0) == 0);
  std::string GzText = writeGzip(D.path("text.gz"), "not json at all");
  CHECK(loadError(GzText).rfind(GzText + ": not gzip'd or plain JSON (", 0) ==
        0);

  // The gzip magic bytes followed by garbage, and a gzip'd cache cut short.
  std::string Bad =
      writePlain(D.path("bad.gz"), std::string("\x1f\x8b\x08\x00junkjunkjunk"));
  CHECK(loadError(Bad).rfind(Bad + ": not a valid gzip file (", 0) == 0);
  std::string Whole = D.path("whole.gz");
  writeGzip(Whole, TinyCache);
  std::ifstream In(Whole, std::ios::binary);
  std::string Bytes((std::istreambuf_iterator<char>(In)), {});
  std::string Cut =
      writePlain(D.path("cut.gz"), Bytes.substr(0, Bytes.size() / 2));
  CHECK(loadError(Cut).rfind(Cut + ": not a valid gzip file (", 0) == 0);

  std::string Array = writePlain(D.path("array.json"), "[1, 2]");
  CHECK(loadError(Array) ==
        Array + ": not a tuning cache (the JSON is not an object)");
}

TEST_CASE("a cache missing a key is an error saying which", "[cache]") {
  TempDir D;
  std::string P = D.path("c.json");
  writePlain(P, R"({"tune_params": {}, "cache": {}})");
  CHECK(loadError(P) ==
        P + ": not a tuning cache: missing key 'tune_params_keys'");
  writePlain(P, R"({"tune_params_keys": ["x"], "cache": {}})");
  CHECK(loadError(P) == P + ": not a tuning cache: missing key 'tune_params'");
  writePlain(P, R"({"tune_params_keys": ["x"], "tune_params": {"x": [1]}})");
  CHECK(loadError(P) == P + ": not a tuning cache: missing key 'cache'");
  writePlain(P, R"({"tune_params_keys": ["x", "y"], "tune_params": {"x": [1]},
                    "cache": {"1": {"x": 1, "time": 1}}})");
  CHECK(loadError(P) == P + ": 'tune_params' has no domain for parameter 'y'");
  writePlain(P, R"({"tune_params_keys": ["x"], "tune_params": {"x": []},
                    "cache": {"1": {"x": 1, "time": 1}}})");
  CHECK(loadError(P) ==
        P + ": 'tune_params' entry 'x' must be a non-empty list of values");
  writePlain(
      P, std::string(TinyHead) +
             R"("cache": {"16,b,1": {"block": 16, "unroll": 1, "time": 1}}})");
  CHECK(loadError(P) ==
        P + ": cache entry '16,b,1': missing parameter 'variant'");
  writePlain(P, std::string(TinyHead) + R"("cache": {"16,b,1": {"block": 16,
                    "variant": "b", "unroll": 1, "times": [1.0]}}})");
  CHECK(loadError(P) == P + ": cache entry '16,b,1': missing 'time'");
  writePlain(P, std::string(TinyHead) + R"("cache": {"16,b,1": {"block": 16,
                    "variant": "b", "unroll": 1, "time": null}}})");
  CHECK(loadError(P) ==
        P + ": cache entry '16,b,1': 'time' must be a number of ms or a "
            "failure such as \"CompileFailedConfig\", got null");
}

TEST_CASE("a cache entry outside its parameter's domain is an error",
          "[cache]") {
  TempDir D;
  std::string P = D.path("c.json");
  writePlain(P, std::string(TinyHead) + R"("cache": {"16,b,3": {"block": 16,
                    "variant": "b", "unroll": 3, "time": 1.0}}})");
  CHECK(loadError(P) == P + ": cache entry '16,b,3': unroll = 3 is not in "
                            "the parameter's domain (1, 2)");
  writePlain(P, std::string(TinyHead) + R"("cache": {"16,c,1": {"block": 16,
                    "variant": "c", "unroll": 1, "time": 1.0}}})");
  CHECK(loadError(P) == P + ": cache entry '16,c,1': variant = c is not in "
                            "the parameter's domain (b, a)");
  // A number where the domain has numbers must be a number, not its text.
  writePlain(P, std::string(TinyHead) + R"("cache": {"x": {"block": "16",
                    "variant": "b", "unroll": 1, "time": 1.0}}})");
  CHECK(loadError(P) == P + ": cache entry 'x': block = 16 is not in the "
                            "parameter's domain (16, 32, 64)");
}

TEST_CASE("two cache entries with the same values are an error", "[cache]") {
  TempDir D;
  std::string P = D.path("c.json");
  writePlain(P, std::string(TinyHead) + R"("cache": {
      "16,b,1": {"block": 16, "variant": "b", "unroll": 1, "time": 1.0},
      "again": {"block": 16.0, "variant": "b", "unroll": 1, "time": 2.0}}})");
  CHECK(loadError(P) == P + ": cache entry 'again': the same configuration "
                            "as an earlier entry");
}

TEST_CASE("an empty cache, or one without a time, is an error", "[cache]") {
  TempDir D;
  std::string P = D.path("c.json");
  writePlain(P, std::string(TinyHead) + R"("cache": {}})");
  CHECK(loadError(P) == P + ": the cache has no entries");
  std::string Gz =
      writeGzip(D.path("c.json.gz"), std::string(TinyHead) + R"("cache": {}})");
  CHECK(loadError(Gz) == Gz + ": the cache has no entries");
  writePlain(P, std::string(TinyHead) + R"("cache": {"16,b,1": {"block": 16,
                    "variant": "b", "unroll": 1, "time": "InvalidConfig"}}})");
  CHECK(loadError(P) == P + ": every entry of the cache failed: there is no "
                            "time to optimize");
}

TEST_CASE("grid search reaches the optimum where lexicographic order puts it",
          "[cache][simulate]") {
  TempDir D;
  TuningCache C = load(writeGzip(D.path("tiny.json.gz"), TinyCache));
  auto G = makeGridSearch(C.SearchSpace, {});
  SimulationTrace T = simulate(*G, C, 100, 1);
  // Index order: block ascending by value (16, 32, 64), variant in the
  // order given (b before a), unroll ascending; the optimum (32,b,2) is the
  // fifth entry in that order.
  const std::vector<Point> Order = {
      tinyPoint(16, "b", 1), tinyPoint(16, "b", 2), tinyPoint(16, "a", 1),
      tinyPoint(32, "b", 1), tinyPoint(32, "b", 2), tinyPoint(32, "a", 2),
      tinyPoint(64, "b", 1), tinyPoint(64, "a", 1), tinyPoint(64, "a", 2)};
  REQUIRE(T.Evaluations.size() == Order.size());
  CHECK(T.Exhausted);
  CHECK(T.NotInCache == 0);
  for (size_t I = 0; I < Order.size(); ++I) {
    INFO(I);
    CHECK(T.Evaluations[I].P == Order[I]);
    const CacheEntry *E = C.lookup(Order[I]);
    REQUIRE(E);
    CHECK(T.Evaluations[I].Value == E->TimeMs);
  }
  CHECK_FALSE(T.Evaluations[2].Value);
  CHECK(T.Evaluations[2].BestSoFar == 2.5);
  CHECK(evaluationsToWithin(T, C.OptimumMs, 0) == 5u);
  CHECK(evaluationsToWithin(T, C.OptimumMs, 1) == 5u);
  // 1.5 is 25% above 1.2: within 30% after the fourth evaluation.
  CHECK(evaluationsToWithin(T, C.OptimumMs, 30) == 4u);
  CHECK(T.best() == C.OptimumMs);
  CHECK(bestAt(T, 4) == 1.5);
  CHECK(bestAt(T, 5) == 1.2);
  // The space was exhausted: the best stays the final one.
  CHECK(bestAt(T, 50) == 1.2);
}

TEST_CASE("simulate stops at the budget, cutting the last batch",
          "[cache][simulate]") {
  TempDir D;
  TuningCache C = load(writePlain(D.path("tiny.json"), TinyCache));
  auto G = makeGridSearch(C.SearchSpace, {});
  SimulationTrace T = simulate(*G, C, 6, 4);
  REQUIRE(T.Evaluations.size() == 6);
  CHECK_FALSE(T.Exhausted);
  CHECK(T.Evaluations[5].P == tinyPoint(32, "a", 2));
  CHECK(bestAt(T, 6) == 1.2);
  // Cut by the budget: nothing is known past it.
  CHECK_FALSE(bestAt(T, 7));
  CHECK_FALSE(bestAt(T, 0));
}

TEST_CASE("random search finds a cache's optimum within its size",
          "[cache][simulate]") {
  TempDir D;
  TuningCache C = load(writeGzip(D.path("gen.json.gz"), generatedCache()));
  size_t Size = C.SearchSpace.Allowed.size();
  REQUIRE(Size > 40);
  REQUIRE(Size < 60);
  CHECK(C.OptimumMs == 1.0);
  CHECK(C.failures() > 0);
  std::set<size_t> FoundAt;
  for (uint64_t Seed = 1; Seed <= 8; ++Seed) {
    INFO(Seed);
    auto R = makeRandomSearch(C.SearchSpace, StrategyOptions{Seed, 0});
    SimulationTrace T = simulate(*R, C, 1000, Seed % 3 + 1);
    CHECK(T.Evaluations.size() == Size);
    CHECK(T.Exhausted);
    CHECK(T.NotInCache == 0);
    std::set<Point> Distinct;
    for (const SimulatedEvaluation &E : T.Evaluations)
      Distinct.insert(E.P);
    CHECK(Distinct.size() == Size);
    auto N = evaluationsToWithin(T, C.OptimumMs, 0);
    REQUIRE(N);
    CHECK(*N <= Size);
    CHECK(T.Evaluations[*N - 1].Value == C.OptimumMs);
    FoundAt.insert(*N);
  }
  // Different seeds walk the space in different orders.
  CHECK(FoundAt.size() > 1);
}

TEST_CASE("evaluations to within a distance of the optimum", "[simulate]") {
  SimulationTrace T;
  T.add(Point{{{0}}}, std::nullopt);
  T.add(Point{{{1}}}, 5.0);
  T.add(Point{{{2}}}, 3.0);
  T.add(Point{{{3}}}, 4.0);
  T.add(Point{{{4}}}, 2.04);
  T.add(Point{{{5}}}, std::nullopt);
  T.add(Point{{{6}}}, 2.0);
  CHECK_FALSE(T.Evaluations[0].BestSoFar);
  CHECK(T.Evaluations[3].BestSoFar == 3.0);
  CHECK(T.Evaluations[5].BestSoFar == 2.04);
  CHECK(evaluationsToWithin(T, 2.0, 5) == 5u);
  CHECK(evaluationsToWithin(T, 2.0, 1) == 7u);
  CHECK(evaluationsToWithin(T, 2.0, 0) == 7u);
  CHECK(evaluationsToWithin(T, 2.0, 60) == 3u);
  CHECK(evaluationsToWithin(T, 2.0, 150) == 2u);
  CHECK_FALSE(evaluationsToWithin(T, 1.0, 50));
  CHECK_FALSE(evaluationsToWithin(SimulationTrace(), 1.0, 50));
  CHECK_FALSE(bestAt(T, 1));
  CHECK(bestAt(T, 4) == 3.0);
  CHECK(T.best() == 2.0);
}
