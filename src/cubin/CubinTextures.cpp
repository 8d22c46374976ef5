// Texture and surface use of a cubin's kernels: EIATTR records and opcodes
// (the evidence for both is in CubinTextures.h).
#include "cubin/CubinTextures.h"

#include "cubin/CubinElf.h"

#include <optional>
#include <unordered_map>

namespace r3 {

namespace {
/// ELFOSABI_CUDA, the ABI of cubins before CUDA 13: e_flags' low byte is the
/// architecture (EF_CUDA_SM, as LLVM's ELF.h has it).
constexpr unsigned char OsAbiCudaV1 = 0x33;
/// The ABI of CUDA 13's cubins: the architecture is e_flags' second byte
/// (0x5a00 for sm_90, 0x6400 for sm_100, seen in nvcc 13's output).
constexpr unsigned char OsAbiCudaV2 = 0x41;
/// The architectures whose texture and surface opcodes were seen.
constexpr unsigned FirstDecodedSm = 75, LastDecodedSm = 121;
constexpr size_t InstructionBytes = 16;

unsigned smOf(const Elf64_Ehdr &H) {
  if (H.e_ident[EI_OSABI] == OsAbiCudaV1)
    return H.e_flags & 0xff;
  if (H.e_ident[EI_OSABI] == OsAbiCudaV2)
    return (H.e_flags >> 8) & 0xff;
  return 0;
}

/// A cubin's sections by name.
struct Cubin {
  const cubin::Elf &E;
  std::unordered_map<std::string, const Elf64_Shdr *> ByName;

  explicit Cubin(const cubin::Elf &E) : E(E) {
    for (const Elf64_Shdr &S : E.Sections)
      if (auto Name = E.sectionName(S))
        ByName.emplace(*Name, &S);
  }
  const Elf64_Shdr *section(const std::string &Name) const {
    auto It = ByName.find(Name);
    return It == ByName.end() ? nullptr : It->second;
  }
};

/// Whether the code in section Text has a texture or surface instruction.
Expected<bool> hasTextureInstructions(const cubin::Elf &E,
                                      const Elf64_Shdr &Text) {
  auto Code = E.contents(Text);
  if (!Code)
    return Error::make("cubin: code section lies outside the image");
  for (size_t Off = 0; Off + InstructionBytes <= Code->size();
       Off += InstructionBytes)
    if (isTextureInstruction(*cubin::readAt<uint64_t>(*Code, Off)))
      return true;
  return false;
}

/// Whether function Name's attributes (.nv.info.<Name>, if any) bind a
/// texture or surface bank.
Expected<bool> hasBankAttributes(const Cubin &C, const std::string &Name) {
  const Elf64_Shdr *Info = C.section(".nv.info." + Name);
  if (!Info)
    return false;
  auto Bytes = C.E.contents(*Info);
  if (!Bytes)
    return makeError("cubin: .nv.info.", Name, " lies outside the image");
  auto Records = readNvInfo(*Bytes);
  if (!Records)
    return makeError("cubin: .nv.info.", Name, ": ", Records.error().message());
  for (const NvInfoAttribute &A : *Records)
    if (A.Code == eiattr::TextureBank || A.Code == eiattr::SurfaceBank)
      return true;
  return false;
}

/// Whether function Name, whose code is section Text, uses textures or
/// surfaces: instructions (when Decoded) or bank attributes.
Expected<bool> functionUses(const Cubin &C, const std::string &Name,
                            const Elf64_Shdr &Text, bool Decoded) {
  if (Decoded) {
    auto Code = hasTextureInstructions(C.E, Text);
    if (!Code || *Code)
      return Code;
  }
  return hasBankAttributes(C, Name);
}

/// A separately compiled device function (its own .text section, not an
/// entry) that uses textures or surfaces, or none.
Expected<std::optional<std::string>> deviceFunctionUsing(const Cubin &C,
                                                         bool Decoded) {
  auto Symbols = C.E.symbols();
  if (!Symbols)
    return Symbols.takeError();
  for (const cubin::Symbol &S : *Symbols) {
    if (ELF64_ST_TYPE(S.Entry.st_info) != STT_FUNC ||
        (S.Entry.st_other & cubin::EntryFunction) ||
        S.Section != ".text." + S.Name)
      continue;
    auto Uses =
        functionUses(C, S.Name, C.E.Sections[S.Entry.st_shndx], Decoded);
    if (!Uses)
      return Uses.takeError();
    if (*Uses)
      return std::optional<std::string>(S.Name);
  }
  return std::optional<std::string>();
}
} // namespace

Expected<std::vector<NvInfoAttribute>>
readNvInfo(std::span<const uint8_t> Section) {
  std::vector<NvInfoAttribute> Out;
  for (size_t Off = 0; Off < Section.size();) {
    if (Section.size() - Off < 4)
      return makeError("attribute record at byte ", Off, " is cut short");
    NvInfoAttribute A;
    A.Format = Section[Off];
    A.Code = Section[Off + 1];
    A.Value = static_cast<uint16_t>(Section[Off + 2] | Section[Off + 3] << 8);
    Off += 4;
    if (A.Format < eiattr::FormatNone || A.Format > eiattr::FormatSized)
      return makeError("attribute record at byte ", Off - 4, " has format ",
                       A.Format, ", expected 1 to 4");
    if (A.Format == eiattr::FormatSized) {
      if (Section.size() - Off < A.Value)
        return makeError("attribute ", A.Code, " at byte ", Off - 4,
                         " runs past the end");
      A.Payload = Section.subspan(Off, A.Value);
      Off += A.Value;
    }
    Out.push_back(A);
  }
  return Out;
}

bool isTextureInstruction(uint64_t FirstWord) {
  unsigned Opcode = FirstWord & 0x1ff;
  return (Opcode >= 0x160 && Opcode <= 0x170) ||
         (Opcode >= 0x199 && Opcode <= 0x1a0);
}

Expected<CubinTextureUse> readCubinTextureUse(std::span<const uint8_t> Image,
                                              const std::string &Kernel) {
  auto E = cubin::readElf(Image);
  if (!E)
    return E.takeError();
  if (E->Header.e_machine != EM_CUDA)
    return makeError("cubin: ELF machine ", E->Header.e_machine,
                     ", expected EM_CUDA (", EM_CUDA, ")");
  Cubin C(*E);
  const Elf64_Shdr *Text = C.section(".text." + Kernel);
  if (!Text)
    return makeError("cubin: no code for '", Kernel, "' (.text.", Kernel, ")");
  CubinTextureUse Use;
  Use.Sm = smOf(E->Header);
  Use.Decoded = Use.Sm >= FirstDecodedSm && Use.Sm <= LastDecodedSm;
  if (Use.Decoded)
    R3_TRY(moveInto(hasTextureInstructions(*E, *Text), Use.Instructions));
  R3_TRY(moveInto(hasBankAttributes(C, Kernel), Use.References));
  std::optional<std::string> Via;
  R3_TRY(moveInto(deviceFunctionUsing(C, Use.Decoded), Via));
  Use.Via = Via.value_or("");
  return Use;
}

} // namespace r3
