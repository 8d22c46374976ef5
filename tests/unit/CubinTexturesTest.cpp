// The cubin texture reader on cubins nvcc compiled at build time (the
// kernels of Inputs/textures.cu for three architectures, separately compiled
// device functions, PTX texture references), on attribute records and
// opcodes written by hand, and on damaged images.
#include "Catch.h"

#include "cubin/CubinTextures.h"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <iterator>

using namespace r3;

namespace {
std::vector<uint8_t> fixture(const std::string &Name) {
  std::ifstream In(std::string(R3_TEST_CUBIN_DIR) + "/" + Name,
                   std::ios::binary);
  return {std::istreambuf_iterator<char>(In), std::istreambuf_iterator<char>()};
}

CubinTextureUse use(const std::vector<uint8_t> &Image,
                    const std::string &Kernel) {
  auto U = readCubinTextureUse(Image, Kernel);
  INFO(Kernel << ": " << (U ? "" : U.error().message()));
  REQUIRE(U);
  return *U;
}

/// Image with its ELF header's OS ABI byte and flags replaced.
std::vector<uint8_t> withArch(std::vector<uint8_t> Image, uint8_t OsAbi,
                              uint32_t Flags) {
  Image[EI_OSABI] = OsAbi;
  std::memcpy(Image.data() + offsetof(Elf64_Ehdr, e_flags), &Flags, 4);
  return Image;
}
} // namespace

TEST_CASE("cubin textures: kernels that read textures or surfaces are told "
          "from those that do not, in each encoding",
          "[cubin]") {
  for (unsigned Sm : {75u, 90u, 100u}) {
    INFO("sm_" << Sm);
    std::vector<uint8_t> Image =
        fixture("textures-sm" + std::to_string(Sm) + ".cubin");
    REQUIRE(Image.size() > 64);
    for (const char *K : {"fetch_param", "sample_struct", "fetch_memory",
                          "surface_write", "calls_lookup"}) {
      CubinTextureUse U = use(Image, K);
      INFO(K);
      CHECK(U.Sm == Sm);
      CHECK(U.Decoded);
      CHECK(U.Instructions);
      CHECK_FALSE(U.References);
      CHECK(U.Via.empty());
    }
    for (const char *K : {"plain_handle", "calls_twice"}) {
      CubinTextureUse U = use(Image, K);
      INFO(K);
      CHECK(U.Decoded);
      CHECK_FALSE(U.uses());
    }
  }
}

TEST_CASE("cubin textures: a separately compiled device function with "
          "texture code counts for every kernel of its module",
          "[cubin]") {
  std::vector<uint8_t> Image = fixture("textures-rdc.cubin");
  for (const char *K : {"calls_lookup", "calls_twice"}) {
    CubinTextureUse U = use(Image, K);
    INFO(K);
    CHECK_FALSE(U.Instructions);
    CHECK(U.Via == "_Z6lookupyi");
    CHECK(U.uses());
  }
}

TEST_CASE("cubin textures: texture and surface references bind banks",
          "[cubin]") {
  std::vector<uint8_t> Image = fixture("texrefs.cubin");
  for (const char *K : {"use_texref", "use_surfref"}) {
    CubinTextureUse U = use(Image, K);
    INFO(K);
    CHECK(U.References);
    CHECK(U.Instructions);
  }
  CHECK_FALSE(use(Image, "no_reference").uses());
}

TEST_CASE("cubin textures: the architecture comes from either ELF ABI, and "
          "code of other architectures is not decoded",
          "[cubin]") {
  std::vector<uint8_t> Image = fixture("textures-sm90.cubin");
  // CUDA 13's ABI: the architecture in e_flags' second byte.
  CubinTextureUse Old = use(withArch(Image, 0x41, 0x5003d04), "fetch_param");
  CHECK(Old.Sm == 61);
  CHECK_FALSE(Old.Decoded);
  CHECK_FALSE(Old.Instructions);
  // The ABI before it (ELFOSABI_CUDA): the architecture in the low byte.
  CubinTextureUse V1 = use(withArch(Image, 0x33, 0x5a055a), "fetch_param");
  CHECK(V1.Sm == 90);
  CHECK(V1.Decoded);
  CHECK(V1.Instructions);
  CHECK(use(withArch(Image, 0, 0x5a05a), "fetch_param").Sm == 0);
  // Bank attributes are read whatever the architecture.
  std::vector<uint8_t> Refs = fixture("texrefs.cubin");
  CHECK(use(withArch(Refs, 0x41, 0x5003d04), "use_texref").References);
}

TEST_CASE("cubin textures: opcodes 0x160-0x170 and 0x199-0x1a0 are texture "
          "and surface instructions, whatever the operand form",
          "[cubin]") {
  for (uint64_t Op : {0x160, 0x161, 0x166, 0x16c, 0x170, 0x199, 0x19d, 0x1a0})
    for (uint64_t Form : {0x0, 0x200, 0x800, 0xe00})
      CHECK(isTextureInstruction(Op | Form | 0x1234567000ull));
  for (uint64_t Op : {0x15f, 0x171, 0x182, 0x189, 0x198, 0x1a1, 0x1ac, 0x002})
    for (uint64_t Form : {0x0, 0x200, 0x800, 0xe00})
      CHECK_FALSE(isTextureInstruction(Op | Form));
}

TEST_CASE("cubin textures: .nv.info records", "[cubin]") {
  // NVAL 0x35, BVAL 0x15 = 3, HVAL 0x1b = 255, SVAL 0x17 with 4 bytes.
  std::vector<uint8_t> Info = {0x01, 0x35, 0x00, 0x00, 0x02, 0x15, 0x03,
                               0x00, 0x03, 0x1b, 0xff, 0x00, 0x04, 0x17,
                               0x04, 0x00, 0xde, 0xad, 0xbe, 0xef};
  auto R = readNvInfo(Info);
  REQUIRE(R);
  REQUIRE(R->size() == 4);
  CHECK((*R)[0].Format == eiattr::FormatNone);
  CHECK((*R)[0].Code == 0x35);
  CHECK((*R)[1].Code == eiattr::TextureBank);
  CHECK((*R)[1].Value == 3);
  CHECK((*R)[2].Value == 255);
  CHECK((*R)[3].Value == 4);
  REQUIRE((*R)[3].Payload.size() == 4);
  CHECK((*R)[3].Payload[3] == 0xef);
  CHECK(readNvInfo({})->empty());

  std::vector<uint8_t> Short(Info.begin(), Info.begin() + 18);
  CHECK(readNvInfo(Short).error().message() ==
        "attribute 23 at byte 12 runs past the end");
  std::vector<uint8_t> Cut(Info.begin(), Info.begin() + 6);
  CHECK(readNvInfo(Cut).error().message() ==
        "attribute record at byte 4 is cut short");
  std::vector<uint8_t> Bad = {0x07, 0x15, 0x00, 0x00};
  CHECK(readNvInfo(Bad).error().message() ==
        "attribute record at byte 0 has format 7, expected 1 to 4");
}

TEST_CASE("cubin textures: damaged images and missing kernels are errors, not "
          "crashes",
          "[cubin]") {
  std::vector<uint8_t> Image = fixture("textures-sm90.cubin");
  REQUIRE(Image.size() > 64);
  CHECK(readCubinTextureUse(std::vector<uint8_t>(100, 0), "k")
            .error()
            .message() == "cubin: not an ELF image");
  CHECK(readCubinTextureUse(Image, "nope").error().message() ==
        "cubin: no code for 'nope' (.text.nope)");
  for (size_t Len = 0; Len < Image.size(); Len += 7) {
    auto R = readCubinTextureUse(std::span(Image.data(), Len), "fetch_param");
    if (!R)
      CHECK(R.error().message().rfind("cubin: ", 0) == 0);
  }
  std::vector<uint8_t> NotCuda = Image;
  NotCuda[offsetof(Elf64_Ehdr, e_machine)] = EM_X86_64;
  NotCuda[offsetof(Elf64_Ehdr, e_machine) + 1] = 0;
  CHECK(readCubinTextureUse(NotCuda, "fetch_param").error().message() ==
        "cubin: ELF machine 62, expected EM_CUDA (190)");
}
