// Where r3 finds its run-time data (share/r3) and keeps its caches. Both
// follow the running executable or the environment, so that a build tree,
// an installed tree and a test that points them elsewhere all work.
#pragma once

#include <string>

namespace r3 {

/// The running r3 executable (/proc/self/exe), or empty when it cannot be
/// read.
std::string selfExecutable();

/// r3's data directory: $R3_SHARE_DIR, else <dir of the r3 executable>/../
/// share/r3 (the build tree links build/share/r3 to the source's share/).
std::string shareDir();

/// The default compile cache: $R3_CACHE_DIR, else $XDG_CACHE_HOME/r3, else
/// $HOME/.cache/r3; empty when none of them is set (no cache).
std::string defaultCacheDir();

} // namespace r3
