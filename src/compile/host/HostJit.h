// The host backend's variant compiler and loader: LLVM bitcode of an
// extracted kernel (Extract.h), a new-pass-manager pipeline, a codegen
// optimization level → machine code in this process, through LLVM ORC.
// It runs inside the host replay server, never in the coordinator: a pipeline
// that crashes LLVM takes only the server down.
#pragma once

#include "compile/Pipeline.h" // checkPipeline, withoutFixpointAborts
#include "support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace r3 {

struct HostCompileOptions {
  std::string Pipeline = "default<O2>"; ///< PassBuilder::parsePassPipeline text
  int CodegenOpt = 2;                   ///< 0-3, the backend's CodeGenOptLevel
};

struct HostCompileReport {
  double OptimizeMs = 0; ///< running the pipeline
  double CodegenMs = 0;  ///< machine code generation and linking
  double CompileMs = 0;  ///< the whole compile, parse to callable
  uint64_t InstructionsBefore = 0, InstructionsAfter = 0; ///< IR instructions
};

/// Calls the compiled kernel: loads each parameter with its IR type from
/// Args[i] (the slot layout of HostAbi.h), calls the kernel, and returns its
/// result in the low bytes of the return value (0 for void).
using HostEntry = uint64_t (*)(const uint64_t *Args);

/// An ORC JIT for this host. One thread at a time uses a HostJit (a replay
/// server has one); its entries stay callable until released or until the
/// HostJit is destroyed.
class HostJit {
public:
  /// Sets up the native target and a JIT whose undefined symbols resolve in
  /// this process.
  static Expected<std::unique_ptr<HostJit>> create();
  ~HostJit();

  /// Compiles the function Kernel of Bitcode. Globals maps the names of the
  /// module's external global declarations to their addresses; any other
  /// undefined symbol resolves in this process (libc, libm) or is an error
  /// naming it. Each call compiles into a fresh JITDylib; earlier entries stay
  /// valid until released.
  Expected<HostEntry> compile(std::span<const uint8_t> Bitcode,
                              const std::string &Kernel,
                              const std::map<std::string, uint64_t> &Globals,
                              const HostCompileOptions &Options,
                              HostCompileReport &Report);

  /// Frees the code of a compiled candidate (its JITDylib). Entry must come
  /// from compile() of this HostJit and must not be called afterwards; an
  /// unknown entry is an error.
  Error release(HostEntry Entry);

  /// How many compiled candidates are held (compiled and not released).
  size_t liveCandidates() const;

  struct Impl;

private:
  explicit HostJit(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

/// The -O level (0-3) the application was compiled with, from the module flag
/// "r3.opt-level" that extraction sets; 2 when the module has none. Replay's
/// default pipeline is default<O{this}>.
Expected<int> recordedOptLevel(std::span<const uint8_t> Bitcode);

/// Compiles a C or C++ source file (language from its extension) with clang-19
/// to unoptimized LLVM IR (-O2 -Xclang -disable-llvm-passes, so that the
/// replay pipeline decides), then extracts Kernel from it. Flags are extra
/// clang flags (-I, -D, -std=). A compile error carries clang's diagnostics.
Expected<std::vector<uint8_t>>
compileHostSource(const std::string &Path, const std::string &Kernel,
                  const std::vector<std::string> &Flags);

/// The clang-19 that compileHostSource runs: $R3_CLANG, else the clang of the
/// LLVM that r3 was built with, else clang-19 on PATH.
std::string hostClang();
/// clang's command line for a host source file as compileHostSource reads
/// it, without an action (the caller adds one: an AST dump).
Expected<std::vector<std::string>>
hostSyntaxArgv(const std::string &Path, const std::vector<std::string> &Flags);

} // namespace r3
