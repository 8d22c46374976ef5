// r3's data and cache directories (see Paths.h).
#include "support/Paths.h"

#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace r3 {

namespace {
const char *envValue(const char *Name) {
  const char *V = std::getenv(Name);
  return V && *V ? V : nullptr;
}
} // namespace

std::string selfExecutable() {
  std::error_code EC;
  fs::path Exe = fs::read_symlink("/proc/self/exe", EC);
  return EC ? std::string() : Exe.string();
}

std::string shareDir() {
  if (const char *Env = envValue("R3_SHARE_DIR"))
    return Env;
  fs::path Exe = selfExecutable();
  return (Exe.parent_path() / ".." / "share" / "r3").lexically_normal();
}

std::string defaultCacheDir() {
  if (const char *Env = envValue("R3_CACHE_DIR"))
    return Env;
  if (const char *Xdg = envValue("XDG_CACHE_HOME"))
    return (fs::path(Xdg) / "r3").string();
  if (const char *Home = envValue("HOME"))
    return (fs::path(Home) / ".cache" / "r3").string();
  return "";
}

} // namespace r3
