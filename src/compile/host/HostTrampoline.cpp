// The entry trampoline (see HostTrampoline.h). It is added after the replay
// pipeline ran, so that the code being measured is exactly what the pipeline
// made of the kernel; the trampoline only adapts the calling convention.
#include "compile/host/HostTrampoline.h"

#include "llvm/IR/Attributes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace llvm;

namespace r3 {

namespace {

std::string typeName(Type *T) {
  std::string S;
  raw_string_ostream OS(S);
  T->print(OS);
  return S;
}

/// Scalars of at most 8 bytes: what the recorder stores in one slot.
bool fitsSlot(Type *T, const DataLayout &DL) {
  if (!T->isIntegerTy() && !T->isFloatingPointTy() && !T->isPointerTy())
    return false;
  return DL.getTypeStoreSize(T).getFixedValue() <= 8;
}

Error checkSignature(const Function &Kernel, const DataLayout &DL) {
  for (const Argument &A : Kernel.args()) {
    if (A.hasByValAttr())
      return createStringError("parameter " + Twine(A.getArgNo() + 1) +
                               " of '" + Kernel.getName() +
                               "' is an aggregate passed by value, expected a "
                               "scalar of at most 8 bytes");
    if (!fitsSlot(A.getType(), DL))
      return createStringError("parameter " + Twine(A.getArgNo() + 1) +
                               " of '" + Kernel.getName() + "' has type " +
                               typeName(A.getType()) +
                               ", expected a scalar of at most 8 bytes (an "
                               "integer, a floating-point "
                               "value or a pointer)");
  }
  Type *R = Kernel.getReturnType();
  if (!R->isVoidTy() && !fitsSlot(R, DL))
    return createStringError("'" + Kernel.getName() + "' returns " +
                             typeName(R) +
                             ", expected void or a scalar of at most 8 bytes");
  return Error::success();
}

/// Zero-extends V, an integer, floating-point or pointer value, to i64.
Value *widenToI64(IRBuilder<> &B, Value *V, const DataLayout &DL) {
  Type *T = V->getType();
  Type *I64 = B.getInt64Ty();
  if (T->isPointerTy())
    return B.CreatePtrToInt(V, I64);
  if (T->isFloatingPointTy())
    V = B.CreateBitCast(V,
                        B.getIntNTy(DL.getTypeSizeInBits(T).getFixedValue()));
  return B.CreateZExtOrTrunc(V, I64);
}

/// The kernel's parameter and return attributes (zeroext, signext, noundef,
/// ...) on the call, so that the call matches the callee's ABI.
AttributeList callAttributes(const Function &Kernel) {
  AttributeList A = Kernel.getAttributes();
  std::vector<AttributeSet> Params;
  for (unsigned I = 0, E = Kernel.arg_size(); I != E; ++I)
    Params.push_back(A.getParamAttrs(I));
  return AttributeList::get(Kernel.getContext(), AttributeSet(),
                            A.getRetAttrs(), Params);
}

/// The entry shares the kernel's target attributes, so that it is compiled
/// for the same subtarget.
void copyTargetAttributes(const Function &Kernel, Function &Entry) {
  for (StringRef Key : {"target-cpu", "target-features", "tune-cpu"})
    if (Kernel.hasFnAttribute(Key))
      Entry.addFnAttr(Kernel.getFnAttribute(Key));
}

} // namespace

Error addEntryTrampoline(Module &M, Function &Kernel) {
  const DataLayout &DL = M.getDataLayout();
  if (Error E = checkSignature(Kernel, DL))
    return E;
  if (M.getNamedValue(HostEntryName))
    return createStringError("the module already defines '" + HostEntryName +
                             "', which r3 reserves for its entry");
  LLVMContext &Ctx = M.getContext();
  IRBuilder<> B(Ctx);
  auto *Ty = FunctionType::get(B.getInt64Ty(), {B.getPtrTy()}, false);
  Function *Entry =
      Function::Create(Ty, GlobalValue::ExternalLinkage, HostEntryName, M);
  copyTargetAttributes(Kernel, *Entry);
  Entry->addFnAttr(Attribute::NoUnwind);
  B.SetInsertPoint(BasicBlock::Create(Ctx, "entry", Entry));
  Value *Slots = Entry->getArg(0);
  std::vector<Value *> Args;
  for (Argument &A : Kernel.args()) {
    Value *Slot =
        B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Slots, 8 * A.getArgNo());
    Args.push_back(B.CreateAlignedLoad(A.getType(), Slot, Align(8)));
  }
  CallInst *Call = B.CreateCall(&Kernel, Args);
  Call->setCallingConv(Kernel.getCallingConv());
  Call->setAttributes(callAttributes(Kernel));
  if (Kernel.getReturnType()->isVoidTy())
    B.CreateRet(B.getInt64(0));
  else
    B.CreateRet(widenToI64(B, Call, DL));
  return Error::success();
}

} // namespace r3
