// The stages of the CUDA variant compiler (CudaCompiler.h), one file each:
// Frontend (clang-19 device-only → IR, kernel lookup, extraction), Specialize
// (recorded values, launch bounds and register limits on the IR), Nvptx (the
// pipeline and PTX code generation in this process), Link (nvJitLink: PTX →
// cubin and its resource report), Nvrtc (the second toolchain). Internal to
// src/compile/cuda; CudaCompiler.cpp strings them together with the cache.
#pragma once

#include "compile/cuda/CudaCompiler.h"

#include <memory>
#include <functional>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace r3::cuda {

/// "sm_90" for 9.0.
std::string smName(int Major, int Minor);

// --- Frontend.cpp ---

/// What clang produced for a source: unextracted bitcode and the files it
/// read (the source and every header, from its -MD dependency file).
struct FrontendOutput {
  std::string Bitcode;
  std::vector<std::string> Dependencies;
};

/// Compiles O.SourcePath device-only to LLVM bitcode (no LLVM passes).
Expected<FrontendOutput> runFrontend(const CudaCompileOptions &O);

/// A description of the front end for the cache key: the clang that runs,
/// its size and modification time, the toolkit, the shim, its command line.
std::string frontendIdentity(const CudaCompileOptions &O);

/// The CUDA toolkit's root: $R3_CUDA_PATH, else the one r3 was built with.
std::string toolkitDir();

/// The files a Make dependency file (clang's or nvcc's -MD) names.
std::vector<std::string> dependenciesOf(const std::string &DepFile);

/// What a compiler run as a child made: its output file's bytes, the files
/// its dependency file names, and what it printed.
struct ChildCompile {
  std::string Output;
  std::vector<std::string> Dependencies;
  std::string Printed;
};

/// The one way a compiler runs as a child (clang's front end, nvcc): the
/// command line Argv gives for a temporary output file (named ...Suffix)
/// and dependency file, run without a shell; a failure quotes the
/// compiler's diagnostics, an empty output is an error naming What.
Expected<ChildCompile> runCompilerChild(
    const std::string &Source, const char *Suffix, const char *What,
    const std::function<std::vector<std::string>(const std::string &Output,
                                                 const std::string &Deps)>
        &Argv);

/// A compiler binary's identity for cache keys: "Name=PATH;size=N;mtime=T".
std::string toolIdentity(const char *Name, const std::string &Path);

// --- Nvcc.cpp ---

/// What nvcc made of a source: the cubin of the whole file, the kernel
/// resolved among its entries, ptxas's report, the files it read.
struct NvccOutput {
  std::vector<uint8_t> Cubin;
  std::string Kernel, Log;
  std::vector<std::string> Dependencies;
};

/// Compiles O.SourcePath with nvcc -cubin for the capture's architecture,
/// with O.Flags (the application's) and the nvcc options of O.
Expected<NvccOutput> compileWithNvcc(const CudaCompileOptions &O);

/// nvcc's path and version, for cache keys.
std::string nvccIdentity();

/// Parses bitcode into Ctx.
Expected<std::unique_ptr<llvm::Module>> parseBitcode(const std::string &Bytes,
                                                     llvm::LLVMContext &Ctx,
                                                     const std::string &What);

/// The mangled name of the kernel Given names among M's kernels, by the
/// rules of capture/KernelLookup.h (mangled, demangled, or a bare name when
/// only one kernel has it); an ambiguity or "did you mean" otherwise.
Expected<std::string> resolveKernel(const llvm::Module &M,
                                    const std::string &Given,
                                    const std::string &File);

/// resolveKernel over a list of mangled kernel names.
Expected<std::string> resolveKernelName(const std::vector<std::string> &Kernels,
                                        const std::string &Given,
                                        const std::string &File);

/// M reduced to the kernel Name and what it reaches.
Expected<std::unique_ptr<llvm::Module>> extractCuda(const llvm::Module &M,
                                                    const std::string &Name);

/// The names of the kernel's parameters in the source, when known.
std::vector<std::string> parameterNames(const llvm::Module &M,
                                        const std::string &Kernel);

// --- Specialize.cpp ---

/// Replaces scalar parameters (Which.SpecializeArgs) and/or ntid/nctaid
/// reads (Which.SpecializeDims) with S's recorded values.
Error specialize(llvm::Module &M, const std::string &Kernel,
                 const CompileSettings &Which, const Specialization &S);

/// Sets maxntidx/minctasm/maxnreg in !nvvm.annotations for the kernel.
void applyBounds(llvm::Module &M, const std::string &Kernel,
                 const std::optional<LaunchBoundsSpec> &Bounds,
                 uint32_t MaxRegisters); ///< 0: no maxnreg

/// A canonical text of what specialization folds in, for cache keys.
std::string specializationKey(const CudaCompileOptions &O);

// --- Nvptx.cpp ---

/// The NVPTX target machine for sm_Major.Minor at CodegenOpt (0-3).
Expected<std::unique_ptr<llvm::TargetMachine>>
nvptxMachine(int Major, int Minor, int CodegenOpt);

/// Runs Pipeline on M with TM's passes; the error names the pipeline.
Error optimize(llvm::Module &M, const std::string &Pipeline,
               llvm::TargetMachine &TM);

/// Checks a pipeline against the NVPTX target's passes without running it.
Error checkCudaPipeline(const std::string &Pipeline);

/// PTX for M.
Expected<std::string> emitPtx(llvm::Module &M, llvm::TargetMachine &TM);

/// Textual IR.
std::string irText(const llvm::Module &M);

// --- Link.cpp ---

struct LinkOutput {
  std::vector<uint8_t> Cubin;
  std::string Log; ///< nvJitLink's info log (ptxas -v lines)
};

/// PTX → cubin with nvJitLink.
Expected<LinkOutput> linkPtx(const std::string &Ptx,
                             const CudaCompileOptions &O);

/// Fills registers, spills, shared and local bytes of Report from Log, else
/// from the cubin's ELF sections.
void readResources(const std::string &Log, const std::vector<uint8_t> &Cubin,
                   CudaCompileReport &Report);

/// Log without trailing white space.
std::string trimmedLog(const std::string &Log);

/// nvJitLink's version, for cache keys.
std::string linkerIdentity();

// --- Nvrtc.cpp ---

struct NvrtcOutput {
  std::string Ptx;
  std::string Kernel; ///< the lowered (mangled) name
  std::string Log;
};

/// Compiles O.SourcePath with NVRTC to PTX for O's architecture.
Expected<NvrtcOutput> compileWithNvrtc(const CudaCompileOptions &O);

/// PTX with .maxntid/.minnctapersm/.maxnreg directives for Kernel's entry
/// (what the NVPTX backend writes for the annotations, for NVRTC's PTX).
std::string withPtxBounds(const std::string &Ptx, const std::string &Kernel,
                          const std::optional<LaunchBoundsSpec> &Bounds,
                          uint32_t MaxRegisters);

/// NVRTC's version, for cache keys.
std::string nvrtcIdentity();

} // namespace r3::cuda
