// Itanium C++ name demangling (the names nvcc and clang give kernels).
#pragma once

#include <string>

namespace r3 {

/// The demangled form of Mangled, or an empty string when it is not a mangled
/// C++ name (an extern "C" kernel, say).
std::string demangle(const std::string &Mangled);

} // namespace r3
