// In-process fake workers (FakeLinks.h).
#include "FakeLinks.h"

#include <cmath>
#include <deque>

namespace r3::testing {

namespace {
class FakeLink final : public WorkerLink {
public:
  FakeLink(unsigned W, std::shared_ptr<const FakeWorkerScript> S,
           std::shared_ptr<FakeWorkerStats> St)
      : W(W), Script(std::move(S)), Stats(std::move(St)) {}
  Error send(std::vector<uint8_t> Message) override {
    auto M = decodeMessage(Message);
    if (!M)
      return M.takeError();
    if (M->Kind != WorkerMessageKind::Job)
      return Error::success();
    uint64_t N = ++Stats->Results;
    if (Script->LoseAfter && N == Script->LoseAfter + 1) {
      ++Stats->Lost;
      Out.clear();
      Out.push_back(encodeLost("fake worker lost"));
      return Error::success();
    }
    WorkerResult R;
    R.Id = M->Job.Id;
    R.Result = Script->Answer ? Script->Answer(M->Job) : fakeAnswer(M->Job);
    if (W < Script->Slowdown.size())
      for (uint64_t &T : R.Result.TimesNs)
        T = static_cast<uint64_t>(static_cast<double>(T) * Script->Slowdown[W]);
    R.Device = "fake device " + std::to_string(W);
    R.EvalMs = 1;
    Out.push_back(encodeResult(R));
    return Error::success();
  }
  int pollFd() const override { return -1; }
  Expected<Got> receive(WorkerMessage &Msg) override {
    if (Out.empty())
      return Got::Nothing;
    R3_TRY(moveInto(decodeMessage(Out.front()), Msg));
    Out.pop_front();
    return Got::Message;
  }
  bool restartable() const override { return false; }
  void shutdown(double) override {}

private:
  unsigned W;
  std::shared_ptr<const FakeWorkerScript> Script;
  std::shared_ptr<FakeWorkerStats> Stats;
  std::deque<std::vector<uint8_t>> Out;
};
} // namespace

CandidateResult fakeAnswer(const WorkerJob &J) {
  CandidateResult R;
  R.Verified = true;
  R.Timer = "fake";
  uint32_t Threads = 1;
  for (uint32_t D : J.Work.Block.value_or(Dim3{16, 16, 1}))
    Threads *= D;
  double Ms = 1 + 0.1 * std::fabs(std::log2(Threads / 128.0));
  for (int I = 0; I < 6; ++I)
    R.TimesNs.push_back(static_cast<uint64_t>(Ms * 1e6) + I);
  R.BusyMs = 6 * Ms;
  return R;
}

LinkFactory fakeWorkerLinks(FakeWorkerScript Script,
                            std::shared_ptr<FakeWorkerStats> Stats) {
  auto Shared = std::make_shared<const FakeWorkerScript>(std::move(Script));
  return [Shared, Stats](unsigned W) -> Expected<std::unique_ptr<WorkerLink>> {
    return std::unique_ptr<WorkerLink>(
        std::make_unique<FakeLink>(W, Shared, Stats));
  };
}

} // namespace r3::testing
