// The entry trampoline of a compiled host kernel: one signature for every
// kernel, so that the replay server calls any of them through one function
// pointer type (HostEntry) with the argument slots the recorder captured.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace r3 {

/// The name of the trampoline in a compiled module.
inline constexpr llvm::StringLiteral HostEntryName = "__r3_entry";

/// Adds `i64 @__r3_entry(ptr %args)` to M: loads parameter i of Kernel with
/// its IR type from %args + 8*i, calls Kernel and returns its result widened
/// to i64 (integers zero-extended, floating point as its bits, pointers as
/// addresses, 0 for void). Fails for a parameter or result that does not fit
/// an 8-byte slot.
llvm::Error addEntryTrampoline(llvm::Module &M, llvm::Function &Kernel);

} // namespace r3
