// The scripted fake replay device (FakeDevice.h).
#include "replay/FakeDevice.h"

#include "capture/CaptureReader.h"
#include "support/StringUtil.h"

#include <csignal>
#include <fstream>
#include <thread>

namespace r3 {

namespace {
class FakeDevice final : public ReplayDevice {
public:
  FakeDevice(std::unique_ptr<CaptureReader> R, std::string Script)
      : Reader(std::move(R)), Steps(split(Script, ',')) {}
  Expected<CandidateResult> evaluate(const Candidate &C,
                                     const RunningFn &Running) override;

private:
  /// The next step of the script, counted in the scratch directory.
  std::string next();

  std::unique_ptr<CaptureReader> Reader;
  std::vector<std::string> Steps;
};

std::string FakeDevice::next() {
  unsigned N = 0;
  std::ifstream("fake-device.count") >> N;
  std::ofstream("fake-device.count") << N + 1;
  return N < Steps.size() ? Steps[N] : "ok";
}

Expected<CandidateResult> FakeDevice::evaluate(const Candidate &C,
                                               const RunningFn &Running) {
  std::string Step = next();
  R3_TRY(Running(CompiledInfo{0.5, C.Pipeline, 0, true}));
  if (Step == "crash")
    std::raise(SIGSEGV);
  if (Step == "hang")
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  CandidateResult R;
  if (Step == "wrong")
    R = failedResult(FailureKind::WrongResult, "fake device: scripted wrong");
  else if (Step == "invalid")
    R = failedResult(FailureKind::InvalidLaunch,
                     "fake device: scripted invalid launch");
  else if (Step == "lost") {
    R = failedResult(FailureKind::Crashed,
                     "crashed: fake device: scripted lost context");
    R.DeviceLost = true;
  } else {
    R.Verified = true;
    for (uint32_t I = 0; I < C.Repetitions; ++I)
      R.TimesNs.push_back(1000000 + 1000 * (I % 3));
  }
  uint32_t Threads = 1;
  for (uint32_t D : C.Block.value_or(Dim3{1, 1, 1}))
    Threads *= D;
  R.Registers = 32;
  R.SharedBytes = Threads; // so a test sees the block that arrived
  R.Poisoned = true;
  return R;
}
} // namespace

std::unique_ptr<ReplayDevice> openFakeDevice(std::unique_ptr<CaptureReader> R,
                                             std::string Script) {
  return std::make_unique<FakeDevice>(std::move(R), std::move(Script));
}

} // namespace r3
