// Bounds-checked ELF64 reading. The layout is plain ELF64 (see the System V
// gABI): section headers at e_shoff, section names in the section e_shstrndx
// names, and SHT_SYMTAB sections whose sh_link names their string table.
#include "cubin/CubinElf.h"

namespace r3::cubin {

namespace {
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

Error readTable(const Elf &E, const Elf64_Shdr &Symtab,
                std::vector<Symbol> &Out) {
  if (Symtab.sh_link >= E.Sections.size() ||
      Symtab.sh_entsize != sizeof(Elf64_Sym))
    return Error::make("cubin: malformed symbol table header");
  const Elf64_Shdr &Strings = E.Sections[Symtab.sh_link];
  for (uint64_t Off = 0; Off + sizeof(Elf64_Sym) <= Symtab.sh_size;
       Off += sizeof(Elf64_Sym)) {
    auto Sym = readAt<Elf64_Sym>(E.Image, Symtab.sh_offset + Off);
    if (!Sym)
      return Error::make("cubin: symbol table runs past the end of the image");
    if (Sym->st_shndx == SHN_UNDEF || Sym->st_shndx >= E.Sections.size())
      continue;
    auto Name = stringAt(E.Image, Strings, Sym->st_name);
    auto Section = E.sectionName(E.Sections[Sym->st_shndx]);
    if (!Name || !Section)
      return Error::make("cubin: symbol or section name outside its table");
    Out.push_back({*Name, *Section, *Sym});
  }
  return Error::success();
}
} // namespace

std::optional<std::string> Elf::sectionName(const Elf64_Shdr &S) const {
  return stringAt(Image, Sections[Header.e_shstrndx], S.sh_name);
}

std::optional<std::span<const uint8_t>>
Elf::contents(const Elf64_Shdr &S) const {
  if (S.sh_type == SHT_NOBITS || S.sh_offset > Image.size() ||
      S.sh_size > Image.size() - S.sh_offset)
    return std::nullopt;
  return Image.subspan(S.sh_offset, S.sh_size);
}

Expected<std::vector<Symbol>> Elf::symbols() const {
  std::vector<Symbol> Out;
  for (const Elf64_Shdr &S : Sections)
    if (S.sh_type == SHT_SYMTAB)
      R3_TRY(readTable(*this, S, Out));
  return Out;
}

Expected<Elf> readElf(std::span<const uint8_t> Image) {
  auto H = readAt<Elf64_Ehdr>(Image, 0);
  if (!H || std::memcmp(H->e_ident, ELFMAG, SELFMAG) != 0)
    return Error::make("cubin: not an ELF image");
  if (H->e_ident[EI_CLASS] != ELFCLASS64)
    return Error::make("cubin: not a 64-bit ELF image");
  Elf E{Image, *H, {}};
  R3_TRY(moveInto(sectionHeaders(Image, *H), E.Sections));
  return E;
}

} // namespace r3::cubin
