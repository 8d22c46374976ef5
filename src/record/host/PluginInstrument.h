// The code the pass plugin generates in an instrumented unit: the HostAbi.h
// descriptors as LLVM constants, the record-hook wrapper of each kernel and
// the constructor that registers the unit with the host runtime. Kept apart
// from the plugin's entry point (Plugin.cpp) so that what the runtime sees is
// one file's business.
#pragma once

#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace llvm {
class Function;
class GlobalVariable;
class Module;
} // namespace llvm

namespace r3 {

struct ExtractedGlobal;

/// What the plugin knows about one selected kernel before it changes the
/// module: everything is taken from the untouched module.
struct KernelToInstrument {
  llvm::Function *F = nullptr;
  llvm::SmallVector<char, 0> Bitcode; ///< the extracted module
  std::vector<ExtractedGlobal> Globals;
};

/// Instruments M: builds one r3_host_kernel descriptor per kernel, turns each
/// kernel into a wrapper that calls the record hooks around its body (moved
/// to "<name>.r3.body"), and adds an r3_host_unit listing the kernels and the
/// unit's global variables, registered by a constructor.
void instrumentUnit(llvm::Module &M, std::vector<KernelToInstrument> &Kernels);

/// Whether M was already instrumented (the pass runs at most once per unit).
bool isInstrumented(const llvm::Module &M);

} // namespace r3
