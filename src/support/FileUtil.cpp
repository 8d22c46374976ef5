// File helpers over POSIX: temporary names, fsync, atomic rename.
#include "support/FileUtil.h"

#include <cstdio>
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

bool pathExists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0;
}

} // namespace r3
