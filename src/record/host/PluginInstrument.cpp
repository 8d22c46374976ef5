// Generates the HostAbi.h side of an instrumented unit. The LLVM struct types
// below list the C structs' fields in order; with the target's DataLayout
// they get the C layout (natural alignment, the same padding). Every global
// the plugin adds is named "__r3.*", so that the unit's own globals are told
// apart from the plugin's descriptors.
#include "record/host/PluginInstrument.h"

#include "compile/Extract.h"
#include "record/host/HostAbi.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;

namespace r3 {

namespace {

const char *const UnitName = "__r3.unit";

/// The ABI's types in one module.
struct AbiTypes {
  explicit AbiTypes(Module &M)
      : Ctx(M.getContext()), I32(Type::getInt32Ty(Ctx)),
        I64(Type::getInt64Ty(Ctx)), Ptr(PointerType::get(Ctx, 0)) {
    Param = StructType::create(Ctx, {I32, I32, Ptr}, "r3_host_param");
    Global = StructType::create(Ctx, {Ptr, Ptr, I64}, "r3_host_global");
    Kernel = StructType::create(
        Ctx, {Ptr, Ptr, I64, I32, Ptr, I32, Ptr, I32, I64, Ptr},
        "r3_host_kernel");
    Unit =
        StructType::create(Ctx, {I32, Ptr, I32, Ptr, I32, Ptr}, "r3_host_unit");
  }
  LLVMContext &Ctx;
  IntegerType *I32, *I64;
  PointerType *Ptr;
  StructType *Param, *Global, *Kernel, *Unit;
};

GlobalVariable *privateConstant(Module &M, Constant *Init, const Twine &Name) {
  auto *G = new GlobalVariable(M, Init->getType(), /*isConstant=*/true,
                               GlobalValue::PrivateLinkage, Init, Name);
  G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  return G;
}

Constant *cString(Module &M, StringRef S) {
  return privateConstant(M, ConstantDataArray::getString(M.getContext(), S),
                         "__r3.str");
}

/// An array of Elements as a private constant, or null when empty.
Constant *arrayOrNull(Module &M, Type *Element, ArrayRef<Constant *> Elements,
                      const Twine &Name) {
  if (Elements.empty())
    return ConstantPointerNull::get(PointerType::get(M.getContext(), 0));
  return privateConstant(
      M, ConstantArray::get(ArrayType::get(Element, Elements.size()), Elements),
      Name);
}

uint64_t allocSize(const Module &M, const GlobalVariable &G) {
  return M.getDataLayout().getTypeAllocSize(G.getValueType()).getFixedValue();
}

Constant *globalEntry(const AbiTypes &T, Module &M, StringRef Name,
                      GlobalVariable &Address, uint64_t Size) {
  return ConstantStruct::get(
      T.Global, {cString(M, Name), &Address, ConstantInt::get(T.I64, Size)});
}

Constant *paramArray(const AbiTypes &T, Module &M, const Function &F) {
  std::vector<Constant *> Params;
  for (unsigned I = 0; I < F.arg_size(); ++I) {
    // extractKernel accepted the signature, so every type has a slot.
    SlotType S = *slotType(*F.getArg(I)->getType(), M.getDataLayout());
    Params.push_back(ConstantStruct::get(
        T.Param,
        {ConstantInt::get(T.I32, static_cast<uint32_t>(S.Kind)),
         ConstantInt::get(T.I32, S.Size), cString(M, parameterName(F, I))}));
  }
  return arrayOrNull(M, T.Param, Params, "__r3.params." + F.getName());
}

Constant *kernelGlobals(const AbiTypes &T, Module &M,
                        const KernelToInstrument &K) {
  std::vector<Constant *> Entries;
  for (const ExtractedGlobal &G : K.Globals)
    // The descriptor takes the address of the module's own global, which
    // extractKernel only looked at.
    Entries.push_back(globalEntry(
        T, M, G.Name, const_cast<GlobalVariable &>(*G.Original), G.Size));
  return arrayOrNull(M, T.Global, Entries, "__r3.globals." + K.F->getName());
}

uint32_t returnSize(const Function &F) {
  if (F.getReturnType()->isVoidTy())
    return 0;
  return slotType(*F.getReturnType(), F.getParent()->getDataLayout())->Size;
}

GlobalVariable *kernelDescriptor(const AbiTypes &T, Module &M,
                                 const KernelToInstrument &K) {
  const Function &F = *K.F;
  StringRef Bytes(K.Bitcode.data(), K.Bitcode.size());
  GlobalVariable *Bitcode = privateConstant(
      M, ConstantDataArray::getString(M.getContext(), Bytes, false),
      "__r3.bitcode." + F.getName());
  Bitcode->setAlignment(Align(16));
  Constant *Init = ConstantStruct::get(
      T.Kernel,
      {cString(M, F.getName()), Bitcode, ConstantInt::get(T.I64, Bytes.size()),
       ConstantInt::get(T.I32, F.arg_size()), paramArray(T, M, F),
       ConstantInt::get(T.I32, K.Globals.size()), kernelGlobals(T, M, K),
       ConstantInt::get(T.I32, returnSize(F)), ConstantInt::get(T.I64, 0),
       ConstantPointerNull::get(T.Ptr)});
  // Not constant: runtime_state and tuned_entry belong to the runtime.
  return new GlobalVariable(M, T.Kernel, /*isConstant=*/false,
                            GlobalValue::InternalLinkage, Init,
                            "__r3.kernel." + F.getName());
}

// --- the wrapper ---

/// V in the low bytes of an i64, as HostAbi.h's slots hold it.
Value *toSlot(IRBuilder<> &B, Value *V) {
  Type *T = V->getType();
  if (T->isPointerTy())
    return B.CreatePtrToInt(V, B.getInt64Ty());
  if (T->isFloatTy())
    V = B.CreateBitCast(V, B.getInt32Ty());
  else if (T->isDoubleTy())
    V = B.CreateBitCast(V, B.getInt64Ty());
  return B.CreateZExt(V, B.getInt64Ty());
}

/// The value of type T that a slot holds in its low bytes (toSlot's inverse).
Value *fromSlot(IRBuilder<> &B, Value *Slot, Type *T) {
  if (T->isPointerTy())
    return B.CreateIntToPtr(Slot, T);
  if (T->isFloatTy())
    return B.CreateBitCast(B.CreateTrunc(Slot, B.getInt32Ty()), T);
  if (T->isDoubleTy())
    return B.CreateBitCast(Slot, T);
  return B.CreateTrunc(Slot, T); // a no-op for i64
}

/// Moves F's body, with its debug info and personality, into a new internal
/// function; F is left a declaration with every use still pointing at it.
Function *moveBody(Function &F) {
  Function *Body = Function::Create(
      F.getFunctionType(), GlobalValue::InternalLinkage, F.getAddressSpace(),
      F.getName() + ".r3.body", F.getParent());
  Body->copyAttributesFrom(&F);
  Body->setLinkage(GlobalValue::InternalLinkage);
  Body->setVisibility(GlobalValue::DefaultVisibility);
  Body->setDLLStorageClass(GlobalValue::DefaultStorageClass);
  // In F's comdat, if any, so that it goes where F's other copies go.
  Body->setComdat(F.getComdat());
  Body->setPrefixData(nullptr);
  Body->setPrologueData(nullptr);
  Body->splice(Body->begin(), &F);
  for (unsigned I = 0; I < F.arg_size(); ++I) {
    Body->getArg(I)->takeName(F.getArg(I));
    F.getArg(I)->replaceAllUsesWith(Body->getArg(I));
    F.getArg(I)->setName(Body->getArg(I)->getName());
  }
  Body->setSubprogram(F.getSubprogram());
  F.setSubprogram(nullptr);
  F.setPersonalityFn(nullptr);
  // The wrapper calls hooks that read and write memory, whatever F declared.
  F.removeFnAttr(Attribute::Memory);
  return Body;
}

struct Hooks {
  FunctionCallee Enter, Exit;
};

Hooks declareHooks(const AbiTypes &T, Module &M) {
  AttributeList NoUnwind =
      AttributeList().addFnAttribute(M.getContext(), Attribute::NoUnwind);
  return {
      M.getOrInsertFunction("__r3_host_enter", NoUnwind, T.Ptr, T.Ptr, T.Ptr),
      M.getOrInsertFunction("__r3_host_exit", NoUnwind, Type::getVoidTy(T.Ctx),
                            T.Ptr, T.Ptr, T.Ptr)};
}

/// F's return and parameter attributes, for a call of F: the ABI ones
/// (signext, zeroext, inreg, ...) must match the callee's.
AttributeList callSiteAttributes(const Function &F) {
  AttributeList A = F.getAttributes();
  SmallVector<AttributeSet, 8> Params;
  for (unsigned I = 0; I < F.arg_size(); ++I)
    Params.push_back(A.getParamAttrs(I));
  return AttributeList::get(F.getContext(), AttributeSet(), A.getRetAttrs(),
                            Params);
}

/// The field of r3_host_kernel that holds the tuned entry.
constexpr unsigned TunedEntryField = 9;

/// F's wrapper: the slots, the enter hook, then the body, or the tuned entry
/// when the runtime set one (one load and a branch when it did not), then the
/// exit hook with the result's slot.
void buildWrapper(Function &F, Function &Body, GlobalVariable &Descriptor,
                  const Hooks &H, StructType *KernelTy) {
  LLVMContext &Ctx = F.getContext();
  IRBuilder<> B(BasicBlock::Create(Ctx, "entry", &F));
  ArrayType *SlotsTy =
      ArrayType::get(B.getInt64Ty(), std::max<size_t>(F.arg_size(), 1));
  AllocaInst *Slots = B.CreateAlloca(SlotsTy, nullptr, "r3.slots");
  AllocaInst *Ret = F.getReturnType()->isVoidTy()
                        ? nullptr
                        : B.CreateAlloca(B.getInt64Ty(), nullptr, "r3.ret");
  std::vector<Value *> Args;
  for (Argument &A : F.args()) {
    B.CreateStore(toSlot(B, &A), B.CreateConstInBoundsGEP2_32(SlotsTy, Slots, 0,
                                                              A.getArgNo()));
    Args.push_back(&A);
  }
  Value *Token = B.CreateCall(H.Enter, {&Descriptor, Slots}, "r3.token");
  PointerType *Ptr = PointerType::get(Ctx, 0);
  Value *Tuned = B.CreateLoad(
      Ptr, B.CreateStructGEP(KernelTy, &Descriptor, TunedEntryField),
      "r3.tuned");
  BasicBlock *UseTuned = BasicBlock::Create(Ctx, "r3.use_tuned", &F);
  BasicBlock *UseOwn = BasicBlock::Create(Ctx, "r3.use_own", &F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "r3.done", &F);
  B.CreateCondBr(B.CreateIsNotNull(Tuned), UseTuned, UseOwn);

  B.SetInsertPoint(UseTuned);
  FunctionType *EntryTy = FunctionType::get(B.getInt64Ty(), {Ptr}, false);
  Value *TunedSlot = B.CreateCall(EntryTy, Tuned, {Slots}, "r3.tuned_ret");
  Value *TunedResult =
      Ret ? fromSlot(B, TunedSlot, F.getReturnType()) : nullptr;
  B.CreateBr(Done);

  B.SetInsertPoint(UseOwn);
  CallInst *Call = B.CreateCall(&Body, Args);
  Call->setCallingConv(Body.getCallingConv());
  Call->setAttributes(callSiteAttributes(Body));
  Value *OwnSlot = Ret ? toSlot(B, Call) : nullptr;
  B.CreateBr(Done);

  B.SetInsertPoint(Done);
  Value *RetSlot = ConstantPointerNull::get(Ptr);
  PHINode *Result = nullptr;
  if (Ret) {
    PHINode *Slot = B.CreatePHI(B.getInt64Ty(), 2, "r3.slot");
    Slot->addIncoming(TunedSlot, UseTuned);
    Slot->addIncoming(OwnSlot, UseOwn);
    Result = B.CreatePHI(F.getReturnType(), 2, "r3.result");
    Result->addIncoming(TunedResult, UseTuned);
    Result->addIncoming(Call, UseOwn);
    B.CreateStore(Slot, Ret);
    RetSlot = Ret;
  }
  B.CreateCall(H.Exit, {&Descriptor, Token, RetSlot});
  if (Result)
    B.CreateRet(Result);
  else
    B.CreateRetVoid();
}

// --- the unit ---

bool listedInUnit(const GlobalVariable &G) {
  return !G.isDeclaration() && !G.hasAvailableExternallyLinkage() &&
         !G.isThreadLocal() && !G.getName().starts_with("llvm.") &&
         !G.getName().starts_with("__r3.") && G.getSection() != "llvm.metadata";
}

Constant *unitGlobals(const AbiTypes &T, Module &M) {
  std::vector<GlobalVariable *> Listed;
  for (GlobalVariable &G : M.globals())
    if (listedInUnit(G))
      Listed.push_back(&G);
  std::vector<Constant *> Entries;
  for (GlobalVariable *G : Listed)
    Entries.push_back(globalEntry(
        T, M, G->hasLocalLinkage() ? extractedGlobalName(*G) : G->getName(), *G,
        allocSize(M, *G)));
  return arrayOrNull(M, T.Global, Entries, "__r3.unit_globals");
}

void registerUnit(const AbiTypes &T, Module &M,
                  ArrayRef<Constant *> Descriptors) {
  Constant *Globals = unitGlobals(T, M);
  Constant *Kernels = arrayOrNull(M, T.Ptr, Descriptors, "__r3.kernels");
  unsigned NumGlobals = 0;
  if (auto *G = dyn_cast<GlobalVariable>(Globals))
    NumGlobals = cast<ArrayType>(G->getValueType())->getNumElements();
  GlobalVariable *Unit = privateConstant(
      M,
      ConstantStruct::get(T.Unit,
                          {ConstantInt::get(T.I32, R3_HOST_ABI_VERSION),
                           cString(M, M.getSourceFileName()),
                           ConstantInt::get(T.I32, Descriptors.size()), Kernels,
                           ConstantInt::get(T.I32, NumGlobals), Globals}),
      UnitName);
  Function *Ctor =
      Function::Create(FunctionType::get(Type::getVoidTy(T.Ctx), false),
                       GlobalValue::InternalLinkage, "__r3.register_unit", M);
  IRBuilder<> B(BasicBlock::Create(T.Ctx, "entry", Ctor));
  B.CreateCall(M.getOrInsertFunction("__r3_host_register_unit",
                                     Type::getVoidTy(T.Ctx), T.Ptr),
               {Unit});
  B.CreateRetVoid();
  // Priority 1, as sanitizers do: before the application's own constructors,
  // which may call a kernel.
  appendToGlobalCtors(M, Ctor, 1);
}

} // namespace

bool isInstrumented(const Module &M) {
  return M.getNamedGlobal(UnitName) != nullptr;
}

void instrumentUnit(Module &M, std::vector<KernelToInstrument> &Kernels) {
  AbiTypes T(M);
  Hooks H = declareHooks(T, M);
  std::vector<Constant *> Descriptors;
  for (KernelToInstrument &K : Kernels) {
    GlobalVariable *D = kernelDescriptor(T, M, K);
    Function *Body = moveBody(*K.F);
    buildWrapper(*K.F, *Body, *D, H, T.Kernel);
    Descriptors.push_back(D);
  }
  registerUnit(T, M, Descriptors);
}

} // namespace r3
