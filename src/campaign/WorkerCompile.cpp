// A worker's compiles (WorkerCompile.h). CUDA compiles go to a compile
// server of this compiler's own (one per compile thread). A CUDA source is
// written once to a
// stable path under the compile cache (its name derived from its text), so
// that the front-end stage's cache key, which includes the path, is the
// same for every worker and every resume of a campaign.
#include "campaign/WorkerCompile.h"
#include "support/Clock.h"

#include "capture/CaptureReader.h"
#include "compile/host/HostJit.h"
#include "support/FileUtil.h"
#include "support/Frame.h"
#include "support/Paths.h"
#include "support/Sha256.h"
#include "support/StringUtil.h"
#ifdef R3_HAVE_CUDA
#include "compile/cuda/CompileServer.h"
#include "compile/cuda/CudaCompiler.h"
#include "compile/cuda/VariantOptions.h"
#else
namespace r3 {
class CompileServer {};
} // namespace r3
#endif

#include <atomic>
#include <chrono>
#include <unistd.h>
#include <filesystem>
#include <fstream>

namespace r3 {

namespace fs = std::filesystem;

std::string jobCodeKey(const WorkerJob &J) {
  const SourceJob &S = *J.Source;
  wire::MetaWriter Settings;
  encodeSettings(Settings, S.Settings);
  std::vector<std::string> Parts = {
      S.Text,
      S.FileName,
      join(S.Flags, "\n"),
      std::string(Settings.data().begin(), Settings.data().end()),
      J.Work.Kernel,
      J.Capture};
  if (S.Settings.specialized() && !J.Work.Launches.empty()) {
    Parts.push_back(std::to_string(J.Work.Launches[0]));
    if (J.Work.Block)
      for (uint32_t X : *J.Work.Block)
        Parts.push_back(std::to_string(X));
    Parts.push_back(J.Work.GridRule);
  }
  return sha256Hex(join(Parts, std::string_view("\0", 1)));
}

namespace {

/// The source's text at a path that depends only on the text and the name.
/// Several compile threads (and workers) may write it at once: each writes
/// a file of its own and renames it into place, and whoever renames last
/// replaces the same text.
Expected<std::string> stableSource(const SourceJob &S,
                                   const std::string &CacheDir) {
  fs::path Dir =
      fs::path(CacheDir) / "sources" / sha256Hex(S.Text).substr(0, 24);
  fs::path File = Dir / fs::path(S.FileName).filename();
  if (pathExists(File.string()))
    return File.string();
  std::error_code EC;
  fs::create_directories(Dir, EC);
  if (EC)
    return makeError(Dir.string(), ": cannot create the folder: ",
                     EC.message());
  static std::atomic<uint64_t> Serial{0};
  std::string Tmp = File.string() + ".tmp." + std::to_string(::getpid()) +
                    "." + std::to_string(++Serial);
  {
    std::ofstream Out(Tmp, std::ios::binary);
    Out << S.Text;
    if (!Out)
      return makeError(Tmp, ": cannot write the source");
  }
  fs::rename(Tmp, File, EC);
  if (EC) {
    fs::remove(Tmp, EC);
    if (!pathExists(File.string()))
      return makeError(File.string(), ": cannot write the source");
  }
  return File.string();
}
} // namespace

JobCompiler::JobCompiler(std::string Scratch) : Scratch(std::move(Scratch)) {}
JobCompiler::~JobCompiler() {
  std::lock_guard L(captureOpenLock());
  Captures.clear();
}

std::mutex &captureOpenLock() {
  static std::mutex M;
  return M;
}

Expected<const CaptureReader *> JobCompiler::capture(const std::string &Path) {
  auto It = Captures.find(Path);
  if (It == Captures.end()) {
    std::lock_guard L(captureOpenLock());
    std::unique_ptr<CaptureReader> R;
    R3_TRY(moveInto(CaptureReader::open(Path), R));
    It = Captures.emplace(Path, std::move(R)).first;
  }
  return It->second.get();
}

Expected<std::vector<uint8_t>> JobCompiler::hostBitcode(const WorkerJob &J) {
  const SourceJob &S = *J.Source;
  fs::path Dir = fs::path(Scratch) / jobCodeKey(J).substr(0, 16);
  std::error_code EC;
  fs::create_directories(Dir, EC);
  fs::path File = Dir / fs::path(S.FileName).filename();
  std::ofstream(File, std::ios::binary) << S.Text;
  auto Bitcode = compileHostSource(File.string(), J.Work.Kernel, S.Flags);
  fs::remove_all(Dir, EC);
  return Bitcode;
}

#ifdef R3_HAVE_CUDA
Expected<JobCompiler::CudaDone> JobCompiler::cudaCubin(const WorkerJob &J,
                                                      double &Ms) {
  const SourceJob &S = *J.Source;
  const CaptureReader *R = nullptr;
  R3_TRY(moveInto(capture(J.Capture), R));
  std::string CacheDir = defaultCacheDir(), Path;
  R3_TRY(moveInto(stableSource(S, CacheDir), Path));
  VariantLaunch L{R, J.Work.Launches.empty() ? 0 : J.Work.Launches[0],
                  J.Work.Block, J.Work.GridRule};
  CudaCompileOptions O;
  R3_TRY(moveInto(cudaCompileOptions({Path, S.Flags, J.Work.Kernel}, S.Settings,
                                     L, CacheDir),
                  O));
  // Through this thread's compile server, never a fork of this process
  // (CompileServer.h says why).
  if (!Server)
    Server = std::make_unique<CompileServer>();
  CudaCompiled C;
  R3_TRY(moveInto(Server->compile(O), C));
  Ms = C.Report.CompileMs;
  return CudaDone{std::move(C.Cubin), C.Report.ParamNames, C.Report.Spills,
                  C.Report.Pipeline, C.Report.CodegenOpt};
}
#else
Expected<JobCompiler::CudaDone> JobCompiler::cudaCubin(const WorkerJob &,
                                                      double &) {
  return Error::make("this r3 was built without the CUDA backend");
}
#endif

/// The host front end's key: the pipeline runs later, in the server.
static std::string hostKey(const WorkerJob &J) {
  const SourceJob &S = *J.Source;
  return sha256Hex(S.Text + '\0' + join(S.Flags, "\n") + '\0' +
                   J.Work.Kernel + '\0' + S.FileName);
}

JobCompiled JobCompiler::compile(WorkerJob &J) {
  JobCompiled Out;
  if (!J.Source)
    return Out;
  auto T0 = std::chrono::steady_clock::now();
  // Whole results are kept for a campaign's repeats (launch-only variants
  // of one source); the disk cache keeps the stages beyond this bound.
  if (HostCache.size() + CudaCache.size() > 2048) {
    HostCache.clear();
    CudaCache.clear();
  }
  std::string Key = J.Target == Backend::Host ? hostKey(J) : jobCodeKey(J);
  if (J.Target == Backend::Host) {
    auto It = HostCache.find(Key);
    if (It == HostCache.end()) {
      auto Bitcode = hostBitcode(J);
      Out.CompileMs = msSince(T0);
      if (!Bitcode) {
        Out.Failed = failedResult(FailureKind::CompileError,
                                  Bitcode.takeError().message());
        return Out;
      }
      It = HostCache.emplace(Key, std::move(*Bitcode)).first;
    }
    J.Work.Code = CodeKind::Bitcode;
    J.Work.Image = It->second;
    Out.CompileMs = msSince(T0);
    return Out;
  }
  auto It = CudaCache.find(Key);
  if (It == CudaCache.end()) {
    double Ms = 0;
    auto Done = cudaCubin(J, Ms);
    Out.CompileMs = msSince(T0);
    if (!Done) {
      Out.Failed = failedResult(FailureKind::CompileError,
                                Done.takeError().message());
      return Out;
    }
    It = CudaCache.emplace(Key, std::move(*Done)).first;
  }
  J.Work.Code = CodeKind::Cubin;
  J.Work.Image = It->second.Cubin;
  J.Work.ParamNames = It->second.ParamNames;
  if (It->second.Spills >= 0)
    Out.Spills = It->second.Spills;
  Out.Pipeline = It->second.Pipeline;
  Out.CodegenOpt = It->second.CodegenOpt;
  Out.CompileMs = msSince(T0);
  return Out;
}

} // namespace r3
