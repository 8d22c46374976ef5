// Module images and their globals.
#include "record/cuda/Modules.h"

#include "record/cuda/Driver.h"

#include <algorithm>

namespace r3::cuda {

const LoadedModule &ModuleTable::onLoaded(uint32_t Id, const void *Image,
                                          size_t Size) {
  auto M = std::make_unique<LoadedModule>();
  M->Id = Id;
  const auto *B = static_cast<const uint8_t *>(Image);
  if (B)
    M->Image.assign(B, B + Size);
  auto Symbols = readCubinSymbols(M->Image);
  if (Symbols)
    M->Symbols = std::move(*Symbols);
  else
    M->ParseError = Symbols.takeError().message();
  std::lock_guard<std::mutex> L(Lock);
  Modules.push_back(std::move(M));
  return *Modules.back();
}

LoadedModule *ModuleTable::moduleOf(const std::string &Name) {
  std::lock_guard<std::mutex> L(Lock);
  for (auto It = Modules.rbegin(); It != Modules.rend(); ++It) {
    const std::vector<std::string> &K = (*It)->Symbols.Kernels;
    if (std::find(K.begin(), K.end(), Name) != K.end())
      return It->get();
  }
  return nullptr;
}

std::string ModuleTable::describe() {
  std::lock_guard<std::mutex> L(Lock);
  size_t Bad = 0;
  std::string FirstError;
  for (const auto &M : Modules)
    if (!M->ParseError.empty() && Bad++ == 0)
      FirstError = M->ParseError;
  std::string Out = std::to_string(Modules.size()) + " module images";
  if (Bad)
    Out += ", " + std::to_string(Bad) + " unreadable (" + FirstError + ")";
  return Out;
}

Expected<std::vector<GlobalInfo>> resolveGlobals(CUfunction F,
                                                 const LoadedModule &M) {
  CUmodule Module = nullptr;
  R3_TRY(check(cuFuncGetModule(&Module, F), "cuFuncGetModule"));
  std::vector<GlobalInfo> Out;
  for (const CubinGlobal &G : M.Symbols.Globals) {
    CUdeviceptr Address = 0;
    size_t Size = 0;
    CUresult R = cuModuleGetGlobal(&Address, &Size, Module, G.Name.c_str());
    if (R == CUDA_ERROR_NOT_FOUND)
      continue; // a symbol of the image the driver does not export
    R3_TRY(check(R, ("cuModuleGetGlobal('" + G.Name + "')").c_str()));
    if (Size != 0)
      Out.push_back({G.Name, static_cast<uint64_t>(Address), Size});
  }
  return Out;
}

} // namespace r3::cuda
