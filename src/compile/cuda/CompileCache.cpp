// The compile cache (CompileCache.h).
#include "compile/cuda/CompileCache.h"

#include "support/FileUtil.h"
#include "support/Sha256.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace r3 {

std::optional<std::string> readFileBytes(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return std::nullopt;
  std::ostringstream S;
  S << In.rdbuf();
  return S.str();
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

Expected<std::string>
CompileCache::manifestOf(const std::vector<std::string> &Files) {
  std::string Out;
  for (const std::string &F : Files) {
    std::string Path = fs::absolute(F).lexically_normal().string();
    auto Bytes = readFileBytes(Path);
    if (!Bytes)
      return makeError("reading '", Path, "', a dependency of the source");
    Out += sha256Hex(*Bytes) + " " + Path + "\n";
  }
  return Out;
}

bool CompileCache::manifestHolds(const std::string &Manifest) {
  std::istringstream In(Manifest);
  for (std::string Line; std::getline(In, Line);) {
    if (Line.size() < 66 || Line[64] != ' ')
      return false;
    auto Bytes = readFileBytes(Line.substr(65));
    if (!Bytes || sha256Hex(*Bytes) != Line.substr(0, 64))
      return false;
  }
  return true;
}

} // namespace r3
