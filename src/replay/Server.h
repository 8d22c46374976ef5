// The replay server process's main loop (run as the hidden `r3
// __replay-server IN OUT`): one capture opened in one device, candidates
// evaluated one at a time, answers sent back over the pipe (ServerProtocol.h).
#pragma once

#include "support/Error.h"

namespace r3 {

/// Serves the client on descriptors In and Out until In ends. An error means
/// the conversation broke (the client died, a frame was garbage); a
/// candidate's failure is a Result and a capture that cannot be replayed an
/// Error frame, neither ends the loop.
Error runReplayServer(int In, int Out);

} // namespace r3
