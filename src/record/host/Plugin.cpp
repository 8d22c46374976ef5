// The r3 pass plugin for clang-19 (`r3 host-flags` prints the flags that load
// it). At the start of the pipeline, before any optimization and at every -O
// level, it selects the kernels (by -r3-kernel=REGEX over mangled and
// demangled names, or by __attribute__((annotate("r3_kernel")))), extracts
// each from the untouched module, and only then instruments the unit
// (PluginInstrument.cpp). It uses the LLVM inside clang: the plugin links no
// LLVM of its own.
#include "compile/Extract.h"
#include "r3/Version.h"
#include "record/host/PluginInstrument.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <regex>

using namespace llvm;

namespace {

cl::list<std::string> KernelPatterns(
    "r3-kernel",
    cl::desc("r3: instrument the functions whose mangled or demangled name "
             "contains a match of this ECMAScript regular expression"),
    cl::value_desc("regex"));

const char *const KernelAnnotation = "r3_kernel";

/// The compiled -r3-kernel patterns, or an error naming a bad one.
Expected<std::vector<std::regex>> compilePatterns() {
  std::vector<std::regex> Out;
  for (const std::string &P : KernelPatterns) {
    try {
      Out.emplace_back(P, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error &E) {
      return createStringError(inconvertibleErrorCode(),
                               "-r3-kernel '" + P +
                                   "': not a valid regular expression (" +
                                   E.what() + ")");
    }
  }
  return Out;
}

bool matchesName(const Function &F, const std::vector<std::regex> &Patterns) {
  std::string Mangled = F.getName().str();
  std::string Demangled = demangle(Mangled);
  for (const std::regex &P : Patterns)
    if (std::regex_search(Mangled, P) ||
        (Demangled != Mangled && std::regex_search(Demangled, P)))
      return true;
  return false;
}

/// The functions carrying __attribute__((annotate("r3_kernel"))).
SmallPtrSet<const Function *, 8> annotatedFunctions(const Module &M) {
  SmallPtrSet<const Function *, 8> Out;
  const GlobalVariable *A = M.getNamedGlobal("llvm.global.annotations");
  if (!A || !A->hasInitializer())
    return Out;
  const auto *Entries = dyn_cast<ConstantArray>(A->getInitializer());
  for (unsigned I = 0; Entries && I < Entries->getNumOperands(); ++I) {
    const auto *E = dyn_cast<ConstantStruct>(Entries->getOperand(I));
    if (!E || E->getNumOperands() < 2)
      continue;
    const auto *F = dyn_cast<Function>(E->getOperand(0)->stripPointerCasts());
    const auto *S =
        dyn_cast<GlobalVariable>(E->getOperand(1)->stripPointerCasts());
    const auto *Text =
        S && S->hasInitializer()
            ? dyn_cast<ConstantDataSequential>(S->getInitializer())
            : nullptr;
    if (F && Text && Text->isCString() &&
        Text->getAsCString() == KernelAnnotation)
      Out.insert(F);
  }
  return Out;
}

/// Defined functions this unit instruments. An available_externally body is
/// not emitted here; the unit that defines it instruments it.
std::vector<Function *> selectKernels(Module &M,
                                      const std::vector<std::regex> &Patterns) {
  SmallPtrSet<const Function *, 8> Annotated = annotatedFunctions(M);
  std::vector<Function *> Out;
  for (Function &F : M.functions())
    if (!F.isDeclaration() && !F.hasAvailableExternallyLinkage() &&
        (Annotated.contains(&F) || matchesName(F, Patterns)))
      Out.push_back(&F);
  return Out;
}

void report(LLVMContext &Ctx, Error E) {
  handleAllErrors(std::move(E), [&Ctx](const ErrorInfoBase &Info) {
    Ctx.emitError("r3: " + Info.message());
  });
}

/// Extracts and serializes one kernel from the untouched module.
Expected<r3::KernelToInstrument> prepare(const Module &M, Function &F,
                                         unsigned OptLevel) {
  auto X = r3::extractKernel(M, F.getName(), OptLevel);
  if (!X)
    return X.takeError();
  r3::KernelToInstrument K;
  K.F = &F;
  raw_svector_ostream OS(K.Bitcode);
  WriteBitcodeToFile(*X->Module, OS);
  K.Globals = std::move(X->Globals);
  return K;
}

class InstrumentPass : public PassInfoMixin<InstrumentPass> {
public:
  explicit InstrumentPass(unsigned OptLevel) : OptLevel(OptLevel) {}

  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    if (r3::isInstrumented(M))
      return PreservedAnalyses::all();
    auto Patterns = compilePatterns();
    if (!Patterns) {
      report(M.getContext(), Patterns.takeError());
      return PreservedAnalyses::all();
    }
    std::vector<r3::KernelToInstrument> Kernels;
    bool Failed = false;
    for (Function *F : selectKernels(M, *Patterns)) {
      auto K = prepare(M, *F, OptLevel);
      if (!K) {
        report(M.getContext(), K.takeError());
        Failed = true;
        continue;
      }
      Kernels.push_back(std::move(*K));
    }
    if (Failed)
      return PreservedAnalyses::all();
    // A unit without kernels is registered too: a kernel elsewhere may be
    // passed a pointer into one of its globals.
    r3::instrumentUnit(M, Kernels);
    return PreservedAnalyses::none();
  }

  static bool isRequired() { return true; }

private:
  unsigned OptLevel;
};

void registerCallbacks(PassBuilder &PB) {
  PB.registerPipelineStartEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel Level) {
        MPM.addPass(InstrumentPass(Level.getSpeedupLevel()));
      });
}

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "r3-host-plugin", r3::Version,
          registerCallbacks};
}
