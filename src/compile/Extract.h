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
// pipeline decides the optimization. The module flag "r3.opt-level" (i32)
// records the -O level the application was compiled with, so that a replay's
// default pipeline is default<O{that}>.
//
// Kernel signatures are restricted to what fits the argument slots of
// HostAbi.h: integers of at most 64 bits, float, double and pointers, passed
// as such (no byval, inalloca, preallocated or sret).
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class DataLayout;
class Function;
class GlobalVariable;
class Module;
class Type;
} // namespace llvm

namespace r3 {

/// Which rule an extraction follows. Host: the kernel must fit the argument
/// slots, and non-constant globals become declarations (replay maps them to
/// recorded addresses). Device (CUDA): any signature (byval aggregates too),
/// and every global keeps its definition and name, since the cubin defines
/// it and replay looks it up by name.
enum class ExtractFor { Host, Device };

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
/// aggregate parameter, a parameter or return type that does not fit a slot,
/// a thread-local global; each reads "kernel 'K' cannot be recorded: ...".
/// OptLevel (0-3) becomes the module flag "r3.opt-level"; without it, M's own
/// "r3.opt-level" flag is kept if it has one, else 0 when the kernel is
/// optnone (clang -O0) and 2 otherwise.
llvm::Expected<ExtractedKernel>
extractKernel(const llvm::Module &M, llvm::StringRef Kernel,
              std::optional<unsigned> OptLevel = std::nullopt);

/// Extracts the CUDA kernel Kernel of M with the Device rule: the kernel keeps
/// external linkage, its callees become internal, its nvvm.annotations
/// entries are kept, and anything it does not reach is dropped.
llvm::Expected<std::unique_ptr<llvm::Module>>
extractDeviceKernel(const llvm::Module &M, llvm::StringRef Kernel);

/// How a value travels in an argument slot (the R3_HOST_PARAM_* values).
enum class SlotKind : uint32_t { Pointer = 1, Integer = 2, Float = 3 };

struct SlotType {
  SlotKind Kind;
  uint32_t Size; ///< bytes of the value (8 for a pointer, 4 for a float)
};

/// The slot encoding of values of type T, or nothing when T does not fit one
/// (an aggregate, a vector, an integer wider than 64 bits, half, fp128).
std::optional<SlotType> slotType(const llvm::Type &T,
                                 const llvm::DataLayout &DL);

/// The name of F's parameter I (0-based) in the source: the IR argument's
/// name, else the debug info's, else "arg<I+1>" (matching the 1-based
/// position that messages use).
std::string parameterName(const llvm::Function &F, unsigned I);

/// The name an internal global gets in an extracted module.
std::string extractedGlobalName(const llvm::GlobalVariable &G);

} // namespace r3
