// New-pass-manager pipelines as r3 runs them, for both backends: the text is
// parsed by PassBuilder::parsePassPipeline with the backend's TargetMachine,
// so that target passes and TTI-driven decisions (unrolling, vectorizing) see
// the real target. This header needs no LLVM include, so that the CLI can
// check a pipeline without pulling LLVM's headers in.
#pragma once

#include "support/Error.h"

#include <optional>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
enum class CodeGenOptLevel;
} // namespace llvm

namespace r3 {

/// Pipeline text as r3 runs it: every `instcombine` gets no-verify-fixpoint
/// unless it names verify-fixpoint, because LLVM 19's pipeline parser turns
/// on a check that aborts the process when one iteration is not enough.
std::string withoutFixpointAborts(const std::string &Pipeline);

/// Checks a pipeline string without running it; the error is LLVM's own
/// message with the text: `pipeline 'function(foo)': unknown function pass
/// 'foo'`.
Error checkPipeline(const std::string &Pipeline);

/// Runs Pipeline on M with TM's target passes and analyses (TM may be null).
/// A malformed pipeline is an error as checkPipeline words it.
Error runPassPipeline(llvm::Module &M, const std::string &Pipeline,
                      llvm::TargetMachine *TM);

/// A codegen level 0-3 as LLVM's (-O0 ... -O3); none outside that range.
std::optional<llvm::CodeGenOptLevel> codegenLevel(int Level);

} // namespace r3
