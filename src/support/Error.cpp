// Helpers of the error model that need the C library.
#include "support/Error.h"

#include <cerrno>
#include <cstring>

namespace r3 {

Error errnoError(const std::string &What) {
  int Saved = errno;
  return Error::make(What + ": " + std::strerror(Saved));
}

} // namespace r3
