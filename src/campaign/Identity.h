// A candidate's identity: a hash of everything that determines its result,
// so that nothing is compiled or measured twice — the kernel and its capture, the source
// text and defines, the compiler and launch settings, the backend and the
// device. The history holds it UNIQUE, so no candidate is evaluated twice,
// across restarts too.
#pragma once

#include "support/Error.h"
#include "support/Sha256.h" // sha256Hex, used by this header's callers

#include <cstdint>
#include <string>
#include <string_view>

namespace r3 {

/// A cheap fingerprint of a (possibly huge) capture file: its size and the
/// SHA-256 of its first and last MiB. Captures are written once and renamed
/// into place, so a changed capture changes its size or its ends.
Expected<std::string> captureFingerprint(const std::string &Path);

/// What a candidate's identity is made of.
struct IdentityParts {
  std::string Kernel;     ///< mangled name
  std::string Capture;    ///< captureFingerprint
  std::string Launches;   ///< the launches it runs, "0,1"
  std::string SourceHash; ///< "" for the recorded code
  std::string Settings;   ///< canonical JSON of the compiler/launch settings
  std::string Evaluation; ///< warm-up, repetitions, verification settings
  std::string Backend, Device;
};

/// The identity hash of a candidate.
std::string candidateIdentity(const IdentityParts &P);

} // namespace r3
