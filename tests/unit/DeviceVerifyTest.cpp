// Verification where the memory is (replay/DeviceVerify.h): the scan the
// GPU's kernel runs (VerifyScan.h), run here over emulated threads, must
// give the host verifier's report on the same bytes, whatever the element
// type, tolerance, alignment and damage.
#include "Catch.h"

#include "replay/DeviceVerify.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace r3;

namespace {
/// A device whose memory is this process's and whose scans run each
/// "thread" of a grid in turn, as the kernel's threads would.
class EmulatedScans final : public ScanDevice {
public:
  explicit EmulatedScans(uint64_t Threads) : Threads(Threads) {}
  Expected<std::vector<scan::Result>>
  scan(const std::vector<scan::Op> &Ops) override {
    std::vector<scan::Result> Out;
    for (const scan::Op &O : Ops) {
      scan::Result R;
      for (uint64_t T = 0; T < Threads; ++T) {
        uint64_t Count = 0, First = scan::NoUnit;
        scan::scanUnits(O, T, Threads, Count, First);
        R.Count += Count;
        R.First = std::min(R.First, First);
      }
      Out.push_back(R);
      ++Scans;
    }
    return Out;
  }
  Error read(uint64_t At, std::span<uint8_t> To) override {
    std::memcpy(To.data(), reinterpret_cast<const void *>(At), To.size());
    Read += To.size();
    return Error::success();
  }
  uint64_t Threads;
  uint64_t Scans = 0, Read = 0;
};

/// Bytes at a chosen offset from a 16-byte boundary.
struct Placed {
  Placed(size_t Size, size_t Offset) : Storage(Size + 32), At(Offset) {}
  uint8_t *data() { return Storage.data() + Pad() + At; }
  size_t Pad() {
    auto P = reinterpret_cast<uintptr_t>(Storage.data());
    return (16 - P % 16) % 16;
  }
  std::vector<uint8_t> Storage;
  size_t At;
};

VerifySettings randomSettings(std::mt19937_64 &Rng) {
  VerifySettings S;
  S.Type = ElementType(Rng() % 3);
  S.Tolerance = ToleranceKind(Rng() % 4);
  switch (S.Tolerance) {
  case ToleranceKind::Exact:
    S.Value = 0;
    break;
  case ToleranceKind::Ulp:
    S.Value = double(Rng() % 6 == 0 ? 0 : Rng() % 64);
    break;
  default:
    S.Value = std::ldexp(1.0, -int(Rng() % 30)) * (Rng() % 4);
  }
  return S;
}

/// Expected values: floats of both widths, zeros, infinities, NaNs.
void fillExpected(std::mt19937_64 &Rng, std::vector<uint8_t> &E) {
  for (size_t I = 0; I < E.size(); I += 8) {
    double D = std::ldexp(double(Rng() % 2001) - 1000.0, int(Rng() % 20) - 10);
    float F = static_cast<float>(D);
    switch (Rng() % 12) {
    case 0:
      D = 0;
      F = -0.0f;
      break;
    case 1:
      D = std::numeric_limits<double>::infinity();
      F = -INFINITY;
      break;
    case 2:
      D = std::numeric_limits<double>::quiet_NaN();
      F = NAN;
      break;
    default:
      break;
    }
    uint8_t Word[8];
    if (Rng() % 2) {
      std::memcpy(Word, &D, 8);
    } else {
      std::memcpy(Word, &F, 4);
      std::memcpy(Word + 4, &F, 4);
    }
    for (size_t K = 0; K < 8 && I + K < E.size(); ++K)
      E[I + K] = Word[K];
  }
}

/// What a run left: mostly the expected bytes, some units nudged by a few
/// ulps, some bytes damaged, some NaNs and signed zeros swapped in.
void damage(std::mt19937_64 &Rng, std::vector<uint8_t> &A) {
  size_t Hits = Rng() % 4 == 0 ? 0 : Rng() % 12;
  for (size_t H = 0; H < Hits && !A.empty(); ++H) {
    size_t I = Rng() % A.size();
    switch (Rng() % 5) {
    case 0:
      A[I] ^= uint8_t(1 + Rng() % 255);
      break;
    case 1:
      A[I] = uint8_t(A[I] + 1);
      break; // a low byte: a few ulps
    case 2:
      if (I + 4 <= A.size()) {
        float N = NAN;
        std::memcpy(&A[I], &N, 4);
      }
      break;
    case 3:
      A[I] ^= 0x80;
      break; // a sign bit, where I is a top byte
    default:
      for (size_t K = I; K < std::min(A.size(), I + 40); ++K)
        A[K] ^= 0x01;
    }
  }
}
} // namespace

TEST_CASE("device verify: the scans give the host verifier's report") {
  std::mt19937_64 Rng(20261207);
  uint64_t Failing = 0, Passing = 0;
  for (int Trial = 0; Trial < 3000; ++Trial) {
    VerifySettings S = randomSettings(Rng);
    size_t Count = 1 + Rng() % 4;
    std::vector<Placed> Want, Got;
    std::vector<std::vector<uint8_t>> Expected(Count), Actual(Count);
    std::vector<ScanRegion> Regions;
    Verifier Host(S);
    Want.reserve(Count);
    Got.reserve(Count);
    for (size_t I = 0; I < Count; ++I) {
      size_t Size = Rng() % 5 == 0 ? Rng() % 8 : Rng() % 700;
      Expected[I].resize(Size);
      fillExpected(Rng, Expected[I]);
      Actual[I] = Expected[I];
      damage(Rng, Actual[I]);
      // Alignment: mostly 16-byte aligned as allocations are, sometimes
      // not, and the two sides not always alike.
      size_t OffE = Rng() % 3 ? 0 : Rng() % 16,
             OffA = Rng() % 2 ? OffE : Rng() % 16;
      Want.emplace_back(Size, OffE);
      Got.emplace_back(Size, OffA);
      if (Size) { // an empty vector's data() may be null
        std::memcpy(Want.back().data(), Expected[I].data(), Size);
        std::memcpy(Got.back().data(), Actual[I].data(), Size);
      }
      RegionRole Role = Rng() % 4 ? RegionRole::Output : RegionRole::Unchanged;
      std::string Label = "region " + std::to_string(I);
      bool OnHost = Rng() % 8 == 0;
      Regions.push_back(
          {Label, Role, Expected[I],
           OnHost ? 0 : reinterpret_cast<uint64_t>(Want.back().data()),
           reinterpret_cast<uint64_t>(Got.back().data()), Size});
      Host.checkRegion({Label, Expected[I], Actual[I], Role});
    }
    EmulatedScans Device(1 + Rng() % 9);
    auto Report = verifyOnDevice(Regions, S, Device);
    REQUIRE(Report);
    const VerifyReport &H = Host.report();
    INFO("trial " << Trial << ", tolerance " << toleranceKindName(S.Tolerance)
                  << ":" << S.Value << ", host: " << H.message());
    CHECK(Report->Mismatches == H.Mismatches);
    CHECK(Report->RegionsWrong == H.RegionsWrong);
    CHECK(Report->First == H.First);
    CHECK(Report->message() == H.message());
    (H.passed() ? Passing : Failing) += 1;
  }
  // Both verdicts were exercised many times.
  CHECK(Passing > 300);
  CHECK(Failing > 300);
}

TEST_CASE("device verify: a passing region reads back nothing") {
  std::vector<uint8_t> E(4096, 7), A(4096, 7);
  VerifySettings S;
  EmulatedScans Device(4);
  std::vector<ScanRegion> Regions = {
      {"region 0", RegionRole::Output, E, reinterpret_cast<uint64_t>(E.data()),
       reinterpret_cast<uint64_t>(A.data()), E.size()}};
  auto R = verifyOnDevice(Regions, S, Device);
  REQUIRE(R);
  CHECK(R->passed());
  CHECK(Device.Read == 0);
  CHECK(Device.Scans == 1);
  // A failing one reads back only the units it describes.
  for (size_t I = 100; I < 1100; ++I)
    A[I] = 9;
  auto F = verifyOnDevice(Regions, S, Device);
  REQUIRE(F);
  CHECK(F->Mismatches == 1000);
  CHECK(F->First.size() == Verifier::MaxDescribed);
  CHECK(Device.Read == Verifier::MaxDescribed);
  CHECK(F->message().find("byte 100: expected 0x07, got 0x09") !=
        std::string::npos);
}

TEST_CASE("device verify: the tail past the last element is bytes") {
  VerifySettings S;
  S.Type = ElementType::F32;
  S.Tolerance = ToleranceKind::Abs;
  S.Value = 0.5;
  ScanRegion R{"r", RegionRole::Output, {}, 1, 2, 10};
  auto Ops = scansOf(R, S);
  REQUIRE(Ops.size() == 2);
  CHECK(Ops[0].UnitKind == scan::F32);
  CHECK(Ops[0].Units == 2);
  CHECK(Ops[1].UnitKind == scan::Byte);
  CHECK(Ops[1].From == 8);
  CHECK(Ops[1].Units == 10);
  R.Role = RegionRole::Unchanged; // whatever the tolerance
  Ops = scansOf(R, S);
  REQUIRE(Ops.size() == 1);
  CHECK(Ops[0].UnitKind == scan::Byte);
}
