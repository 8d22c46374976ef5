// The ELF64 container of a cubin, read bounds-checked: the header, the
// section headers and their names, a section's bytes and the symbol table.
// Shared by the cubin readers (CubinSymbols: globals and kernels;
// CubinTextures: what a kernel does with textures), which run inside the
// recorded application, so this file depends on libc and the C++ standard
// library only. Image bytes are untrusted: every offset is checked, and a
// damaged image is an error saying what is wrong, never a crash.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <cstring>
#include <elf.h>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace r3::cubin {

/// STO_CUDA_ENTRY: st_other of a kernel's (an entry function's) symbol; a
/// device function's symbol has 0 there (seen in the cubins of nvcc 13).
inline constexpr unsigned char EntryFunction = 0x10;

/// A T copied from Bytes at Offset, or none when it does not fit.
template <typename T>
std::optional<T> readAt(std::span<const uint8_t> Bytes, uint64_t Offset) {
  if (Offset > Bytes.size() || Bytes.size() - Offset < sizeof(T))
    return std::nullopt;
  T Value;
  std::memcpy(&Value, Bytes.data() + Offset, sizeof(T));
  return Value;
}

/// One symbol of the symbol table, defined in a section of the image.
struct Symbol {
  std::string Name;
  std::string Section; ///< the name of the section it is defined in
  Elf64_Sym Entry;
};

/// An image whose header and section headers were read.
struct Elf {
  std::span<const uint8_t> Image;
  Elf64_Ehdr Header;
  std::vector<Elf64_Shdr> Sections;

  /// The name of section S, or none when it lies outside the name table.
  std::optional<std::string> sectionName(const Elf64_Shdr &S) const;
  /// The bytes of section S (none for SHT_NOBITS), or none when they lie
  /// outside the image.
  std::optional<std::span<const uint8_t>> contents(const Elf64_Shdr &S) const;
  /// The symbols of every SHT_SYMTAB section that are defined in a section.
  Expected<std::vector<Symbol>> symbols() const;
};

/// Reads the ELF64 header and the section headers of Image, which must
/// outlive the result.
Expected<Elf> readElf(std::span<const uint8_t> Image);

} // namespace r3::cubin
