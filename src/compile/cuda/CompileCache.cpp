// The compile cache (CompileCache.h).
#include "compile/cuda/CompileCache.h"

#include "support/FileUtil.h"
#include "support/Sha256.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace r3 {

std::optional<std::string> readFileBytes(const std::string &Path) {
  auto Bytes = readWholeFile(Path, "file");
  return Bytes ? std::optional<std::string>(std::move(*Bytes)) : std::nullopt;
}

std::string CompileCache::pathOf(const std::string &Stage,
                                 const std::string &Key,
                                 const std::string &Part) const {
  return Dir + "/cuda/" + Stage + "/" + Key.substr(0, 2) + "/" + Key + "." +
         Part;
}

std::optional<std::map<std::string, std::string>>
CompileCache::lookup(const std::string &Stage, const std::string &Key,
                     const std::vector<std::string> &Parts) const {
  if (!enabled())
    return std::nullopt;
  std::map<std::string, std::string> Out;
  for (const std::string &Part : Parts) {
    auto Bytes = readFileBytes(pathOf(Stage, Key, Part));
    if (!Bytes)
      return std::nullopt;
    Out[Part] = std::move(*Bytes);
  }
  return Out;
}

Error CompileCache::store(
    const std::string &Stage, const std::string &Key,
    const std::map<std::string, std::string> &Parts) const {
  if (!enabled())
    return Error::success();
  std::error_code EC;
  fs::create_directories(fs::path(pathOf(Stage, Key, "")).parent_path(), EC);
  if (EC)
    return makeError("compile cache '", Dir,
                     "': creating a folder: ", EC.message());
  for (const auto &[Part, Bytes] : Parts)
    if (Error E = writeFileAtomically(pathOf(Stage, Key, Part), Bytes))
      return std::move(E).context("compile cache '" + Dir + "'");
  return Error::success();
}

namespace {
/// The SHA-256 of a file, remembered per (path, size, mtime, inode) for the
/// life of the process: a front-end lookup checks every header the source
/// includes (the CUDA runtime's headers are megabytes), and a campaign or a
/// replay of many candidates would hash them again for each.
Expected<std::string> fileDigest(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return makeError("cannot stat '", Path, "'");
  std::string Key = Path + "\n" + std::to_string(St.st_size) + " " +
                    std::to_string(St.st_mtim.tv_sec) + "." +
                    std::to_string(St.st_mtim.tv_nsec) + " " +
                    std::to_string(St.st_ino);
  static std::mutex Lock;
  static std::map<std::string, std::string> Known;
  {
    std::lock_guard<std::mutex> G(Lock);
    if (auto It = Known.find(Key); It != Known.end())
      return It->second;
  }
  auto Bytes = readFileBytes(Path);
  if (!Bytes)
    return makeError("cannot read '", Path, "'");
  std::string D = sha256Hex(*Bytes);
  std::lock_guard<std::mutex> G(Lock);
  Known[Key] = D;
  return D;
}
} // namespace

Expected<std::string>
CompileCache::manifestOf(const std::vector<std::string> &Files) {
  std::string Out;
  for (const std::string &F : Files) {
    std::string Path = fs::absolute(F).lexically_normal().string();
    auto Digest = fileDigest(Path);
    if (!Digest)
      return makeError("reading '", Path, "', a dependency of the source");
    Out += *Digest + " " + Path + "\n";
  }
  return Out;
}

bool CompileCache::manifestHolds(const std::string &Manifest) {
  std::istringstream In(Manifest);
  for (std::string Line; std::getline(In, Line);) {
    if (Line.size() < 66 || Line[64] != ' ')
      return false;
    auto Digest = fileDigest(Line.substr(65));
    if (!Digest || *Digest != Line.substr(0, 64))
      return false;
  }
  return true;
}

} // namespace r3
