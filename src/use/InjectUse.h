// The injection library's `r3 run --use` mode (InjectUse.cpp): the planned
// kernels' launches run the campaign's tuned cubins.
#pragma once

namespace r3::cuda {

/// Starts applying the plan r3 run named (R3_USE_PLAN); false when there is
/// none. A plan that cannot be used is warned about, and the application
/// runs with its own kernels.
bool startUse();

} // namespace r3::cuda
