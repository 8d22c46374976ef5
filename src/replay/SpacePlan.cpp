// Planning the device address ranges of a CUDA replay (SpacePlan.h).
#include "replay/SpacePlan.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace r3 {

std::vector<PlannedSpan> planSpans(std::vector<SpanRequest> Requests,
                                   uint64_t Granularity) {
  std::sort(Requests.begin(), Requests.end(),
            [](const SpanRequest &A, const SpanRequest &B) {
              return A.Base < B.Base;
            });
  std::vector<PlannedSpan> Out;
  uint64_t Mask = Granularity - 1;
  for (const SpanRequest &R : Requests) {
    if (R.Size == 0)
      continue;
    uint64_t Lo = R.Base & ~Mask;
    uint64_t Hi = (R.Base + R.Size + Mask) & ~Mask;
    if (!Out.empty() && Lo <= Out.back().Base + Out.back().Size) {
      PlannedSpan &Last = Out.back();
      Last.Size = std::max(Last.Base + Last.Size, Hi) - Last.Base;
      Last.Labels.push_back(R.Label);
      continue;
    }
    Out.push_back({Lo, Hi - Lo, {R.Label}});
  }
  return Out;
}

void Relocation::addSpan(uint64_t Recorded, uint64_t Actual, uint64_t Size) {
  Spans.push_back({Recorded, Actual, Size});
  Moved += Actual != Recorded;
}

void Relocation::setRegions(std::vector<std::pair<uint64_t, uint64_t>> Rs) {
  std::sort(Rs.begin(), Rs.end());
  Regions.clear();
  for (const auto &R : Rs)
    if (!Regions.empty() && R.first <= Regions.back().second)
      Regions.back().second = std::max(Regions.back().second, R.second);
    else
      Regions.push_back(R);
}

uint64_t Relocation::translate(uint64_t Recorded) const {
  auto It = std::upper_bound(
      Spans.begin(), Spans.end(), Recorded,
      [](uint64_t V, const Span &S) { return V < S.Recorded; });
  if (It == Spans.begin())
    return Recorded;
  --It;
  if (Recorded >= It->Recorded + It->Size)
    return Recorded;
  return Recorded - It->Recorded + It->Actual;
}

uint64_t Relocation::relocate(std::span<uint8_t> Bytes, uint64_t Base) const {
  if (!Moved || Regions.empty())
    return 0;
  uint64_t Lo = Regions.front().first, Hi = Regions.back().second;
  uint64_t Count = 0;
  for (size_t I = (8 - Base % 8) % 8; I + 8 <= Bytes.size(); I += 8) {
    uint64_t V;
    std::memcpy(&V, Bytes.data() + I, 8);
    if (V < Lo || V > Hi)
      continue;
    auto It = std::upper_bound(
        Regions.begin(), Regions.end(), V,
        [](uint64_t X, const std::pair<uint64_t, uint64_t> &R) {
          return X < R.first;
        });
    if (It == Regions.begin() || V > std::prev(It)->second)
      continue;
    // One past the end moves with the region it ends, not the next span.
    bool End = V == std::prev(It)->second && V > std::prev(It)->first;
    uint64_t W = End ? translate(V - 1) + 1 : translate(V);
    if (W == V)
      continue;
    std::memcpy(Bytes.data() + I, &W, 8);
    ++Count;
  }
  return Count;
}

} // namespace r3
