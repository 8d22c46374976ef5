// Folding recorded values into a kernel before the pipeline runs, so that the
// pipeline can propagate them (a loop bound that becomes a constant unrolls):
// scalar parameters take their bytes from the recorded parameter buffer, and
// blockDim/gridDim reads (llvm.nvvm.read.ptx.sreg.ntid.* / nctaid.*) become
// the launch's dimensions. The parameter layout is the capture's: Layout[i]
// is the offset and size of IR argument i in the buffer, as the driver
// reported them at record time. Pointers and by-value aggregates are left
// alone: an address or a structure is not worth a variant each.
//
// Launch bounds and the register limit go into !nvvm.annotations, which is
// where LLVM 19's NVPTX backend reads __launch_bounds__ from (maxntidx,
// minctasm, maxnreg) and turns them into .maxntid, .minnctapersm, .maxnreg.
#include "compile/cuda/Stages.h"
#include "support/Bytes.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <cstring>
#include <sstream>

using namespace llvm;

namespace r3::cuda {

namespace {

/// The constant of type T held by Bytes, or null when T is not a scalar.
Constant *scalarConstant(Type *T, uint64_t Bits) {
  if (T->isIntegerTy())
    return ConstantInt::get(T, Bits);
  if (T->isHalfTy() || T->isBFloatTy() || T->isFloatTy() || T->isDoubleTy())
    return ConstantFP::get(T->getContext(),
                           APFloat(T->getFltSemantics(),
                                   APInt(T->getPrimitiveSizeInBits(), Bits)));
  return nullptr;
}

Error specializeArg(Argument &A, const ParamInfo &P,
                    const std::vector<uint8_t> &Params,
                    const std::string &Kernel) {
  Type *T = A.getType();
  if (T->isPointerTy() || A.hasByValAttr() || !T->isSingleValueType())
    return Error::success();
  const DataLayout &DL = A.getParent()->getParent()->getDataLayout();
  uint64_t Size = DL.getTypeStoreSize(T);
  unsigned I = A.getArgNo();
  if (Size != P.Size)
    return makeError("kernel '", Kernel, "': parameter ", I + 1, " is ", Size,
                     " bytes in the IR, the capture's layout says ", P.Size);
  if (P.Offset + P.Size > Params.size())
    return makeError("kernel '", Kernel, "': parameter ", I + 1,
                     " lies at bytes ", P.Offset, "-", P.Offset + P.Size,
                     ", past the recorded parameter buffer of ", Params.size(),
                     " bytes");
  if (Constant *C = scalarConstant(T, littleEndian(Params, P.Offset, std::min<uint64_t>(Size, 8))))
    A.replaceAllUsesWith(C);
  return Error::success();
}

Error specializeArgs(Function &F, const Specialization &S) {
  std::string Kernel = F.getName().str();
  if (F.arg_size() != S.Layout.size())
    return makeError("kernel '", Kernel, "' has ", F.arg_size(),
                     " parameters in the IR, the capture's parameter layout "
                     "has ",
                     S.Layout.size());
  for (Argument &A : F.args())
    R3_TRY(specializeArg(A, S.Layout[A.getArgNo()], S.Params, Kernel));
  return Error::success();
}

/// The recorded value of a dimension-reading intrinsic, if ID is one.
std::optional<uint32_t> dimension(Intrinsic::ID ID, const Specialization &S) {
  switch (ID) {
  case Intrinsic::nvvm_read_ptx_sreg_ntid_x:
    return S.Block[0];
  case Intrinsic::nvvm_read_ptx_sreg_ntid_y:
    return S.Block[1];
  case Intrinsic::nvvm_read_ptx_sreg_ntid_z:
    return S.Block[2];
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_x:
    return S.Grid[0];
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_y:
    return S.Grid[1];
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_z:
    return S.Grid[2];
  default:
    return std::nullopt;
  }
}

void specializeDims(Module &M, const Specialization &S) {
  for (Function &F : M) {
    if (!F.isIntrinsic())
      continue;
    auto V = dimension(F.getIntrinsicID(), S);
    if (!V)
      continue;
    Constant *C = ConstantInt::get(F.getReturnType(), *V);
    for (User *U : make_early_inc_range(F.users()))
      if (auto *Call = dyn_cast<CallInst>(U)) {
        Call->replaceAllUsesWith(C);
        Call->eraseFromParent();
      }
  }
}

bool isAnnotationOf(const MDNode &N, const Function &F, StringRef Key) {
  if (N.getNumOperands() < 3)
    return false;
  auto *K = dyn_cast<MDString>(N.getOperand(1));
  return K && K->getString() == Key &&
         mdconst::dyn_extract_or_null<Function>(N.getOperand(0)) == &F;
}

/// Sets the annotation Key of F to Value, replacing one the source gave.
void setAnnotation(Module &M, Function &F, StringRef Key, uint32_t Value) {
  NamedMDNode *A = M.getOrInsertNamedMetadata("nvvm.annotations");
  std::vector<MDNode *> Keep;
  for (MDNode *N : A->operands())
    if (!isAnnotationOf(*N, F, Key))
      Keep.push_back(N);
  A->clearOperands();
  for (MDNode *N : Keep)
    A->addOperand(N);
  LLVMContext &Ctx = M.getContext();
  A->addOperand(
      MDNode::get(Ctx, {ValueAsMetadata::get(&F), MDString::get(Ctx, Key),
                        ConstantAsMetadata::get(
                            ConstantInt::get(Type::getInt32Ty(Ctx), Value))}));
}

} // namespace

Error specialize(Module &M, const std::string &Kernel,
                 const CompileSettings &Which, const Specialization &S) {
  Function *F = M.getFunction(Kernel);
  if (!F)
    return makeError("internal error: kernel '", Kernel,
                     "' vanished before specialization");
  if (Which.SpecializeArgs)
    R3_TRY(specializeArgs(*F, S));
  if (Which.SpecializeDims)
    specializeDims(M, S);
  return Error::success();
}

void applyBounds(Module &M, const std::string &Kernel,
                 const std::optional<LaunchBoundsSpec> &Bounds,
                 uint32_t MaxRegisters) {
  Function *F = M.getFunction(Kernel);
  if (!F)
    return;
  if (Bounds && Bounds->MaxThreads)
    setAnnotation(M, *F, "maxntidx", Bounds->MaxThreads);
  if (Bounds && Bounds->MinBlocks)
    setAnnotation(M, *F, "minctasm", Bounds->MinBlocks);
  if (MaxRegisters)
    setAnnotation(M, *F, "maxnreg", MaxRegisters);
}

std::string specializationKey(const CudaCompileOptions &O) {
  std::ostringstream K;
  if (O.Settings.Bounds)
    K << "bounds=" << O.Settings.Bounds->MaxThreads << ","
      << O.Settings.Bounds->MinBlocks << ";";
  if (O.Settings.MaxRegisters)
    K << "maxnreg=" << O.Settings.MaxRegisters << ";";
  if (!O.Specialize)
    return K.str();
  const Specialization &S = *O.Specialize;
  if (O.Settings.SpecializeArgs) {
    K << "args=";
    for (const ParamInfo &P : S.Layout)
      K << P.Offset << ":" << P.Size << ",";
    static const char Hex[] = "0123456789abcdef";
    for (uint8_t B : S.Params)
      K << Hex[B >> 4] << Hex[B & 15];
    K << ";";
  }
  if (O.Settings.SpecializeDims)
    K << "dims=" << S.Grid[0] << "," << S.Grid[1] << "," << S.Grid[2] << "/"
      << S.Block[0] << "," << S.Block[1] << "," << S.Block[2] << ";";
  return K.str();
}

} // namespace r3::cuda
