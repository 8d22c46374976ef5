// What a campaign worker compiles: the source of a job into the code its
// candidate runs. On the host backend, the front end (clang-19 to bitcode;
// the pipeline runs in the replay server's JIT). On the CUDA backend, the
// whole variant compiler (front end, pipeline, NVPTX, nvJitLink; or NVRTC)
// in a forked child, so that a compiler that aborts is a compile_error and
// not a dead worker. The stages are cached on disk (the compile cache) and
// whole results in memory, so that a launch-only candidate compiles nothing.
#pragma once

#include "campaign/WorkerProtocol.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace r3 {

class CaptureReader;
class CompileServer;

/// Held while a worker's threads open a capture: HDF5 (a serial build) is
/// not thread-safe, and a worker's compile threads and its runner open
/// captures side by side.
std::mutex &captureOpenLock();

/// Everything that determines a job's code (J has a Source), as one
/// key: the source, flags, compiler settings, kernel and capture, and for a
/// specialized kernel the launch, block and grid rule whose values it folds
/// in. Jobs with one key share one compiled code.
std::string jobCodeKey(const WorkerJob &J);

/// What compiling a job gave beside its code.
struct JobCompiled {
  std::optional<CandidateResult> Failed; ///< a compile error, as the result
  double CompileMs = 0;
  std::optional<int64_t> Spills; ///< cuda: from the compile report
  /// cuda: the pipeline that ran (the default resolved; empty for the
  /// nvrtc and nvcc toolchains) and the codegen level; -1: nothing compiled.
  /// The replay server gets a cubin, so the result takes these from here.
  std::string Pipeline;
  int CodegenOpt = -1;
};

class JobCompiler {
public:
  /// Scratch: a folder this compiler may write (sources of host jobs).
  explicit JobCompiler(std::string Scratch);
  ~JobCompiler();

  /// Compiles J.Source into J.Work (its code and, on CUDA, the kernel's
  /// parameter names that grid rules may use).
  JobCompiled compile(WorkerJob &J);

private:
  struct CudaDone {
    std::vector<uint8_t> Cubin;
    std::vector<std::string> ParamNames;
    int64_t Spills = -1;
    std::string Pipeline;
    int CodegenOpt = -1;
  };
  Expected<std::vector<uint8_t>> hostBitcode(const WorkerJob &J);
  Expected<CudaDone> cudaCubin(const WorkerJob &J, double &Ms);
  Expected<const CaptureReader *> capture(const std::string &Path);

  std::string Scratch;
  std::map<std::string, std::vector<uint8_t>> HostCache;
  std::map<std::string, CudaDone> CudaCache;
  std::map<std::string, std::unique_ptr<CaptureReader>> Captures;
  std::unique_ptr<CompileServer> Server; ///< cuda: this thread's compiles
};

} // namespace r3
