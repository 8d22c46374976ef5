// The host JIT (HostJit.h): bitcode → verified module → the replay pipeline
// (new pass manager, with a TargetMachine for this host so that TTI-driven
// passes such as the vectorizer and the unroller see the real target) → the
// entry trampoline → ORC LLJIT codegen at the requested level, into a fresh
// JITDylib per candidate so that candidates never see each other's symbols.
//
// Functions keep the "target-cpu"/"target-features" attributes clang gave
// them. An application built without -march gets the x86-64 baseline without
// FMA; compiling its kernel for the JIT host's full feature set would fuse
// multiplies and adds (llvm.fmuladd) that the application computed unfused,
// and a replay would no longer reproduce the recorded floating-point results.
#include "compile/host/HostJit.h"
#include "support/Clock.h"

#include "compile/Pipeline.h"
#include "compile/host/HostTrampoline.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/IRCompileLayer.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <array>
#include <chrono>
#include <cstring>
#include <mutex>

using namespace llvm;

namespace r3 {

namespace {

/// The module flag through which compile() tells the codegen stage its level.
constexpr StringLiteral CodegenOptFlag = "r3.codegen-opt";

r3::Error fromLlvm(llvm::Error E) {
  return r3::Error::make(toString(std::move(E)));
}

using Clock = std::chrono::steady_clock;

uint64_t countInstructions(const Module &M) {
  uint64_t N = 0;
  for (const Function &F : M)
    N += F.getInstructionCount();
  return N;
}

int moduleFlagInt(const Module &M, StringRef Flag, int Default) {
  if (auto *C = mdconst::extract_or_null<ConstantInt>(M.getModuleFlag(Flag)))
    return static_cast<int>(C->getSExtValue());
  return Default;
}

/// LLJIT's compile stage, compiling each module at the level its
/// CodegenOptFlag names. One TargetMachine per level, made on first use.
class LevelledCompiler : public orc::IRCompileLayer::IRCompiler {
public:
  explicit LevelledCompiler(orc::JITTargetMachineBuilder JTMB)
      : IRCompiler(orc::irManglingOptionsFromTargetOptions(JTMB.getOptions())),
        JTMB(std::move(JTMB)) {}

  llvm::Expected<std::unique_ptr<MemoryBuffer>> operator()(Module &M) override {
    int Level = moduleFlagInt(M, CodegenOptFlag, 2);
    std::lock_guard<std::mutex> Lock(Mutex);
    auto &TM = Machines[Level & 3];
    if (!TM) {
      orc::JITTargetMachineBuilder B = JTMB;
      B.setCodeGenOptLevel(*codegenLevel(Level & 3));
      auto Made = B.createTargetMachine();
      if (!Made)
        return Made.takeError();
      TM = std::move(*Made);
    }
    return orc::SimpleCompiler(*TM)(M);
  }

private:
  orc::JITTargetMachineBuilder JTMB;
  std::mutex Mutex;
  std::array<std::unique_ptr<TargetMachine>, 4> Machines;
};

Expected<std::unique_ptr<Module>> parseModule(std::span<const uint8_t> Bitcode,
                                              LLVMContext &Ctx) {
  MemoryBufferRef Buffer(
      StringRef(reinterpret_cast<const char *>(Bitcode.data()), Bitcode.size()),
      "kernel bitcode");
  auto M = parseBitcodeFile(Buffer, Ctx);
  if (!M)
    return fromLlvm(M.takeError()).context("reading kernel bitcode");
  return std::move(*M);
}

r3::Error verify(const Module &M, const char *What) {
  std::string Message;
  raw_string_ostream OS(Message);
  if (!verifyModule(M, &OS))
    return r3::Error::success();
  StringRef Trimmed = StringRef(Message).trim();
  return makeError(What, ": ", Trimmed.str());
}

/// Undefined symbols used by M that are not in Globals: resolved by the
/// process, or an error naming the first that is not.
r3::Error checkProcessSymbols(const Module &M,
                              const std::map<std::string, uint64_t> &Globals) {
  for (const GlobalValue &G : M.global_values()) {
    if (!G.isDeclaration() || G.use_empty() || G.hasExternalWeakLinkage() ||
        Globals.count(G.getName().str()))
      continue; // weak references may stay unresolved (null)
    if (auto *F = dyn_cast<Function>(&G); F && F->isIntrinsic())
      continue;
    std::string Name = G.getName().str();
    if (sys::DynamicLibrary::SearchForAddressOfSymbol(Name))
      continue;
    if (isa<Function>(G))
      return makeError("undefined symbol '", Name,
                       "' (defined outside the kernel's translation unit?)");
    return makeError("undefined global '", Name,
                     "': no recorded address for it, and this process does "
                     "not define it");
  }
  return r3::Error::success();
}

/// Declarations may be far from the JIT's code: reach them through the GOT
/// and PLT rather than through 32-bit PC-relative relocations.
void clearDsoLocalDeclarations(Module &M) {
  for (GlobalValue &G : M.global_values())
    if (G.isDeclaration())
      G.setDSOLocal(false);
}

void prepareTarget(Module &M, const DataLayout &DL, const Triple &T) {
  if (M.getTargetTriple().empty())
    M.setTargetTriple(T.str());
  if (M.getDataLayout().isDefault())
    M.setDataLayout(DL);
}

} // namespace

struct HostJit::Impl {
  /// The last error ORC reported out of band. Declared first, so that it
  /// outlives the JIT, which may report while it shuts down.
  std::string Reported;
  std::unique_ptr<orc::LLJIT> J;
  std::unique_ptr<TargetMachine> PipelineTM; ///< TTI for the pipeline
  std::map<uint64_t, orc::JITDylib *> Live;  ///< entry → its JITDylib
  uint64_t Compiled = 0;

  Expected<std::unique_ptr<Module>> optimize(std::unique_ptr<Module> M,
                                             const std::string &Kernel,
                                             const HostCompileOptions &Options,
                                             HostCompileReport &Report);
  Expected<HostEntry> load(std::unique_ptr<Module> M,
                           std::unique_ptr<LLVMContext> Ctx,
                           const std::map<std::string, uint64_t> &Globals,
                           HostCompileReport &Report);
  r3::Error defineGlobals(orc::JITDylib &JD, const Module &M,
                          const std::map<std::string, uint64_t> &Globals);
  r3::Error lookupError(llvm::Error E);
};

HostJit::HostJit(std::unique_ptr<Impl> I) : P(std::move(I)) {}
HostJit::~HostJit() = default;

Expected<std::unique_ptr<HostJit>> HostJit::create() {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  InitializeNativeTargetAsmParser();
  // Undefined symbols are checked against this process's exports.
  sys::DynamicLibrary::LoadLibraryPermanently(nullptr);
  auto JTMB = orc::JITTargetMachineBuilder::detectHost();
  if (!JTMB)
    return fromLlvm(JTMB.takeError()).context("detecting the host target");
  auto I = std::make_unique<Impl>();
  auto TM = JTMB->createTargetMachine();
  if (!TM)
    return fromLlvm(TM.takeError()).context("creating the host target");
  I->PipelineTM = std::move(*TM);
  auto J = orc::LLJITBuilder()
               .setJITTargetMachineBuilder(*JTMB)
               .setCompileFunctionCreator(
                   [](orc::JITTargetMachineBuilder B)
                       -> llvm::Expected<
                           std::unique_ptr<orc::IRCompileLayer::IRCompiler>> {
                     return std::make_unique<LevelledCompiler>(std::move(B));
                   })
               .create();
  if (!J)
    return fromLlvm(J.takeError()).context("creating the host JIT");
  I->J = std::move(*J);
  Impl *Raw = I.get();
  I->J->getExecutionSession().setErrorReporter(
      [Raw](llvm::Error E) { Raw->Reported = toString(std::move(E)); });
  return std::unique_ptr<HostJit>(new HostJit(std::move(I)));
}

Expected<std::unique_ptr<Module>>
HostJit::Impl::optimize(std::unique_ptr<Module> M, const std::string &Kernel,
                        const HostCompileOptions &Options,
                        HostCompileReport &Report) {
  Function *K = M->getFunction(Kernel);
  if (!K || K->isDeclaration())
    return makeError("kernel '", Kernel, "' is not defined in its bitcode");
  // The kernel must survive the pipeline, whatever its linkage was.
  if (K->hasLocalLinkage())
    K->setLinkage(GlobalValue::ExternalLinkage);
  prepareTarget(*M, J->getDataLayout(), J->getTargetTriple());
  Report.InstructionsBefore = countInstructions(*M);
  auto Start = Clock::now();
  R3_TRY(runPassPipeline(*M, Options.Pipeline, PipelineTM.get()));
  Report.OptimizeMs = msSince(Start);
  Report.InstructionsAfter = countInstructions(*M);
  K = M->getFunction(Kernel);
  if (!K || K->isDeclaration())
    return makeError("pipeline '", Options.Pipeline, "' removed the kernel '",
                     Kernel, "'");
  if (llvm::Error E = addEntryTrampoline(*M, *K))
    return fromLlvm(std::move(E));
  clearDsoLocalDeclarations(*M);
  R3_TRY(verify(
      *M, ("pipeline '" + Options.Pipeline + "' produced invalid IR").c_str()));
  M->addModuleFlag(Module::Error, CodegenOptFlag, Options.CodegenOpt);
  return M;
}

r3::Error
HostJit::Impl::defineGlobals(orc::JITDylib &JD, const Module &M,
                             const std::map<std::string, uint64_t> &Globals) {
  orc::SymbolMap Symbols;
  for (const GlobalValue &G : M.global_values()) {
    auto It = Globals.find(G.getName().str());
    if (!G.isDeclaration() || It == Globals.end())
      continue;
    Symbols[J->mangleAndIntern(It->first)] = {orc::ExecutorAddr(It->second),
                                              JITSymbolFlags::Exported};
  }
  if (Symbols.empty())
    return r3::Error::success();
  if (llvm::Error E = JD.define(orc::absoluteSymbols(std::move(Symbols))))
    return fromLlvm(std::move(E)).context("defining the recorded globals");
  return r3::Error::success();
}

r3::Error HostJit::Impl::lookupError(llvm::Error E) {
  std::string Message = toString(std::move(E));
  if (!Reported.empty())
    Message = Reported; // the cause; the lookup only says what it missed
  Reported.clear();
  return makeError("code generation failed: ", Message);
}

Expected<HostEntry>
HostJit::Impl::load(std::unique_ptr<Module> M, std::unique_ptr<LLVMContext> Ctx,
                    const std::map<std::string, uint64_t> &Globals,
                    HostCompileReport &Report) {
  R3_TRY(checkProcessSymbols(*M, Globals));
  auto JD = J->createJITDylib("r3.candidate." + std::to_string(++Compiled));
  if (!JD)
    return fromLlvm(JD.takeError());
  auto Discard = [&](r3::Error Err) -> r3::Error {
    consumeError(J->getExecutionSession().removeJITDylib(*JD));
    return Err;
  };
  if (r3::Error Err = defineGlobals(*JD, *M, Globals))
    return Discard(std::move(Err));
  auto Start = Clock::now();
  Reported.clear();
  if (llvm::Error E = J->addIRModule(
          *JD, orc::ThreadSafeModule(std::move(M), std::move(Ctx))))
    return Discard(fromLlvm(std::move(E)));
  auto Addr = J->lookup(*JD, HostEntryName);
  if (!Addr)
    return Discard(lookupError(Addr.takeError()));
  Report.CodegenMs = msSince(Start);
  Live[Addr->getValue()] = &*JD;
  return Addr->toPtr<HostEntry>();
}

Expected<HostEntry>
HostJit::compile(std::span<const uint8_t> Bitcode, const std::string &Kernel,
                 const std::map<std::string, uint64_t> &Globals,
                 const HostCompileOptions &Options, HostCompileReport &Report) {
  auto Start = Clock::now();
  Report = HostCompileReport();
  if (!codegenLevel(Options.CodegenOpt))
    return makeError("codegen optimization level ", Options.CodegenOpt,
                     ": expected 0, 1, 2 or 3");
  auto Ctx = std::make_unique<LLVMContext>();
  std::unique_ptr<Module> M;
  R3_TRY(moveInto(parseModule(Bitcode, *Ctx), M));
  R3_TRY(verify(*M, ("bitcode of '" + Kernel + "' is not valid IR").c_str()));
  R3_TRY(moveInto(P->optimize(std::move(M), Kernel, Options, Report), M));
  HostEntry Entry = nullptr;
  R3_TRY(
      moveInto(P->load(std::move(M), std::move(Ctx), Globals, Report), Entry));
  Report.CompileMs = msSince(Start);
  return Entry;
}

Error HostJit::release(HostEntry Entry) {
  auto It = P->Live.find(reinterpret_cast<uint64_t>(Entry));
  if (It == P->Live.end())
    return makeError("releasing a host kernel entry at 0x",
                     utohexstr(reinterpret_cast<uint64_t>(Entry)),
                     ": expected an entry compiled by this JIT and not yet "
                     "released");
  orc::JITDylib *JD = It->second;
  P->Live.erase(It);
  if (llvm::Error E = P->J->getExecutionSession().removeJITDylib(*JD))
    return fromLlvm(std::move(E)).context("releasing a host kernel");
  return Error::success();
}

size_t HostJit::liveCandidates() const { return P->Live.size(); }

Expected<int> recordedOptLevel(std::span<const uint8_t> Bitcode) {
  LLVMContext Ctx;
  std::unique_ptr<Module> M;
  R3_TRY(moveInto(parseModule(Bitcode, Ctx), M));
  int Level = moduleFlagInt(*M, "r3.opt-level", 2);
  if (Level < 0 || Level > 3)
    return makeError("module flag 'r3.opt-level' is ", Level,
                     ", expected 0, 1, 2 or 3");
  return Level;
}

} // namespace r3
