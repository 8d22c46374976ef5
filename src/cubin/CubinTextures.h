// Whether a kernel of a cubin reads textures or surfaces, decided from the
// cubin itself, so that the recorder refuses exactly the launches whose
// capture could not replay (Textures.h) instead of guessing from parameter
// values.
//
// Two sources, both found by compiling kernels with and without texture and
// surface use with nvcc 13 and comparing the cubins:
// - The per-function attribute lists (.nv.info.<kernel>, EIATTR records).
//   Texture and surface *references* (PTX .texref/.surfref, module-scope or
//   .texref kernel parameters) add EIATTR_BINDLESS_TEXTURE_BANK (0x15) and
//   EIATTR_BINDLESS_SURFACE_BANK (0x16). Texture and surface *objects*
//   (cudaTextureObject_t, cudaSurfaceObject_t) add no attribute at all (seen
//   for sm_75, 80, 86, 89, 90, 100 and 120): a kernel that fetches through
//   one has the same attribute codes as one that only stores the handle as
//   an integer, and the module's .nv.info is the same too.
// - So the machine code is read. Every sm_75 to sm_121 instruction is 16 bytes
//   whose low 9 bits are the opcode (bits 9 to 11 vary with the operand form,
//   e.g. a handle in a constant bank or in a register). Every texture and
//   surface access tried compiled to opcodes 0x160 to 0x170 (textures) and
//   0x199 to 0x1a0 (surfaces): tex1Dfetch, tex1D/2D/3D, layered, cubemap,
//   Lod, Grad, gather, sparse and surf*read/write with handles in parameters,
//   structs, __constant__, shared and device memory, on sm_75, 80, 86, 89,
//   90, 100 and 120 (a sample of them on 87, 88, 103, 110 and 121: every
//   architecture nvcc 13 targets), and PTX txq, suq, sured, sust.p, tld4 and
//   tex.level on sm_75, 86, 90, 100 and 120. No instruction of the
//   cubins in cuRAND, cuSOLVER and cuSPARSE (344 functions for each of nine
//   architectures, about 4.1 million instructions) falls in those ranges.
// Code of other architectures is not decoded, and the caller falls back to
// what it can see from the launch (LaunchChecks.h).
//
// Whole-program compilation clones the device functions a kernel calls into
// its own .text section, so the kernel's section is all the code it runs.
// With separate compilation (-rdc) a device function keeps its own section;
// calls are not followed, so such a function with texture instructions counts
// for every kernel of the module (Via).
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3 {

/// EIATTR codes and record formats of .nv.info sections. Every record is a
/// 4-byte header (format, code, a 16-bit value) followed, for EIFMT_SVAL, by
/// that many bytes of payload: the header is there for EIFMT_NVAL too.
namespace eiattr {
inline constexpr uint8_t FormatNone = 1;  ///< EIFMT_NVAL: no value
inline constexpr uint8_t FormatByte = 2;  ///< EIFMT_BVAL: the value's low byte
inline constexpr uint8_t FormatHalf = 3;  ///< EIFMT_HVAL: the 16-bit value
inline constexpr uint8_t FormatSized = 4; ///< EIFMT_SVAL: value bytes follow
inline constexpr uint8_t TextureBank = 0x15; ///< EIATTR_BINDLESS_TEXTURE_BANK
inline constexpr uint8_t SurfaceBank = 0x16; ///< EIATTR_BINDLESS_SURFACE_BANK
} // namespace eiattr

/// One record of an .nv.info section.
struct NvInfoAttribute {
  uint8_t Format = 0;
  uint8_t Code = 0;
  uint16_t Value = 0; ///< the value, or for FormatSized the payload's size
  std::span<const uint8_t> Payload; ///< FormatSized's payload
};

/// The records of an .nv.info section's bytes, in order; an error when one
/// has an unknown format or runs past the end.
Expected<std::vector<NvInfoAttribute>>
readNvInfo(std::span<const uint8_t> Section);

/// Whether a 16-byte sm_75 to sm_121 instruction, given its first 8 bytes, is
/// a texture or surface instruction.
bool isTextureInstruction(uint64_t FirstWord);

/// What a cubin says about one kernel's textures and surfaces.
struct CubinTextureUse {
  unsigned Sm = 0; ///< the architecture of the code: 90 for sm_90
  /// The code is of an architecture whose instructions are decoded (sm_75 to
  /// sm_121); otherwise Instructions and Via are false and say nothing.
  bool Decoded = false;
  /// The kernel's code has texture or surface instructions.
  bool Instructions = false;
  /// The kernel's attributes bind a texture or surface bank: it reads
  /// texture or surface references.
  bool References = false;
  /// A separately compiled device function of the module that has texture or
  /// surface instructions or bank attributes (the first one), which the
  /// kernel may call; empty when there is none.
  std::string Via;

  bool uses() const { return Instructions || References || !Via.empty(); }
};

/// The texture and surface use of Kernel (a mangled name) in a cubin. Image
/// bytes are untrusted: a damaged image, one that is not a cubin (PTX, a
/// fatbinary) or one without Kernel's code is an error, never a crash.
Expected<CubinTextureUse> readCubinTextureUse(std::span<const uint8_t> Image,
                                              const std::string &Kernel);

} // namespace r3
