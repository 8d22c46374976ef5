// The parent side of `r3 record`: reads the record stream that the injected
// library (or host runtime) sends and writes the capture with CaptureWriter.
// Region bytes go from the pipe to the HDF5 file chunk by chunk, never held
// whole. A stream that ends before its Done frame, or that says Failure, leaves
// no capture behind (the writer's temporary file is removed).
#pragma once

#include "capture/Capture.h"
#include "capture/CaptureWriter.h"
#include "support/Error.h"

#include "record/Messages.h"
#include "record/Ring.h"

#include <string>
#include <string_view>
#include <vector>

namespace r3 {

struct RecordStats {
  uint64_t Modules = 0, Kernels = 0, Launches = 0, Regions = 0;
  uint64_t RegionBytes = 0; ///< bytes of region contents written, pre and post
  /// The mangled names of the kernels with recorded launches, in the order of
  /// their first recorded launch.
  std::vector<std::string> LaunchedKernels;
  /// What the recorded process warned about (Warning frames), in order: the
  /// capture is complete, but cannot replay everything the application did.
  std::vector<std::string> Warnings;
};

/// Reads frames from Fd until Done and writes the capture to Path. Base holds
/// what the parent knows (command line, environment); the stream's Hello frame
/// fills in the backend and the device. Ring is the bulk ring the recorded
/// process was given (record/Ring.h), or null: a region sent through a ring
/// without one is a stream error.
Expected<RecordStats>
receiveCapture(int Fd, const std::string &Path, const CaptureHeader &Base,
               CaptureCompression Compression = CaptureCompression::None,
               const wire::BulkRing *Ring = nullptr);

} // namespace r3

namespace r3 {

/// How receiveCapture and receiveKernelList begin their error when the
/// recorded process ended without sending anything (its r3 library never
/// started), so that a caller can say why for its backend.
inline constexpr std::string_view NothingSentMessage =
    "the recorded process ended before recording finished, without sending "
    "anything";

/// List mode: reads the stream of `r3 record --list` (hello, one statistics
/// frame per instrumented kernel that ran, done) and returns the statistics.
Expected<std::vector<wire::KernelStatsMsg>> receiveKernelList(int Fd);

} // namespace r3
