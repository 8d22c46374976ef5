// Kernel extraction: the part of a module that a kernel needs, as a module of
// its own. Used twice with one rule, so that names always agree: by the pass
// plugin at build time (the bitcode it embeds in an instrumented application)
// and by the variant compiler at replay time (a --source file compiled anew).
//
// The extracted module holds the kernel and every function it reaches (called
// or address-taken) that the module defines; functions defined elsewhere stay
// declarations, resolved at replay (libc, libm). Constant globals are copied
// with their initializers. Non-constant globals become external declarations:
// at replay they resolve to the recorded regions' addresses. Internal ones are
// renamed "__r3_internal.<name>" so that the name is stable and cannot clash.
// Clang's -O0 attributes (optnone, noinline) are dropped, so that a replay
// pipeline decides the optimization.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class GlobalVariable;
class Module;
} // namespace llvm

namespace r3 {

/// A non-constant global the extracted kernel uses.
struct ExtractedGlobal {
  std::string Name; ///< its name in the extracted module
  const llvm::GlobalVariable *Original = nullptr; ///< in the source module
  uint64_t Size = 0; ///< bytes (the DataLayout's alloc size)
};

struct ExtractedKernel {
  std::unique_ptr<llvm::Module> Module;
  std::vector<ExtractedGlobal> Globals;
};

/// Extracts the function named Kernel from M (M is not changed). Errors say
/// why the kernel cannot be recorded: not defined, variadic, a by-value
/// aggregate parameter, a thread-local global.
llvm::Expected<ExtractedKernel> extractKernel(const llvm::Module &M,
                                              llvm::StringRef Kernel);

/// The name an internal global gets in an extracted module.
std::string extractedGlobalName(const llvm::GlobalVariable &G);

} // namespace r3
