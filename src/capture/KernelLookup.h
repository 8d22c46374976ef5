// Finding what a user names in a capture: a kernel by any of its names, and
// one of its launches by its number. The one home of these rules: r3 replay,
// r3 compile, campaigns, r3 export and r3 run look kernels up here, and the
// variant compiler finds a kernel in a source file with the same rules.
//
// A kernel is named by, in this order (the first rule that matches decides):
//   1. its mangled name: _Z8jacobi2dPKfPfii
//   2. its demangled name: jacobi2d(float const*, float*, int, int)
//   3. that name without its parameters (and, for templates, its return
//      type): jacobi2d, ns::react, f<int>
//   4. that without the namespaces and classes, or the template arguments:
//      react (for ns::react), f (for f<int>)
// Rules 3 and 4 name a kernel only when one kernel has the name; several are
// an ambiguity, and the message lists them. A name nothing matches is an
// error with a "did you mean" (edit distance) or the list of kernels.
//
// A launch is numbered the way the application made it: launch N of a kernel
// is its (N+1)-th launch in the application, the number `r3 record --launch`
// takes and r3 inspect's launch column shows. "@N" names the capture's
// launch N (counted from 0 in the order recorded), whatever its kernel.
#pragma once

#include "capture/Capture.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace r3 {

class CaptureReader;

/// One kernel's names.
struct KernelName {
  std::string Mangled;
  std::string Demangled; ///< empty when Mangled is not a mangled C++ name
};

/// The names of kernels known by their mangled names (demangled here).
std::vector<KernelName> kernelNamesOf(const std::vector<std::string> &Mangled);

/// The name a definition uses: the demangled name without its namespace,
/// class, template arguments and parameters ("ns::k<int>(float*)" -> "k").
std::string baseName(const std::string &Demangled);

/// The index in Kernels of the kernel Given names (the rules above; of
/// kernels with the same mangled name, the first). Errors begin with Where
/// (a path) and say "in In" ("the capture", "the source").
Expected<uint32_t> lookupKernel(std::span<const KernelName> Kernels,
                                std::string_view Given, std::string_view Where,
                                std::string_view In);

/// What the lookups read of a capture: a CaptureReader's tables, or a
/// test's.
struct CaptureView {
  std::string_view Path;
  std::span<const KernelInfo> Kernels;
  std::span<const LaunchInfo> Launches;
};
CaptureView viewOf(const CaptureReader &R);

/// The capture's kernel that Given names. When several kernels share the
/// name (one kernel in several modules), the one with recorded launches;
/// several with launches cannot be told apart, which is an error.
Expected<uint32_t> findKernel(const CaptureView &C, std::string_view Given);
Expected<uint32_t> findKernel(const CaptureReader &R, std::string_view Given);

/// How a launch is numbered: the kernel's launch ordinal (N), or the
/// capture's launch index (@N).
enum class LaunchNumbering { Ordinal, CaptureIndex };

/// A launch as a user gives it: "3" or "@3".
struct LaunchRef {
  LaunchNumbering By = LaunchNumbering::Ordinal;
  uint64_t Number = 0;
};

/// Parses "N" or "@N"; none for anything else.
std::optional<LaunchRef> parseLaunchRef(std::string_view Text);
/// "3" or "@3".
std::string launchRefText(const LaunchRef &Ref);

/// The capture indices of kernel K's recorded launches, in capture order.
std::vector<uint32_t> launchesOf(const CaptureView &C, uint32_t K);

/// The capture index of kernel K's launch Ref names; an error saying which
/// launches of K the capture holds when it holds no such launch.
Expected<uint32_t> findLaunch(const CaptureView &C, uint32_t K, LaunchRef Ref);
Expected<uint32_t> findLaunch(const CaptureReader &R, uint32_t K,
                              LaunchRef Ref);
/// The same when no kernel is named: @N is any kernel's; an ordinal must be
/// a launch of one kernel only.
Expected<uint32_t> findLaunch(const CaptureView &C, LaunchRef Ref);

/// How messages name kernel K: its demangled name without parameters when
/// no other kernel of the capture has that name, else its full name.
std::string shownKernelName(const CaptureView &C, uint32_t K);
/// How messages name the capture's launch L where no kernel is implied:
/// "launch 2 of 'jacobi2d'".
std::string shownLaunchName(const CaptureView &C, uint32_t L);

} // namespace r3
