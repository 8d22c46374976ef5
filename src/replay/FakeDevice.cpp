// The scripted fake replay device (FakeDevice.h).
#include "replay/FakeDevice.h"

#include "capture/CaptureReader.h"
#include "replay/Stats.h"
#include "support/StringUtil.h"

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace r3 {

namespace {
class FakeDevice final : public ReplayDevice {
public:
  FakeDevice(std::unique_ptr<CaptureReader> R, std::string Script)
      : Reader(std::move(R)), Steps(split(Script, ',')) {}
  Expected<CandidateResult> evaluate(const Candidate &C,
                                     const RunHooks &Hooks) override;
  /// "fake GPU", and the GPU its worker was given, so tests see it.
  std::string name() const override {
    const char *Gpu = std::getenv("CUDA_VISIBLE_DEVICES");
    return std::string("fake GPU") + (Gpu ? std::string(" ") + Gpu : "");
  }

private:
  /// The next step of the script, counted in the scratch directory.
  std::string next();

  std::unique_ptr<CaptureReader> Reader;
  std::vector<std::string> Steps;
};

/// The time of one run: 1 ms for the recorded code at 128 threads a block,
/// 10% more per factor of two away from it, 5% more for compiled code; a
/// noisy step spreads the runs over a factor of three.
uint64_t runNs(const Candidate &C, const Dim3 &Recorded, bool Noisy,
               uint32_t Run) {
  uint32_t Threads = 1;
  for (uint32_t D : C.Block.value_or(Recorded))
    Threads *= D;
  double Factor = 1 + 0.1 * std::fabs(std::log2(Threads / 128.0));
  const char *Fast = std::getenv("R3_REPLAY_FAKE_FAST_PIPELINE");
  if (C.Code != CodeKind::Recorded)
    Factor *= Fast && C.Pipeline == Fast ? 0.9 : 1.05;
  if (C.GridPerSm) // a grid-stride kernel is fastest at 4 blocks an SM
    Factor *= 0.85 + 0.05 * std::fabs(std::log2(C.GridPerSm / 4.0));
  double Ns = 1e6 * Factor + 1000 * (Run % 3);
  if (Noisy)
    Ns *= 1 + (Run * 7919 % 13) / 6.0;
  return static_cast<uint64_t>(Ns);
}

/// The timed runs, under the candidate's repetition rule, with a tick each.
void time(const Candidate &C, const Dim3 &Recorded, bool Noisy,
          const RunHooks &Hooks, CandidateResult &R) {
  RepetitionRule Rule{C.MinRepetitions, C.Repetitions, C.TargetCi};
  for (uint32_t I = 0; !Rule.enough(R.TimesNs); ++I) {
    if (Hooks.Tick)
      Hooks.Tick();
    uint64_t Ns = runNs(C, Recorded, Noisy, I);
    R.TimesNs.push_back(Ns);
    R.EventTimesNs.push_back(Ns + 6500);
    R.BusyMs += 2 * Ns / 1e6;
  }
}

std::string FakeDevice::next() {
  unsigned N = 0;
  std::ifstream("fake-device.count") >> N;
  std::ofstream("fake-device.count") << N + 1;
  return N < Steps.size() ? Steps[N] : "ok";
}

Expected<CandidateResult> FakeDevice::evaluate(const Candidate &C,
                                               const RunHooks &Hooks) {
  std::string Step = next();
  // A fake GPU as slow as a real one, where a test needs one (kill -9 at a
  // random moment of a campaign that must still be running).
  if (const char *Delay = std::getenv("R3_REPLAY_FAKE_DELAY_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(Delay)));
  R3_TRY(Hooks.Running(CompiledInfo{0.5, C.Pipeline, 0, true}));
  if (Hooks.Tick)
    Hooks.Tick();
  if (Step == "crash")
    std::raise(SIGSEGV);
  if (Step == "hang")
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  CandidateResult R;
  if (Step == "vary" && C.DeterminismRuns > 0) {
    // Outputs that differ in their last bits between runs, as float
    // atomics make them: covered by any tolerance but exact.
    std::string Finding =
        "launch 0, region 'Out' (fake) differs in 12 bytes over " +
        std::to_string(C.DeterminismRuns) +
        " runs (of 4096), up to 1.2e-07 relative as f32 (not a number as "
        "f64); a tolerance that covers it: tolerance = \"rel\", value = "
        "1e-06, dtype = \"f32\"";
    if (C.Verify.Tolerance == ToleranceKind::Exact) {
      R = failedResult(FailureKind::WrongResult,
                       "the recorded kernel is not deterministic: " + Finding);
      R.Nondeterminism = Finding;
      return R;
    }
    R.Nondeterminism = Finding;
    R.NondeterminismCovered = true;
    Step = "ok";
  }
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
    R.Timer = "fake";
    const auto &Ls = Reader->launches();
    Dim3 Recorded = C.Launches.empty() || C.Launches[0] >= Ls.size()
                        ? Dim3{1, 1, 1}
                        : Ls[C.Launches[0]].Block;
    time(C, Recorded, Step == "noisy", Hooks, R);
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
