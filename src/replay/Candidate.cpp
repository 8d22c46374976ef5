// Names of the candidate model's enums, shared by the JSON output, the
// history database and the server protocol.
#include "replay/Candidate.h"

namespace r3 {

namespace {
constexpr const char *FailureNames[] = {"none",           "compile_error",
                                        "invalid_launch", "crashed",
                                        "timeout",        "wrong_result"};
} // namespace

const char *failureKindName(FailureKind K) {
  return FailureNames[static_cast<int>(K)];
}

std::optional<FailureKind> parseFailureKind(const std::string &S) {
  for (int I = 0; I < 6; ++I)
    if (S == FailureNames[I])
      return static_cast<FailureKind>(I);
  return std::nullopt;
}

const char *toleranceKindName(ToleranceKind K) {
  switch (K) {
  case ToleranceKind::Exact:
    return "exact";
  case ToleranceKind::Abs:
    return "abs";
  case ToleranceKind::Rel:
    return "rel";
  case ToleranceKind::Ulp:
    return "ulp";
  }
  return "?";
}

const char *elementTypeName(ElementType T) {
  switch (T) {
  case ElementType::Bytes:
    return "bytes";
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  }
  return "?";
}

const char *poisonModeName(PoisonMode M) {
  switch (M) {
  case PoisonMode::Auto:
    return "auto";
  case PoisonMode::On:
    return "on";
  case PoisonMode::Off:
    return "off";
  }
  return "?";
}

namespace {
constexpr const char *CacheNames[] = {"none", "shared", "l1", "equal"};
} // namespace

const char *cachePreferenceName(CachePreference P) {
  return CacheNames[static_cast<int>(P)];
}

std::optional<CachePreference> parseCachePreference(const std::string &S) {
  for (int I = 0; I < 4; ++I)
    if (S == CacheNames[I])
      return static_cast<CachePreference>(I);
  return std::nullopt;
}

CandidateResult failedResult(FailureKind K, std::string Message) {
  CandidateResult R;
  R.Failure = K;
  R.Message = std::move(Message);
  return R;
}

} // namespace r3
