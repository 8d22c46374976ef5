// A scripted stand-in for the GPU part of a replay server, so that the
// server protocol, the client's restarts and `r3 replay`'s CUDA half are
// tested where there is no GPU. It replaces the CUDA device when the
// server's environment has R3_REPLAY_FAKE_DEVICE, a comma-separated script
// of outcomes, one per evaluation in this client's scratch directory (so the
// count survives a restart): ok, wrong, invalid, crash (the server dies of
// SIGSEGV), hang (the run never ends), lost (a crashed result after which
// the server exits, as a CUDA fault makes it), noisy (verified, with run
// times spread over a factor of three), vary (with a determinism check:
// outputs that differ in their last bits between runs, a wrong result under
// exact verification, verified under a tolerance). A verified run takes 1 ms
// for the recorded code at 128 threads a block, 10% more per factor of two
// away from that and 5% more for compiled code, so a campaign has a best
// launch to find; a grid of grid_per_sm blocks a multiprocessor (a
// grid-stride kernel's) saves 15% at 4, 5 points less per factor of two
// away. The timed runs follow the candidate's repetition rule. With
// R3_REPLAY_FAKE_DELAY_MS each evaluation also takes that long; with
// R3_REPLAY_FAKE_FAST_PIPELINE=P code compiled under pipeline P is 10%
// faster than the recorded code instead, so that a campaign's best is a
// compiled candidate of known settings (r3 export's test).
#pragma once

#include "replay/Device.h"

#include <memory>
#include <string>

namespace r3 {
class CaptureReader;

/// The fake device for Script (the variable's value).
std::unique_ptr<ReplayDevice> openFakeDevice(std::unique_ptr<CaptureReader> R,
                                             std::string Script);

} // namespace r3
