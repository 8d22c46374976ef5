// Workers inside the test process, for tests and benchmarks of the campaign
// core (the coordinator's loop, its search state and its history) without
// worker processes or replay servers: each link answers a job at once with
// a result made from its settings, as a scripted device would.
#pragma once

#include "campaign/Transport.h"

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace r3::testing {

/// What a fake worker does with a job.
struct FakeWorkerScript {
  /// The result of a job (its candidate's settings are in Work); the
  /// default: verified, 1 ms at 128 threads a block and 10% more per factor
  /// of two away from it.
  std::function<CandidateResult(const WorkerJob &)> Answer;
  /// After this many results in all, the next job's worker is "lost" (its
  /// jobs given back, as a rank reports a worker that died); 0: never.
  uint64_t LoseAfter = 0;
  /// Worker W's times are multiplied by Slowdown[W] (1 where absent), as
  /// GPUs of different kinds would give them; each worker's device is named
  /// "fake device W".
  std::vector<double> Slowdown;
};

/// Shared by every link a factory made: the results given so far.
struct FakeWorkerStats {
  std::atomic<uint64_t> Results{0}, Lost{0};
};

/// Links to in-process fake workers that follow Script.
LinkFactory fakeWorkerLinks(FakeWorkerScript Script,
                            std::shared_ptr<FakeWorkerStats> Stats);

/// The default answer (FakeWorkerScript::Answer).
CandidateResult fakeAnswer(const WorkerJob &J);

} // namespace r3::testing
