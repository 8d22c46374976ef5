// The contract between `r3 record` and the process it records, carried in
// environment variables: which fd the record stream is, which kernels and
// launches to record, whether only to list kernels, and the snapshot size
// cap. The parent encodes it; the recorded side (the host runtime, later the
// CUDA injection library) decodes it at start-up and removes the variables,
// so that programs the application starts are not recorded. Backend-neutral,
// libc and the C++ runtime only.
#pragma once

#include "record/Selection.h"
#include "support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace r3 {

/// What the recorded process is asked to do.
enum class RecordMode {
  Record, ///< record the selected launches into a capture
  List    ///< time every instrumented kernel; record nothing
};

/// The default cap on the bytes one recorded launch may snapshot (4 GiB).
inline constexpr uint64_t DefaultMaxSnapshotBytes = 4ull << 30;

struct RecordEnv {
  int StreamFd = -1; ///< the record stream (a socket), inherited
  RecordMode Mode = RecordMode::Record;
  /// --kernel patterns; empty selects every instrumented kernel.
  std::vector<std::string> Patterns;
  LaunchRange Range;
  uint64_t MaxSnapshotBytes = DefaultMaxSnapshotBytes;
  /// CUDA: record every live allocation a launch's context holds, not only
  /// those its pointers reach (record/Reachable.h).
  bool AllMemory = false;
  /// The bulk ring (record/Ring.h), inherited: -1 when there is none (the
  /// host backend's runtime sends its bytes through the stream).
  int RingFd = -1;
  uint32_t RingSlots = 0;
  uint64_t RingSlotBytes = 0;
};

/// The environment variables of the contract, each "R3_RECORD_...".
namespace recordenv {
inline constexpr const char *Fd = "R3_RECORD_FD";
inline constexpr const char *Mode = "R3_RECORD_MODE";          ///< record|list
inline constexpr const char *Kernels = "R3_RECORD_KERNELS";    ///< see encode
inline constexpr const char *Launches = "R3_RECORD_LAUNCHES";  ///< F:L:M
inline constexpr const char *MaxBytes = "R3_RECORD_MAX_BYTES"; ///< decimal
inline constexpr const char *Ring = "R3_RECORD_RING"; ///< FD:SLOTS:SLOTBYTES
inline constexpr const char *Memory = "R3_RECORD_MEMORY"; ///< reachable|all
/// Every variable above, for the recorded side to remove.
inline constexpr const char *All[] = {Fd,       Mode, Kernels, Launches,
                                      MaxBytes, Ring, Memory};
} // namespace recordenv

/// The contract as NAME/value pairs for the application's environment.
/// Patterns are stored length-prefixed ("7:stencil3:foo"), so any character
/// may appear in them; absent range bounds are written as '-'.
std::vector<std::pair<std::string, std::string>>
encodeRecordEnv(const RecordEnv &E);

/// Looks up a variable; returns null when it is unset (std::getenv inside the
/// recorded process, where nothing may be copied before the guard is up).
using RawEnvLookup = std::function<const char *(const char *)>;

/// The contract from the environment: std::nullopt when the process does not
/// run under `r3 record` (no R3_RECORD_FD), an error naming the variable when
/// a value is malformed.
Expected<std::optional<RecordEnv>> decodeRecordEnv(const RawEnvLookup &Env);

} // namespace r3
