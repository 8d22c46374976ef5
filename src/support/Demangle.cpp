// Demangling through the C++ runtime's __cxa_demangle.
#include "support/Demangle.h"

#include <cstdlib>
#include <cxxabi.h>

namespace r3 {

std::string demangle(const std::string &Mangled) {
  // __cxa_demangle also decodes bare type encodings: an extern "C" kernel
  // named "f" would come back as "float". Only "_Z" names are functions.
  if (Mangled.compare(0, 2, "_Z") != 0)
    return "";
  int Status = 0;
  char *Out = abi::__cxa_demangle(Mangled.c_str(), nullptr, nullptr, &Status);
  std::string Result = Status == 0 && Out ? Out : "";
  std::free(Out);
  return Result;
}

} // namespace r3
