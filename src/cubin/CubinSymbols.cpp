// Cubin ELF symbol reader (the ELF container: CubinElf.h). NVIDIA puts
// __device__ variables in .nv.global (zero-initialised, NOBITS) or
// .nv.global.init, user __constant__ variables in .nv.constant3, and kernel
// code in .text.<mangled name>. Compiler-internal constant banks
// (.nv.constant0.<kernel> for parameters, others for literals) hold no user
// symbols.
#include "cubin/CubinSymbols.h"

#include "cubin/CubinElf.h"

namespace r3 {

namespace {
void classify(CubinSymbols &Out, const cubin::Symbol &S) {
  const std::string &Name = S.Name, &Section = S.Section;
  unsigned Type = ELF64_ST_TYPE(S.Entry.st_info);
  if (Type == STT_FUNC && Section.starts_with(".text.") &&
      Section.substr(6) == Name) {
    Out.Kernels.push_back(Name);
    return;
  }
  if (Type != STT_OBJECT || Name.empty())
    return;
  uint64_t Size = S.Entry.st_size;
  if (Section == ".nv.global" || Section == ".nv.global.init")
    Out.Globals.push_back(
        {Name, Size, GlobalSpace::Device, Section == ".nv.global.init"});
  else if (Section == ".nv.constant3")
    Out.Globals.push_back({Name, Size, GlobalSpace::Constant, true});
}
} // namespace

Expected<CubinSymbols> readCubinSymbols(std::span<const uint8_t> Image) {
  auto E = cubin::readElf(Image);
  if (!E)
    return E.takeError();
  auto Symbols = E->symbols();
  if (!Symbols)
    return Symbols.takeError();
  CubinSymbols Out;
  for (const cubin::Symbol &S : *Symbols)
    classify(Out, S);
  return Out;
}

} // namespace r3
