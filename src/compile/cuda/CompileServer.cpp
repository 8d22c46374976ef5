// The compile server and its client (CompileServer.h). Requests and replies
// are frames of r3's codec (support/Frame.h): a request's meta fields are
// the compile options; a reply is the compiled result's bytes (the same
// encoding the isolated compile's child uses) or an error message.
#include "compile/cuda/CompileServer.h"

#include "support/Frame.h"
#include "support/Process.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace r3 {

namespace {
enum : uint32_t { Request = 201, Reply = 202, Failure = 203 };

/// What each end's frames may claim, checked before anything is read into
/// a buffer (support/Frame.h). A request's meta holds the options (flags,
/// a parameter buffer of a few KiB), its bulk the timeout; a reply's bulk
/// is the compiled result, its meta a compiler's message.
constexpr wire::FrameLimits RequestLimits{Request, Request, 16u << 20, 8};
constexpr wire::FrameLimits ReplyLimits{Reply, Failure, 64u << 20, 4ull << 30};

wire::MetaWriter encodeOptions(const CudaCompileOptions &O) {
  wire::MetaWriter W;
  W.str(O.SourcePath).strs(O.Flags);
  W.str(O.Kernel).i64(O.ComputeMajor).i64(O.ComputeMinor);
  encodeSettings(W, O.Settings);
  W.u32(O.Specialize.has_value());
  if (const auto &S = O.Specialize) {
    W.u32(static_cast<uint32_t>(S->Layout.size()));
    for (const ParamInfo &P : S->Layout)
      W.u64(P.Offset).u64(P.Size);
    W.bytes(S->Params);
    for (const Dim3 &D : {S->Grid, S->Block})
      W.u32(D[0]).u32(D[1]).u32(D[2]);
  }
  W.str(O.CacheDir);
  return W;
}

Expected<CudaCompileOptions> decodeOptions(std::span<const uint8_t> Meta) {
  wire::MetaReader R(Meta);
  CudaCompileOptions O;
  O.SourcePath = R.str();
  O.Flags = R.strs();
  O.Kernel = R.str();
  O.ComputeMajor = static_cast<int>(R.i64());
  O.ComputeMinor = static_cast<int>(R.i64());
  O.Settings = decodeSettings(R);
  if (R.u32()) {
    Specialization S;
    S.Layout.resize(R.count(2 * sizeof(uint64_t)));
    for (ParamInfo &P : S.Layout) {
      P.Offset = R.u64();
      P.Size = R.u64();
    }
    S.Params = R.bytes();
    for (Dim3 *D : {&S.Grid, &S.Block})
      for (uint32_t &X : *D)
        X = R.u32();
    O.Specialize = std::move(S);
  }
  O.CacheDir = R.str();
  R3_TRY(R.finish("compile request"));
  return O;
}

} // namespace

Error runCompileServer(int In, int Out) {
  ::signal(SIGINT, SIG_IGN); // the worker decides when the server ends
  ::prctl(PR_SET_PDEATHSIG, SIGKILL); // and a worker killed takes it along
  for (;;) {
    std::vector<uint8_t> Meta, Bulk;
    auto Header =
        wire::readFrame(In, RequestLimits, "compile server", Meta, Bulk);
    if (!Header)
      return Header.takeError(); // a broken stream: nothing follows it
    if (!*Header)
      return Error::success(); // the worker is gone: so are we
    double Timeout = 300;
    std::memcpy(&Timeout, Bulk.data(), std::min<size_t>(Bulk.size(), 8));
    auto O = decodeOptions(Meta);
    auto C = O ? compileCudaKernelIsolated(*O, Timeout)
               : Expected<CudaCompiled>(O.takeError());
    Error E = C ? wire::writeFrame(Out, Reply, wire::MetaWriter(),
                                   serializeCompiled(*C))
                : [&] {
                    wire::MetaWriter W;
                    W.str(C.error().message());
                    return wire::writeFrame(Out, Failure, W);
                  }();
    if (E)
      return Error::success();
  }
}

CompileServer::~CompileServer() { stop(); }

void CompileServer::stop() {
  if (ToServer >= 0)
    ::close(ToServer);
  if (FromServer >= 0)
    ::close(FromServer);
  ToServer = FromServer = -1;
  if (Pid > 0) {
    ::kill(Pid, SIGKILL);
    int Status;
    ::waitpid(Pid, &Status, 0);
  }
  Pid = -1;
}

Error CompileServer::start() {
  auto C = spawnPiped({"/proc/self/exe", "__compile-server", "@IN@", "@OUT@"});
  if (!C)
    return makeError("compile server: ", C.error().message());
  Pid = C->Pid;
  ToServer = C->ToChild;
  FromServer = C->FromChild;
  return Error::success();
}

Expected<CudaCompiled> CompileServer::compile(const CudaCompileOptions &O,
                                              double TimeoutSeconds) {
  if (Pid < 0)
    R3_TRY(start());
  uint8_t Timeout[8];
  std::memcpy(Timeout, &TimeoutSeconds, 8);
  if (Error E = wire::writeFrame(ToServer, Request, encodeOptions(O),
                                 Timeout)) {
    stop();
    return makeError("compile server: ", E.message());
  }
  std::vector<uint8_t> Meta, Bulk;
  auto Header =
      wire::readFrame(FromServer, ReplyLimits, "compile server", Meta, Bulk);
  if (!Header || !*Header) {
    stop(); // the next compile starts another
    return makeError("the compile server died: ",
                     Header ? "it closed its end of the pipe"
                            : Header.error().message());
  }
  if ((*Header)->Type == Reply)
    return deserializeCompiled(Bulk);
  wire::MetaReader R(Meta);
  std::string Message = R.str();
  return Error::make(Message);
}

} // namespace r3
