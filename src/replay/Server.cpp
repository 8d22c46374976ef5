// The replay server loop. It runs in a child of the client: the sandbox goes
// up when Open arrives, before the capture is read, and the device is chosen
// by the capture's backend.
#include "replay/Server.h"

#include "capture/CaptureReader.h"
#include "compile/Isolate.h"
#include "replay/FakeDevice.h"
#include "replay/Sandbox.h"
#include "replay/ServerClient.h"
#include "replay/ServerProtocol.h"
#include "replay/host/HostDevice.h"
#ifdef R3_HAVE_CUDA
#include "replay/cuda/CudaDevice.h"
#endif

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sys/prctl.h>
#include <unistd.h>

namespace r3 {

namespace {
int ResultFd = -1;

/// An LLVM fatal error while the host JIT compiles a candidate (a pipeline
/// LLVM accepts and then cannot run): the candidate's compile_error, sent
/// before the server dies of it.
void reportFatal(const char *Message) {
  if (ResultFd < 0)
    return;
  CandidateResult R = failedResult(FailureKind::CompileError, Message);
  R.DeviceLost = true; // this server is ending: the client starts another
  (void)sendFrame(ResultFd, ServerFrame::Result, encode(R));
}

class Server {
public:
  Server(int In, int Out) : In(In), Out(Out) {}
  Error serve();

private:
  Error handle(const ServerFrameData &F);
  Error open(const ServerFrameData &F);
  Error evaluate(const ServerFrameData &F);
  Error reply(const Error &E) {
    return sendFrame(Out, ServerFrame::Error, encodeError(E.message()));
  }

  int In, Out;
  std::unique_ptr<ReplayDevice> Device;
  std::string Sandbox;
  bool Lost = false; ///< the device is unusable: exit after the result
};

Expected<std::unique_ptr<ReplayDevice>>
openDevice(std::unique_ptr<CaptureReader> R) {
  if (const char *Script = std::getenv("R3_REPLAY_FAKE_DEVICE");
      Script && R->header().Source == Backend::Cuda)
    return openFakeDevice(std::move(R), Script);
  if (R->header().Source == Backend::Cuda) {
#ifdef R3_HAVE_CUDA
    return openCudaDevice(std::move(R));
#else
    return makeError(R->path(), ": a CUDA capture; this r3 was built without "
                                "the CUDA backend");
#endif
  }
  return openHostDevice(std::move(R));
}

/// The capture is opened (read only) before the sandbox goes up, since the
/// sandbox depends on the backend: the CUDA driver reserves far more address
/// space than any limit would allow and writes to its device nodes.
Error Server::open(const ServerFrameData &F) {
  auto M = decodeOpen(F.Meta);
  if (!M)
    return reply(M.takeError());
  if (Device)
    return reply(Error::make("replay server: the capture is already open"));
  std::error_code EC;
  std::string Path = std::filesystem::absolute(M->CapturePath, EC).string();
  auto R = CaptureReader::open(Path);
  if (!R)
    return reply(R.takeError());
  Backend Source = (*R)->header().Source;
  SandboxSettings Settings{
      M->ScratchDir, M->AddressSpaceBytes, M->CpuSeconds, {}};
  if (Source == Backend::Cuda) {
    Settings.AddressSpaceBytes = 0;
    Settings.WritablePaths = {"/dev"};
  }
  // The CUDA driver starts before the sandbox (it opens and maps its device
  // nodes, may start helpers, and fails under Landlock); the candidates' code
  // only runs after it is up.
  if (Source == Backend::Cuda) {
    auto D = openDevice(std::move(*R));
    if (!D)
      return reply(D.takeError());
    Device = std::move(*D);
  }
  auto S = enterSandbox(Settings);
  if (!S)
    return reply(S.takeError());
  Sandbox = *S;
  if (!Device) {
    auto D = openDevice(std::move(*R));
    if (!D)
      return reply(D.takeError());
    Device = std::move(*D);
  }
  return sendFrame(Out, ServerFrame::Opened,
                   encode(OpenedMsg{Source, Sandbox, Device->name()}));
}

Error Server::evaluate(const ServerFrameData &F) {
  if (!Device)
    return reply(Error::make("replay server: evaluate before open"));
  auto C = decodeCandidate(F.Meta, F.Bulk);
  if (!C)
    return reply(C.takeError());
  // A fresh CPU budget: generous, the client's wall-clock deadline is the
  // real limit; this one catches a server the client lost.
  R3_TRY(extendCpuLimit(2 * runBudgetSeconds(*C) + 300));
  RunHooks Hooks;
  Hooks.Running = [&](const CompiledInfo &Info) {
    return sendFrame(Out, ServerFrame::Running, encode(Info));
  };
  // A client that is gone cannot be told; the next Result fails to send.
  Hooks.Tick = [&] {
    (void)sendFrame(Out, ServerFrame::Tick, wire::MetaWriter());
  };
  auto R = Device->evaluate(*C, Hooks);
  if (!R)
    return reply(R.takeError());
  R->Sandbox = Sandbox;
  Lost = R->DeviceLost;
  return sendFrame(Out, ServerFrame::Result, encode(*R));
}

Error Server::handle(const ServerFrameData &F) {
  switch (F.Kind) {
  case ServerFrame::Open:
    return open(F);
  case ServerFrame::Evaluate:
    return evaluate(F);
  default:
    return reply(makeError("replay server: unexpected ",
                           serverFrameName(F.Kind), " frame from the client"));
  }
}

Error Server::serve() {
  for (;;) {
    ServerFrameData F;
    auto S = readFrame(In, std::nullopt, F);
    if (!S)
      return S.takeError();
    if (*S == ReadStatus::End)
      return Error::success();
    R3_TRY(handle(F));
    // Leave at once: the device's teardown on a poisoned context is no use.
    if (Lost)
      ::_exit(0);
  }
}
} // namespace

Error runReplayServer(int In, int Out) {
  // A server whose client is killed (kill -9 of a campaign) must not run on:
  // it dies with its client.
  pid_t Parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != Parent)
    return Error::success();
  ResultFd = Out;
  onLlvmFatalError(reportFatal);
  return Server(In, Out).serve();
}

} // namespace r3
