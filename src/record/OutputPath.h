// Expansion of `r3 record -o` patterns, so that one command line serves every
// process of a parallel job: `mpirun -n 4 r3 record ... -o cap-%r.h5 -- ./app`.
#pragma once

#include "support/Error.h"

#include <functional>
#include <optional>
#include <string>

namespace r3 {

/// Looks up an environment variable; std::getenv in production.
using EnvLookup =
    std::function<std::optional<std::string>(const std::string &)>;

/// The MPI rank of this process from the launcher's environment:
/// OMPI_COMM_WORLD_RANK (Open MPI), PMI_RANK (MPICH, Intel MPI), PMIX_RANK,
/// then SLURM_PROCID (srun), in that order.
std::optional<std::string> mpiRank(const EnvLookup &Env);

/// Replaces %p with Pid, %r with the MPI rank and %% with %. A %r outside an
/// MPI or Slurm job, a rank that is not a number, or any other %-sequence is an
/// error naming the pattern.
Expected<std::string> expandOutputPath(const std::string &Pattern, long Pid,
                                       const EnvLookup &Env);

} // namespace r3
