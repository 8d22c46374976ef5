// Campaigns across the ranks of an MPI job (`mpirun -n N r3 tune C.toml`,
// `srun r3 tune C.toml`). Rank 0 is the coordinator: it alone opens the
// history and runs the search, and reaches every other rank through a link
// (Transport.h) that carries the worker protocol's messages as MPI
// messages, sent without blocking and polled with MPI_Iprobe. Every other
// rank is a thin relay: it starts a worker process of its own (spawned, so
// that no MPI and no CUDA lives in the process that runs candidates) with
// its own GPU, and passes messages between it and rank 0. A candidate that
// faults kills a replay server, never a rank; a rank whose worker process
// dies starts another and tells rank 0, which gives its jobs to others. A
// rank that dies ends the job (Open MPI 4.1 has no fault tolerance); the
// history keeps every committed result, and the next start resumes.
#pragma once

#include "campaign/Transport.h"
#include "support/Error.h"

namespace r3 {

/// This process's place in an MPI job.
struct MpiJob {
  int Rank = 0, Size = 1;
};

/// Whether the environment says this process is a rank of a parallel job
/// (Open MPI's mpirun, a PMIx or PMI launcher, Slurm's srun with more than
/// one task).
bool mpiLaunched();

/// Whether this r3 was built with MPI.
bool mpiBuilt();

/// Initializes MPI; an error when this r3 was built without it.
Expected<MpiJob> startMpi();

/// On rank 0, tells every worker rank not yet told to exit; then finalizes
/// MPI. Does nothing when MPI was not started.
void finishMpi();

/// Rank 0's links: worker W is rank W + 1.
LinkFactory mpiLinks();

/// Captures staged to node-local disks before a campaign. Rank 0 sends the
/// plan to every rank (an empty Dir: nothing to stage); the first worker
/// rank of each node checks what its node already holds under Dir (by
/// SHA-256), asks for the rest, receives each capture in 64 MiB messages,
/// checks its hash (a damaged copy is asked for once more) and tells its
/// node's other ranks; every worker rank then reads the staged copies.
/// Dir's "%h" becomes the node's name. Nodes are those MPI's shared-memory
/// split finds, or the names R3_NODE_NAME gives (for tests on one machine).
/// Rank 0 calls this with the campaign's captures once it has read the
/// campaign (or with none when it cannot start); it returns the seconds
/// staging took.
Expected<double> stageCaptures(const std::vector<std::string> &Captures,
                               const std::string &Dir);

/// A worker rank's life: takes its part in staging the captures, then
/// relays between rank 0 and a worker process of its own until rank 0 says
/// to stop. Its GPU: the one visible device, else its
/// index among the worker ranks of its node modulo the visible devices (or
/// the list R3_GPUS names). SIGTERM, SIGUSR1 or SIGINT to the rank ask rank
/// 0 for a clean stop. Returns the rank's exit status.
int runWorkerRank(const MpiJob &J);

} // namespace r3
