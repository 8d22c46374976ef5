// The host backend's replay device: a capture of CPU kernels, its memory
// reserved at the recorded addresses, candidates compiled by the host JIT
// (compile/host/HostJit.h) into this (sandboxed) server process.
#pragma once

#include "replay/Device.h"

#include <memory>
#include <string>

namespace r3 {

class CaptureReader;

/// A device replaying the host capture R in this process. Reserves the
/// address ranges of every region of every launch at once (an error names a
/// range that is taken).
Expected<std::unique_ptr<ReplayDevice>>
openHostDevice(std::unique_ptr<CaptureReader> R);

} // namespace r3
