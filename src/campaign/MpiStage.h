// Internal to the MPI campaign code (Mpi.cpp): staging captures to the
// nodes' local disks (MpiStage.cpp says how).
#pragma once

#include "support/Error.h"

#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace r3 {

struct StagedCapture {
  std::string Path; ///< as rank 0 reads it
  uint64_t Size = 0;
  std::string Hash; ///< SHA-256, hex
};

struct StagePlan {
  bool Abort = false; ///< rank 0 cannot run the campaign: ranks exit
  std::string Dir;    ///< empty: nothing staged
  std::vector<StagedCapture> Captures;
};

/// What a worker rank reads instead of each capture path.
struct StagedPaths {
  bool Abort = false;
  std::map<std::string, std::string> Paths;
};

/// Success, or "Call: MPI's own message".
Error mpiError(int Rc, const char *Call);

/// Rank 0's plan for the campaign's captures (hashed once here).
Expected<StagePlan> makePlan(const std::vector<std::string> &Captures,
                             const std::string &Dir);
/// Rank 0's side: broadcasts the plan and sends what nodes lack.
Error rootStage(const StagePlan &P, int Size);
/// A worker rank's side; Leader: the first worker rank of its node.
Expected<StagedPaths> workerStage(bool Leader, MPI_Comm Node,
                                  const std::string &NodeName);
/// Where node NodeName keeps capture C.
std::string stagedPath(const StagePlan &P, const StagedCapture &C,
                       const std::string &NodeName);

} // namespace r3
