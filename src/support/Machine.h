// What this machine has, read from /proc and the environment without
// touching a device: the CPU's model name, and the GPUs a process started
// here would see (so that a campaign's coordinator, which never initializes
// CUDA, can give each worker its own GPU); its wall clock; and the tasks of
// this process (a replay server checks that a candidate left none behind).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace r3 {

/// Wall-clock seconds since the epoch: the history's and the reports' time.
double nowSeconds();

/// The cores this process may run on: its CPU affinity's count (a Slurm
/// step's or a bound MPI rank's share of the node), else the machine's
/// (at least 1).
unsigned usableCores();

/// The CPU's model name from /proc/cpuinfo ("cpu" when it says none).
std::string hostCpuName();

/// The GPUs a CUDA process started with this environment would see, as the
/// words CUDA_VISIBLE_DEVICES takes: that variable's entries when it is set
/// (none when it is empty), else "0" to "N-1" for the N GPUs the NVIDIA
/// driver lists under /proc/driver/nvidia/gpus; empty when there is no
/// driver.
std::vector<std::string> visibleGpus();

/// The tasks of this process that /proc lists: its threads (the calling one
/// included), and the child processes of the calling thread, zombies
/// included, whether or not they share its memory.
struct TaskCount {
  unsigned Threads = 0;
  unsigned Children = 0;
  bool operator==(const TaskCount &) const = default;
};

/// This process's tasks; nullopt where /proc cannot say (not mounted).
std::optional<TaskCount> countTasks();

} // namespace r3
