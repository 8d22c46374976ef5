// Run-to-run differences of a kernel's outputs (Determinism.h). An element
// is read as both f32 and f64 because the capture does not say which its
// bytes are; the reading with the smaller largest difference is the likely
// one (the other reads garbage exponents), and the proposal uses it.
#include "replay/Determinism.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace r3 {

namespace {
template <typename F>
double maxRelative(std::span<const uint8_t> E, std::span<const uint8_t> A) {
  double Max = 0;
  for (size_t I = 0; I + sizeof(F) <= E.size(); I += sizeof(F)) {
    if (std::memcmp(E.data() + I, A.data() + I, sizeof(F)) == 0)
      continue;
    F X, Y;
    std::memcpy(&X, E.data() + I, sizeof(F));
    std::memcpy(&Y, A.data() + I, sizeof(F));
    if (!std::isfinite(X) || !std::isfinite(Y))
      return std::numeric_limits<double>::infinity();
    double Rel = std::fabs(double(Y) - double(X)) /
                 std::max(std::fabs(double(X)), 1e-300);
    Max = std::max(Max, Rel);
  }
  return Max;
}

std::string number(double V) {
  if (std::isinf(V))
    return "not a number";
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.2g", V);
  return Buf;
}

/// A power of ten at least 10 times V (a margin over what was seen).
double roundUp(double V) {
  return std::pow(10.0, std::ceil(std::log10(std::max(V, 1e-300) * 10)));
}
} // namespace

void RegionSpread::add(std::span<const uint8_t> Expected,
                       std::span<const uint8_t> Actual) {
  Bytes = Expected.size();
  if (Actual.size() != Expected.size())
    return;
  for (size_t I = 0; I < Expected.size(); ++I)
    Differing += Expected[I] != Actual[I];
  MaxRelF32 = std::max(MaxRelF32, maxRelative<float>(Expected, Actual));
  MaxRelF64 = std::max(MaxRelF64, maxRelative<double>(Expected, Actual));
}

std::string SpreadReport::message() const {
  if (Regions.empty())
    return "the outputs of " + std::to_string(Runs) +
           " runs equal the recorded ones bitwise";
  std::string Out;
  for (const RegionSpread &R : Regions) {
    Out += (Out.empty() ? "" : "; ") + R.Label + " differs in " +
           std::to_string(R.Differing) + " bytes over " +
           std::to_string(Runs) + " runs (of " + std::to_string(R.Bytes) +
           "), up to " + number(R.MaxRelF32) + " relative as f32 (" +
           number(R.MaxRelF64) + " as f64)";
  }
  return Out;
}

std::string SpreadReport::proposal() const {
  double F32 = 0, F64 = 0;
  for (const RegionSpread &R : Regions) {
    F32 = std::max(F32, R.MaxRelF32);
    F64 = std::max(F64, R.MaxRelF64);
  }
  bool Single = F32 <= F64;
  double V = roundUp(Single ? F32 : F64);
  if (std::isinf(V) || V >= 1)
    return "the differences are not small numbers: check the kernel, or "
           "compare with a tolerance of your choosing";
  char Buf[128];
  std::snprintf(Buf, sizeof Buf,
                "tolerance = \"rel\", value = %g, dtype = \"%s\"", V,
                Single ? "f32" : "f64");
  return Buf;
}

} // namespace r3
