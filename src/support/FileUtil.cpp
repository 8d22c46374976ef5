// File helpers over POSIX: temporary names, fsync, atomic rename.
#include "support/FileUtil.h"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace r3 {

std::string temporaryPathFor(const std::string &Final) {
  return Final + ".tmp." + std::to_string(::getpid());
}

Error commitTemporary(const std::string &Path, const std::string &Final) {
  int Fd = ::open(Path.c_str(), O_RDONLY);
  if (Fd < 0)
    return errnoError(Path);
  int Rc = ::fsync(Fd);
  ::close(Fd);
  if (Rc != 0)
    return errnoError(Path + ": fsync");
  if (std::rename(Path.c_str(), Final.c_str()) != 0)
    return errnoError(Final + ": rename from " + Path);
  return Error::success();
}

Error writeFileAtomically(const std::string &Path, std::string_view Text) {
  std::string Tmp = temporaryPathFor(Path);
  std::FILE *F = std::fopen(Tmp.c_str(), "w");
  if (!F)
    return errnoError("cannot create '" + Path + "'");
  bool Ok = std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
  if (std::fclose(F) != 0 || !Ok) {
    Error E = errnoError("cannot write '" + Path + "'");
    std::remove(Tmp.c_str());
    return E;
  }
  if (Error E = commitTemporary(Tmp, Path)) {
    std::remove(Tmp.c_str());
    return E;
  }
  return Error::success();
}

Expected<std::string> readWholeFile(const std::string &Path,
                                    const std::string &What) {
  std::FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F)
    return errnoError(Path + ": cannot read the " + What);
  std::string Bytes;
  char Buf[65536];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof Buf, F)) > 0)
    Bytes.append(Buf, N);
  bool Failed = std::ferror(F);
  std::fclose(F);
  if (Failed)
    return makeError(Path, ": cannot read the ", What);
  return Bytes;
}

Expected<std::string> makeTemporaryFolder(const std::string &Stem) {
  const char *Tmp = std::getenv("TMPDIR");
  std::string Pattern =
      std::string(Tmp && *Tmp ? Tmp : "/tmp") + "/" + Stem + "-XXXXXX";
  if (!::mkdtemp(Pattern.data()))
    return errnoError("cannot create a temporary folder " + Pattern);
  return Pattern;
}

bool pathExists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0;
}

Error checkRegularFile(const std::string &Path, const std::string &What) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return makeError(What, " '", Path, "' does not exist");
  if (!S_ISREG(St.st_mode))
    return makeError(What, " '", Path, "' is not a regular file");
  return Error::success();
}

} // namespace r3
