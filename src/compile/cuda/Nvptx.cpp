// The LLVM half of the CUDA compiler, in this process: the NVPTX target
// (registered once), the variant's pipeline run with the NVPTX TargetMachine
// so that its passes (NVVMReflect, the address-space inference) and its TTI
// take part, and PTX code generation at the codegen level. The target's CPU
// is sm_XX with no PTX feature forced: LLVM picks the lowest PTX ISA that
// supports it (7.8 for sm_90), which every CUDA 12/13 ptxas accepts.
#include "compile/Pipeline.h"
#include "compile/cuda/Stages.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace llvm;

namespace r3::cuda {

namespace {

constexpr const char *Triple = "nvptx64-nvidia-cuda";

void registerNvptx() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

r3::Error verify(const Module &M, const std::string &What) {
  std::string Message;
  raw_string_ostream OS(Message);
  if (!verifyModule(M, &OS))
    return r3::Error::success();
  return makeError(What, ": ", StringRef(Message).trim().str());
}

} // namespace

Expected<std::unique_ptr<TargetMachine>> nvptxMachine(int Major, int Minor,
                                                      int CodegenOpt) {
  registerNvptx();
  std::string Error;
  const Target *T = TargetRegistry::lookupTarget(Triple, Error);
  if (!T)
    return makeError("the NVPTX target is not available in this LLVM: ", Error);
  TargetOptions Options;
  std::unique_ptr<TargetMachine> TM(T->createTargetMachine(
      Triple, smName(Major, Minor), "", Options, std::nullopt, std::nullopt,
      codegenLevel(CodegenOpt).value_or(CodeGenOptLevel::Aggressive)));
  if (!TM)
    return makeError("creating the NVPTX target for ", smName(Major, Minor),
                     " failed");
  return TM;
}

r3::Error optimize(Module &M, const std::string &Pipeline, TargetMachine &TM) {
  M.setTargetTriple(Triple);
  M.setDataLayout(TM.createDataLayout());
  R3_TRY(runPassPipeline(M, Pipeline, &TM));
  return verify(M, "the IR after pipeline '" + Pipeline + "' is invalid");
}

r3::Error checkCudaPipeline(const std::string &Pipeline) {
  std::unique_ptr<TargetMachine> TM;
  R3_TRY(moveInto(nvptxMachine(9, 0, 3), TM));
  PassBuilder PB(TM.get());
  ModulePassManager MPM;
  if (llvm::Error E =
          PB.parsePassPipeline(MPM, withoutFixpointAborts(Pipeline)))
    return r3::Error::make(toString(std::move(E)))
        .context("pipeline '" + Pipeline + "'");
  return r3::Error::success();
}

Expected<std::string> emitPtx(Module &M, TargetMachine &TM) {
  SmallString<0> Ptx;
  raw_svector_ostream OS(Ptx);
  legacy::PassManager PM;
  if (TM.addPassesToEmitFile(PM, OS, nullptr, CodeGenFileType::AssemblyFile))
    return makeError("the NVPTX target cannot emit PTX");
  PM.run(M);
  return std::string(Ptx.str());
}

std::string irText(const Module &M) {
  std::string S;
  raw_string_ostream OS(S);
  M.print(OS, nullptr);
  return S;
}

} // namespace r3::cuda
