// Cubin ELF symbol reader. The layout is plain ELF64 (see the System V gABI):
// section headers at e_shoff, a SHT_SYMTAB section whose sh_link names its
// string table. NVIDIA puts __device__ variables in .nv.global
// (zero-initialised, NOBITS) or .nv.global.init, user __constant__ variables in
// .nv.constant3, and kernel code in .text.<mangled name>. Compiler-internal
// constant banks
// (.nv.constant0.<kernel> for parameters, others for literals) hold no user
// symbols.
#include "record/cuda/CubinSymbols.h"

#include <cstring>
#include <elf.h>
#include <optional>

namespace r3 {

namespace {
template <typename T>
std::optional<T> readAt(std::span<const uint8_t> Image, uint64_t Offset) {
  if (Offset > Image.size() || Image.size() - Offset < sizeof(T))
    return std::nullopt;
  T Value;
  std::memcpy(&Value, Image.data() + Offset, sizeof(T));
  return Value;
}

/// A NUL-terminated string at Offset of a string table section.
std::optional<std::string> stringAt(std::span<const uint8_t> Image,
                                    const Elf64_Shdr &Table, uint64_t Offset) {
  if (Table.sh_offset > Image.size() || Offset >= Table.sh_size ||
      Table.sh_size > Image.size() - Table.sh_offset)
    return std::nullopt;
  const char *Begin =
      reinterpret_cast<const char *>(Image.data() + Table.sh_offset + Offset);
  size_t Max = Table.sh_size - Offset;
  size_t Len = strnlen(Begin, Max);
  if (Len == Max)
    return std::nullopt;
  return std::string(Begin, Len);
}

Expected<std::vector<Elf64_Shdr>> sectionHeaders(std::span<const uint8_t> Image,
                                                 const Elf64_Ehdr &H) {
  if (H.e_shentsize != sizeof(Elf64_Shdr))
    return makeError("cubin: section header size ", H.e_shentsize,
                     ", expected ", sizeof(Elf64_Shdr));
  std::vector<Elf64_Shdr> Sections;
  for (uint64_t I = 0; I < H.e_shnum; ++I) {
    auto S = readAt<Elf64_Shdr>(Image, H.e_shoff + I * sizeof(Elf64_Shdr));
    if (!S)
      return makeError("cubin: section header ", I, " lies outside the ",
                       Image.size(), "-byte image");
    Sections.push_back(*S);
  }
  if (H.e_shstrndx >= Sections.size())
    return Error::make("cubin: no section name table");
  return Sections;
}

void classify(CubinSymbols &Out, const std::string &Name,
              const std::string &Section, const Elf64_Sym &Sym) {
  unsigned Type = ELF64_ST_TYPE(Sym.st_info);
  if (Type == STT_FUNC && Section.starts_with(".text.") &&
      Section.substr(6) == Name) {
    Out.Kernels.push_back(Name);
    return;
  }
  if (Type != STT_OBJECT || Name.empty())
    return;
  if (Section == ".nv.global" || Section == ".nv.global.init")
    Out.Globals.push_back(
        {Name, Sym.st_size, GlobalSpace::Device, Section == ".nv.global.init"});
  else if (Section == ".nv.constant3")
    Out.Globals.push_back({Name, Sym.st_size, GlobalSpace::Constant, true});
}

Error readSymbols(std::span<const uint8_t> Image,
                  const std::vector<Elf64_Shdr> &Sections, uint16_t NamesIndex,
                  const Elf64_Shdr &Symtab, CubinSymbols &Out) {
  if (Symtab.sh_link >= Sections.size() ||
      Symtab.sh_entsize != sizeof(Elf64_Sym))
    return Error::make("cubin: malformed symbol table header");
  const Elf64_Shdr &Strings = Sections[Symtab.sh_link];
  for (uint64_t Off = 0; Off + sizeof(Elf64_Sym) <= Symtab.sh_size;
       Off += sizeof(Elf64_Sym)) {
    auto Sym = readAt<Elf64_Sym>(Image, Symtab.sh_offset + Off);
    if (!Sym)
      return Error::make("cubin: symbol table runs past the end of the image");
    if (Sym->st_shndx == SHN_UNDEF || Sym->st_shndx >= Sections.size())
      continue;
    auto Name = stringAt(Image, Strings, Sym->st_name);
    auto Section =
        stringAt(Image, Sections[NamesIndex], Sections[Sym->st_shndx].sh_name);
    if (!Name || !Section)
      return Error::make("cubin: symbol or section name outside its table");
    classify(Out, *Name, *Section, *Sym);
  }
  return Error::success();
}
} // namespace

Expected<CubinSymbols> readCubinSymbols(std::span<const uint8_t> Image) {
  auto H = readAt<Elf64_Ehdr>(Image, 0);
  if (!H || std::memcmp(H->e_ident, ELFMAG, SELFMAG) != 0)
    return Error::make("cubin: not an ELF image");
  if (H->e_ident[EI_CLASS] != ELFCLASS64)
    return Error::make("cubin: not a 64-bit ELF image");
  auto Sections = sectionHeaders(Image, *H);
  if (!Sections)
    return Sections.takeError();
  CubinSymbols Out;
  for (const Elf64_Shdr &S : *Sections)
    if (S.sh_type == SHT_SYMTAB)
      R3_TRY(readSymbols(Image, *Sections, H->e_shstrndx, S, Out));
  return Out;
}

} // namespace r3
