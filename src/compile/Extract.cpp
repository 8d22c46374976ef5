// Kernel extraction (Extract.h). The reachable set is computed first, by a
// worklist over the kernel's instructions and the constants they use; then
// CloneModule copies the definitions of that set and declares everything
// else, and a clean-up pass gives each copied value the linkage Extract.h
// promises and deletes the declarations nothing uses. The rule lives in one
// place because the pass plugin (build time) and the variant compiler
// (replay time) must agree on every name.
#include "compile/Extract.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DebugProgramInstruction.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalAlias.h"
#include "llvm/IR/GlobalIFunc.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace llvm;

namespace r3 {

namespace {

Error refusal(StringRef Kernel, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(),
                           "kernel '" + Kernel +
                               "' cannot be recorded: " + Why);
}

std::string describeParam(const Function &F, unsigned I) {
  return "parameter " + std::to_string(I + 1) + " ('" + parameterName(F, I) +
         "')";
}

std::string typeText(const Type &T) {
  std::string S;
  raw_string_ostream OS(S);
  T.print(OS);
  return S;
}

const char *const SlotTypes =
    "an integer of at most 64 bits, a float, a double or a pointer";

/// The parameter attribute that passes an aggregate in memory, if any.
std::optional<StringRef> inMemoryAttribute(const Function &F, unsigned I) {
  static const Attribute::AttrKind Kinds[] = {
      Attribute::ByVal, Attribute::InAlloca, Attribute::Preallocated};
  for (Attribute::AttrKind K : Kinds)
    if (F.hasParamAttribute(I, K))
      return Attribute::getNameFromAttrKind(K);
  return std::nullopt;
}

Error checkParam(const Function &F, unsigned I) {
  if (F.hasParamAttribute(I, Attribute::StructRet))
    return refusal(F.getName(), "it returns an aggregate in memory (sret); "
                                "return it through a pointer parameter "
                                "instead");
  if (auto Attr = inMemoryAttribute(F, I))
    return refusal(F.getName(), describeParam(F, I) +
                                    " is an aggregate passed in memory (" +
                                    *Attr + "); pass a pointer to it instead");
  const Type &T = *F.getArg(I)->getType();
  if (!slotType(T, F.getParent()->getDataLayout()))
    return refusal(F.getName(), describeParam(F, I) + " has type " +
                                    typeText(T) + ", expected " + SlotTypes);
  return Error::success();
}

Error checkSignature(const Function &F) {
  if (F.isVarArg())
    return refusal(F.getName(), "it is variadic");
  for (unsigned I = 0; I < F.arg_size(); ++I)
    if (Error E = checkParam(F, I))
      return E;
  const Type &R = *F.getReturnType();
  if (!R.isVoidTy() && !slotType(R, F.getParent()->getDataLayout()))
    return refusal(F.getName(), "it returns " + typeText(R) +
                                    ", expected void, " + SlotTypes);
  return Error::success();
}

/// The values an extracted kernel needs, in discovery order.
class Reachability {
public:
  explicit Reachability(const Function &Kernel,
                        ExtractFor For = ExtractFor::Host)
      : Kernel(Kernel), For(For) {}

  Error run() {
    add(&Kernel);
    while (!Work.empty()) {
      const GlobalValue *G = Work.pop_back_val();
      if (Error E = visit(*G))
        return E;
    }
    return Error::success();
  }

  /// Whether CloneModule copies G's definition.
  bool copiesDefinition(const GlobalValue *G) const {
    if (!Reached.contains(G))
      return false;
    if (const auto *V = dyn_cast<GlobalVariable>(G))
      return For == ExtractFor::Device ? V->hasInitializer()
                                       : copiesInitializer(*V);
    return true;
  }

  static bool copiesInitializer(const GlobalVariable &V) {
    return V.isConstant() && V.hasInitializer();
  }

  const SmallSetVector<const GlobalValue *, 32> &reached() const {
    return Reached;
  }

private:
  void add(const GlobalValue *G) {
    if (Reached.insert(G))
      Work.push_back(G);
  }

  Error visit(const GlobalValue &G) {
    if (const auto *F = dyn_cast<Function>(&G))
      return visitFunction(*F);
    if (const auto *V = dyn_cast<GlobalVariable>(&G)) {
      if (For == ExtractFor::Device) {
        if (V->hasInitializer())
          visitConstant(V->getInitializer());
        return Error::success();
      }
      if (V->isThreadLocal())
        return refusal(Kernel.getName(), "it uses the thread-local variable '" +
                                             V->getName() +
                                             "', which r3 does not record");
      if (copiesInitializer(*V))
        visitConstant(V->getInitializer());
      return Error::success();
    }
    if (const auto *A = dyn_cast<GlobalAlias>(&G))
      visitConstant(A->getAliasee());
    if (const auto *I = dyn_cast<GlobalIFunc>(&G))
      visitConstant(I->getResolver());
    return Error::success();
  }

  Error visitFunction(const Function &F) {
    if (F.isDeclaration())
      return Error::success();
    for (const Use &U : F.operands()) // personality, prefix, prologue
      visitConstant(cast<Constant>(U.get()));
    for (const Instruction &I : instructions(F))
      for (const Use &U : I.operands())
        if (const auto *C = dyn_cast<Constant>(U.get()))
          visitConstant(C);
    return Error::success();
  }

  void visitConstant(const Constant *C) {
    if (!C || !Constants.insert(C).second)
      return;
    if (const auto *G = dyn_cast<GlobalValue>(C)) {
      add(G);
      return;
    }
    for (const Use &U : C->operands())
      if (const auto *Op = dyn_cast<Constant>(U.get()))
        visitConstant(Op);
  }

  const Function &Kernel;
  ExtractFor For;
  SmallSetVector<const GlobalValue *, 32> Reached;
  SmallVector<const GlobalValue *, 32> Work;
  SmallPtrSet<const Constant *, 32> Constants;
};

/// Clang marks every function optnone and noinline at -O0; a replay
/// pipeline must be free to optimize, so both go. A noinline without optnone
/// is the user's and stays.
void dropO0Attributes(Function &F) {
  if (!F.hasFnAttribute(Attribute::OptimizeNone))
    return;
  F.removeFnAttr(Attribute::OptimizeNone);
  F.removeFnAttr(Attribute::NoInline);
}

void makeDeclarationResolvable(GlobalValue &G) {
  // A declaration resolves at replay to a recorded address or a library
  // symbol, which may be anywhere: never assume it is near the code.
  G.setDSOLocal(false);
  G.setVisibility(GlobalValue::DefaultVisibility);
  G.setLinkage(GlobalValue::ExternalLinkage);
}

void fixFunction(Function &F, const Function *Kernel) {
  F.setComdat(nullptr);
  if (F.isDeclaration()) {
    makeDeclarationResolvable(F);
    return;
  }
  dropO0Attributes(F);
  if (&F == Kernel) {
    F.setLinkage(GlobalValue::ExternalLinkage);
    F.setVisibility(GlobalValue::DefaultVisibility);
    F.setDLLStorageClass(GlobalValue::DefaultStorageClass);
  } else {
    F.setLinkage(GlobalValue::InternalLinkage);
  }
}

void fixVariable(GlobalVariable &V, const GlobalVariable &Original) {
  V.setComdat(nullptr);
  if (V.hasInitializer()) {
    V.setLinkage(GlobalValue::PrivateLinkage);
    return;
  }
  if (Original.hasLocalLinkage())
    V.setName(extractedGlobalName(Original));
  V.setSection("");
  V.setPartition("");
  makeDeclarationResolvable(V);
}

void eraseUnusedDeclarations(Module &M) {
  for (Function &F : make_early_inc_range(M.functions()))
    if (F.isDeclaration() && F.use_empty())
      F.eraseFromParent();
  for (GlobalVariable &V : make_early_inc_range(M.globals()))
    if (V.isDeclaration() && V.use_empty())
      V.eraseFromParent();
}

unsigned defaultOptLevel(const Module &M, const Function &Kernel) {
  if (auto *Flag = mdconst::extract_or_null<ConstantInt>(
          M.getModuleFlag("r3.opt-level")))
    return Flag->getZExtValue();
  return Kernel.hasFnAttribute(Attribute::OptimizeNone) ? 0 : 2;
}

Error verify(const Module &M, StringRef Kernel) {
  std::string Msg;
  raw_string_ostream OS(Msg);
  if (!verifyModule(M, &OS))
    return Error::success();
  return createStringError(inconvertibleErrorCode(),
                           "internal error: the module extracted for kernel '" +
                               Kernel + "' is invalid: " + OS.str());
}

Expected<const Function *> findKernel(const Module &M, StringRef Kernel) {
  const Function *F = M.getFunction(Kernel);
  if (!F || F->isDeclaration())
    return createStringError(
        inconvertibleErrorCode(),
        "kernel '" + Kernel + "' cannot be recorded: it is not defined in '" +
            M.getSourceFileName() + "'" + (F ? " (only declared)" : ""));
  if (Error E = checkSignature(*F))
    return E;
  return F;
}

} // namespace

std::optional<SlotType> slotType(const Type &T, const DataLayout &DL) {
  if (T.isPointerTy())
    return SlotType{SlotKind::Pointer, static_cast<uint32_t>(DL.getPointerSize(
                                           T.getPointerAddressSpace()))};
  if (T.isIntegerTy() && T.getIntegerBitWidth() <= 64)
    return SlotType{SlotKind::Integer, (T.getIntegerBitWidth() + 7) / 8};
  if (T.isFloatTy())
    return SlotType{SlotKind::Float, 4};
  if (T.isDoubleTy())
    return SlotType{SlotKind::Float, 8};
  return std::nullopt;
}

namespace {
/// The DILocalVariable of F's parameter I, from the subprogram's retained
/// nodes (optimized builds) or the debug records of the body (-O0).
const DILocalVariable *debugParameter(const Function &F, unsigned I) {
  auto Matches = [I](const DILocalVariable *V) {
    return V && V->isParameter() && V->getArg() == I + 1;
  };
  if (const DISubprogram *SP = F.getSubprogram())
    for (const DINode *N : SP->getRetainedNodes())
      if (const auto *V = dyn_cast<DILocalVariable>(N); Matches(V))
        return V;
  for (const Instruction &Inst : instructions(F)) {
    for (const DbgVariableRecord &R : filterDbgVars(Inst.getDbgRecordRange()))
      if (Matches(R.getVariable()))
        return R.getVariable();
    if (const auto *D = dyn_cast<DbgVariableIntrinsic>(&Inst);
        D && Matches(D->getVariable()))
      return D->getVariable();
  }
  return nullptr;
}
} // namespace

std::string parameterName(const Function &F, unsigned I) {
  if (I < F.arg_size() && F.getArg(I)->hasName())
    return F.getArg(I)->getName().str();
  if (const DILocalVariable *V = debugParameter(F, I);
      V && !V->getName().empty())
    return V->getName().str();
  return "arg" + std::to_string(I + 1);
}

std::string extractedGlobalName(const GlobalVariable &G) {
  return ("__r3_internal." + G.getName()).str();
}

Expected<ExtractedKernel> extractKernel(const Module &M, StringRef Kernel,
                                        std::optional<unsigned> OptLevel) {
  auto F = findKernel(M, Kernel);
  if (!F)
    return F.takeError();
  Reachability R(**F);
  if (Error E = R.run())
    return E;

  ValueToValueMapTy VMap;
  std::unique_ptr<Module> New = CloneModule(
      M, VMap, [&R](const GlobalValue *G) { return R.copiesDefinition(G); });
  ExtractedKernel Out;
  for (const GlobalValue *G : R.reached()) {
    if (const auto *Fn = dyn_cast<Function>(G))
      fixFunction(*cast<Function>(VMap[Fn]), cast<Function>(VMap[*F]));
    if (const auto *V = dyn_cast<GlobalVariable>(G))
      fixVariable(*cast<GlobalVariable>(VMap[V]), *V);
    if (const auto *A = dyn_cast<GlobalAlias>(G))
      cast<GlobalAlias>(VMap[A])->setLinkage(GlobalValue::InternalLinkage);
  }
  for (Function &Fn : New->functions())
    Fn.setComdat(nullptr);
  for (GlobalVariable &V : New->globals())
    V.setComdat(nullptr);
  eraseUnusedDeclarations(*New);
  // Top-level asm belongs to the unit; at replay it would define its symbols
  // a second time.
  New->setModuleInlineAsm("");
  for (const GlobalVariable &V : M.globals()) {
    if (!R.reached().contains(&V) || Reachability::copiesInitializer(V))
      continue;
    Out.Globals.push_back(
        {cast<GlobalVariable>(VMap[&V])->getName().str(), &V,
         M.getDataLayout().getTypeAllocSize(V.getValueType()).getFixedValue()});
  }
  New->setModuleFlag(
      Module::Warning, "r3.opt-level",
      ConstantInt::get(Type::getInt32Ty(New->getContext()),
                       OptLevel.value_or(defaultOptLevel(M, **F))));
  if (Error E = verify(*New, Kernel))
    return E;
  Out.Module = std::move(New);
  return Out;
}

namespace {
/// The device module's variables keep their definitions, their linkage and
/// their names: the cubin defines them, and replay finds them by name.
void fixDeviceVariable(GlobalVariable &V) {
  V.setComdat(nullptr);
  if (V.isDeclaration())
    makeDeclarationResolvable(V);
}

/// nvvm.annotations entries (kernel, launch bounds) of the values that were
/// copied; entries of values that were not would name nothing.
void copyAnnotations(const Module &M, Module &New, ValueToValueMapTy &VMap) {
  New.eraseNamedMetadata(New.getNamedMetadata("nvvm.annotations"));
  const NamedMDNode *Old = M.getNamedMetadata("nvvm.annotations");
  if (!Old)
    return;
  NamedMDNode *Out = New.getOrInsertNamedMetadata("nvvm.annotations");
  for (const MDNode *Entry : Old->operands()) {
    auto *G =
        Entry->getNumOperands() == 0
            ? nullptr
            : mdconst::dyn_extract_or_null<GlobalValue>(Entry->getOperand(0));
    auto It = G ? VMap.find(G) : VMap.end();
    if (It == VMap.end() || cast<GlobalValue>(It->second)->isDeclaration())
      continue;
    SmallVector<Metadata *, 4> Ops = {ValueAsMetadata::get(It->second)};
    for (unsigned I = 1; I < Entry->getNumOperands(); ++I)
      Ops.push_back(Entry->getOperand(I));
    Out->addOperand(MDNode::get(New.getContext(), Ops));
  }
}
} // namespace

Expected<std::unique_ptr<Module>> extractDeviceKernel(const Module &M,
                                                      StringRef Kernel) {
  const Function *F = M.getFunction(Kernel);
  if (!F || F->isDeclaration())
    return createStringError(inconvertibleErrorCode(),
                             "kernel '" + Kernel + "' is not defined in '" +
                                 M.getSourceFileName() + "'");
  Reachability R(*F, ExtractFor::Device);
  if (Error E = R.run())
    return E;
  ValueToValueMapTy VMap;
  std::unique_ptr<Module> New = CloneModule(
      M, VMap, [&R](const GlobalValue *G) { return R.copiesDefinition(G); });
  for (const GlobalValue *G : R.reached()) {
    if (const auto *Fn = dyn_cast<Function>(G))
      fixFunction(*cast<Function>(VMap[Fn]), cast<Function>(VMap[F]));
    if (const auto *V = dyn_cast<GlobalVariable>(G))
      fixDeviceVariable(*cast<GlobalVariable>(VMap[V]));
    if (const auto *A = dyn_cast<GlobalAlias>(G))
      cast<GlobalAlias>(VMap[A])->setLinkage(GlobalValue::InternalLinkage);
  }
  for (Function &Fn : New->functions())
    Fn.setComdat(nullptr);
  copyAnnotations(M, *New, VMap);
  eraseUnusedDeclarations(*New);
  New->setModuleInlineAsm("");
  if (Error E = verify(*New, Kernel))
    return E;
  return std::move(New);
}

} // namespace r3
