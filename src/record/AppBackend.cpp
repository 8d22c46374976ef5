// The ELF reader behind backend detection: only the section headers, the
// dynamic symbol table, the dynamic section and their string tables are read.
#include "record/AppBackend.h"

#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

namespace r3 {

namespace {
class ElfFile {
public:
  explicit ElfFile(std::string Path) : Path(std::move(Path)) {}
  ~ElfFile() {
    if (Fd >= 0)
      ::close(Fd);
  }
  Expected<ElfFacts> read();

private:
  Error readAt(uint64_t Offset, void *Out, uint64_t Size) const;
  Expected<std::vector<char>> section(const Elf64_Shdr &S) const;
  Error scanSymbols(const Elf64_Shdr &Sym, ElfFacts &F) const;
  Error scanNeeded(const Elf64_Shdr &Dyn, ElfFacts &F) const;
  Error damaged(const char *What) const {
    return makeError(Path, ": a damaged ELF file (", What, ")");
  }

  std::string Path;
  int Fd = -1;
  uint64_t FileSize = 0;
  std::vector<Elf64_Shdr> Sections;
};

Error ElfFile::readAt(uint64_t Offset, void *Out, uint64_t Size) const {
  if (Offset > FileSize || Size > FileSize - Offset)
    return damaged("a table lies outside the file");
  auto *B = static_cast<char *>(Out);
  for (uint64_t Done = 0; Done < Size;) {
    ssize_t R = ::pread(Fd, B + Done, Size - Done, Offset + Done);
    if (R <= 0)
      return errnoError(Path + ": read");
    Done += static_cast<uint64_t>(R);
  }
  return Error::success();
}

Expected<std::vector<char>> ElfFile::section(const Elf64_Shdr &S) const {
  std::vector<char> Bytes(S.sh_size + 1, 0); // NUL-terminated
  R3_TRY(readAt(S.sh_offset, Bytes.data(), S.sh_size));
  return Bytes;
}

const char *stringAt(const std::vector<char> &Table, uint64_t Offset) {
  return Offset < Table.size() ? Table.data() + Offset : "";
}

Error ElfFile::scanSymbols(const Elf64_Shdr &Sym, ElfFacts &F) const {
  if (Sym.sh_link >= Sections.size())
    return damaged("a symbol table without its string table");
  std::vector<char> Strings, Symbols;
  R3_TRY(moveInto(section(Sections[Sym.sh_link]), Strings));
  R3_TRY(moveInto(section(Sym), Symbols));
  for (size_t Off = 0; Off + sizeof(Elf64_Sym) <= Sym.sh_size;
       Off += sizeof(Elf64_Sym)) {
    Elf64_Sym S;
    std::memcpy(&S, Symbols.data() + Off, sizeof(S));
    if (std::strcmp(stringAt(Strings, S.st_name), "__r3_host_register_unit") ==
        0)
      F.RefersToHostHooks = true;
  }
  return Error::success();
}

Error ElfFile::scanNeeded(const Elf64_Shdr &Dyn, ElfFacts &F) const {
  if (Dyn.sh_link >= Sections.size())
    return damaged("a dynamic section without its string table");
  std::vector<char> Strings, Entries;
  R3_TRY(moveInto(section(Sections[Dyn.sh_link]), Strings));
  R3_TRY(moveInto(section(Dyn), Entries));
  for (size_t Off = 0; Off + sizeof(Elf64_Dyn) <= Dyn.sh_size;
       Off += sizeof(Elf64_Dyn)) {
    Elf64_Dyn D;
    std::memcpy(&D, Entries.data() + Off, sizeof(D));
    if (D.d_tag == DT_NEEDED &&
        std::strstr(stringAt(Strings, D.d_un.d_val), "libr3-host-rt.so"))
      F.NeedsHostRuntime = true;
  }
  return Error::success();
}

Expected<ElfFacts> ElfFile::read() {
  Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return errnoError(Path + ": open");
  FileSize = static_cast<uint64_t>(::lseek(Fd, 0, SEEK_END));
  ElfFacts F;
  Elf64_Ehdr H;
  if (FileSize < sizeof(H) || readAt(0, &H, sizeof(H)) ||
      std::memcmp(H.e_ident, ELFMAG, SELFMAG) != 0 ||
      H.e_ident[EI_CLASS] != ELFCLASS64 || H.e_ident[EI_DATA] != ELFDATA2LSB)
    return F; // not an ELF file we read: no facts
  F.IsElf = true;
  if (H.e_shentsize != sizeof(Elf64_Shdr))
    return damaged("unexpected section header size");
  Sections.resize(H.e_shnum);
  R3_TRY(readAt(H.e_shoff, Sections.data(), H.e_shnum * sizeof(Elf64_Shdr)));
  for (const Elf64_Shdr &S : Sections) {
    if (S.sh_type == SHT_DYNSYM)
      R3_TRY(scanSymbols(S, F));
    if (S.sh_type == SHT_DYNAMIC)
      R3_TRY(scanNeeded(S, F));
  }
  return F;
}
} // namespace

Expected<ElfFacts> readElfFacts(const std::string &Path) {
  ElfFile E(Path);
  return E.read();
}

Backend detectBackend(const ElfFacts &F) {
  return F.RefersToHostHooks || F.NeedsHostRuntime ? Backend::Host
                                                   : Backend::Cuda;
}

Expected<Backend> applicationBackend(const std::string &Path,
                                     std::string_view Chosen) {
  if (Chosen == "host")
    return Backend::Host;
  if (Chosen == "cuda")
    return Backend::Cuda;
  auto Facts = readElfFacts(Path);
  if (!Facts)
    return Facts.takeError();
  return detectBackend(*Facts);
}

} // namespace r3
