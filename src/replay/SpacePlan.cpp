// Planning the device address ranges of a CUDA replay (SpacePlan.h).
#include "replay/SpacePlan.h"

#include <algorithm>

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

} // namespace r3
