// Writes the binary seed corpora of the protocol fuzz targets with r3's own
// encoders, so that the seeds follow the protocols when they change:
//   r3-fuzz-make-seeds CORPUS_DIR   (writes CORPUS_DIR/<target>/<name>)
// The first byte of each seed is the target's selector (see each target).
#include "campaign/WorkerProtocol.h"
#include "record/Messages.h"
#include "replay/ServerProtocol.h"
#include "support/Frame.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace r3;
using namespace r3::wire;

namespace {
namespace fs = std::filesystem;

void put(const fs::path &Dir, const std::string &Name, uint8_t Selector,
         const std::vector<uint8_t> &Bytes) {
  fs::create_directories(Dir);
  std::ofstream Out(Dir / Name, std::ios::binary);
  Out.put(static_cast<char>(Selector));
  Out.write(reinterpret_cast<const char *>(Bytes.data()),
            static_cast<std::streamsize>(Bytes.size()));
}

/// A whole frame of the shared codec: header, meta, bulk.
void frame(std::vector<uint8_t> &Out, uint32_t Type, const MetaWriter &M,
           const std::vector<uint8_t> &Bulk = {}) {
  auto H = wire::encodeHeader(
      {Type, static_cast<uint32_t>(M.data().size()), Bulk.size()});
  Out.insert(Out.end(), H.begin(), H.end());
  Out.insert(Out.end(), M.data().begin(), M.data().end());
  Out.insert(Out.end(), Bulk.begin(), Bulk.end());
}

void recordStream(const fs::path &Dir) {
  std::vector<uint8_t> S;
  HelloMsg Hello;
  Hello.Source = Backend::Host;
  Hello.Pid = 42;
  frame(S, uint32_t(Type::Hello), encode(Hello));
  frame(S, uint32_t(Type::Module), encode(ModuleMsg{7, ModuleKind::Bitcode}),
        {'B', 'C', 0xc0, 0xde});
  KernelMsg K;
  K.Id = 9;
  K.ModuleId = 7;
  K.Info.Name = "scale";
  K.Info.Params = {{0, 8}, {8, 4}};
  frame(S, uint32_t(Type::Kernel), encode(K));
  LaunchMsg L;
  L.Id = 1;
  L.KernelId = 9;
  L.Info.Params = {0, 0x10, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0};
  frame(S, uint32_t(Type::Launch), encode(L));
  RegionMsg R;
  R.LaunchId = 1;
  R.Info.Base = 0x1000;
  R.Info.Size = 16;
  frame(S, uint32_t(Type::Region), encode(R), std::vector<uint8_t>(16, 1));
  R.Side = Phase::Post;
  frame(S, uint32_t(Type::Region), encode(R), std::vector<uint8_t>(16, 2));
  frame(S, uint32_t(Type::Duration), encode(DurationMsg{9, 1, 1500}));
  frame(S, uint32_t(Type::Warning), encodeWarning("a warning"));
  frame(S, uint32_t(Type::Done), MetaWriter());
  put(Dir, "recording", 0, S);

  std::vector<uint8_t> List;
  frame(List, uint32_t(Type::Hello), encode(Hello));
  KernelStatsMsg St;
  St.Name = "_Z5scalePfi";
  St.Demangled = "scale(float*, int)";
  St.Launches = 3;
  St.TotalNs = 4500;
  frame(List, uint32_t(Type::KernelStats), encode(St));
  St.Name = "_Z4fillPf";
  St.Untunable = "launched from a CUDA graph, which r3 does not record yet";
  frame(List, uint32_t(Type::KernelStats), encode(St));
  frame(List, uint32_t(Type::Done), MetaWriter());
  put(Dir, "list", 1, List);
}

Candidate candidate() {
  Candidate C;
  C.Kernel = "scale";
  C.Launches = {0, 2};
  C.Pipeline = "default<O2>";
  C.Block = Dim3{128, 1, 1};
  C.GridRule = "x=ceil(arg1 / block_x)";
  C.ParamNames = {"p", "n"};
  return C;
}

void serverProtocol(const fs::path &Dir) {
  put(Dir, "open", 0, encode(OpenMsg{"cap.h5", "/tmp/s", 1 << 30, 60}).data());
  put(Dir, "opened", 1,
      encode(OpenedMsg{Backend::Host, "rlimits", "cpu"}).data());
  put(Dir, "running", 2, encode(RunningMsg{}).data());
  put(Dir, "error", 3, encodeError("cannot map region 2").data());
  put(Dir, "candidate", 4, encodeCandidate(candidate()).data());
  CandidateResult Res;
  Res.Verified = true;
  Res.TimesNs = {1000, 1100, 990};
  Res.Pipeline = "default<O2>";
  put(Dir, "result", 5, encode(Res).data());
  put(Dir, "candidate-again", 6, encodeCandidate(candidate()).data());
  std::vector<uint8_t> Frames;
  frame(Frames, uint32_t(ServerFrame::Open),
        encode(OpenMsg{"c.h5", "/s", 0, 1}));
  frame(Frames, uint32_t(ServerFrame::Evaluate), encodeCandidate(candidate()),
        {1, 2, 3});
  frame(Frames, uint32_t(ServerFrame::Tick), MetaWriter());
  put(Dir, "frames", 7, Frames);
}

void workerProtocol(const fs::path &Dir) {
  WorkerJob J;
  J.Id = 3;
  J.Capture = "cap.h5";
  J.Work = candidate();
  SourceJob Src;
  Src.Text = "void scale(float *p, int n) {}";
  Src.FileName = "scale.c";
  Src.Flags = {"-DN=4", "-I/inc"};
  J.Source = Src;
  WorkerResult R;
  R.Id = 3;
  R.Result.Verified = true;
  R.Result.TimesNs = {5, 6};
  R.Device = "cpu";
  put(Dir, "hello", 1, encodeHello(WorkerHello{"cpu", 77}));
  put(Dir, "job", 1, encodeJob(J));
  put(Dir, "result", 1, encodeResult(R));
  put(Dir, "lost", 1, encodeLost("rank 2 died"));
  std::vector<uint8_t> Stream = encodeHello(WorkerHello{"gpu", 1});
  for (const auto &M : {encodeJob(J), encodeResult(R), encodeShutdown()})
    Stream.insert(Stream.end(), M.begin(), M.end());
  put(Dir, "stream", 0, Stream);
}
} // namespace

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    std::fprintf(stderr, "usage: r3-fuzz-make-seeds CORPUS_DIR\n");
    return 2;
  }
  fs::path Root = Argv[1];
  recordStream(Root / "record-stream");
  serverProtocol(Root / "server-protocol");
  workerProtocol(Root / "worker-protocol");
  return 0;
}
