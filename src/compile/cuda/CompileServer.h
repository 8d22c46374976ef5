// A compile server: a process of its own (`r3 __compile-server IN OUT`,
// spawned and exec'd, so it starts with one thread and none of its parent's
// locks) that compiles CUDA variants on request, each in a child it forks
// (compileCudaKernelIsolated: an LLVM abort or a crash ends the child, not
// the server). A campaign worker gives each of its compile threads one:
// forking the worker itself, whose other threads may hold any lock at that
// instant (the allocator's, a stream's), could leave the child waiting on a
// lock no thread will release.
#pragma once

#include "compile/cuda/CudaCompiler.h"

#include <memory>
#include <sys/types.h>

namespace r3 {

class CompileServer {
public:
  ~CompileServer();
  /// Compiles O in the server, starting it (again) when it is not running.
  /// The compiler's failures are errors with its message; a server that
  /// dies is one too, and the next call starts another.
  Expected<CudaCompiled> compile(const CudaCompileOptions &O,
                                 double TimeoutSeconds = 300);

private:
  Error start();
  void stop();
  pid_t Pid = -1;
  int ToServer = -1, FromServer = -1;
};

/// The server's loop on the given descriptors, until its input ends.
Error runCompileServer(int In, int Out);

} // namespace r3
