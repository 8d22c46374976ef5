// Reads a capture file (format: docs/capture-format.md). open() validates the
// whole structure and the format version and loads the metadata; bulk bytes are
// read on demand, chunk by chunk, with HDF5's Fletcher32 checksums checked on
// every chunk. Every error names the file and the object:
// `cap.h5: /launches/3/pre/region_7: checksum mismatch (the stored data is
// corrupt)`.
#pragma once

#include "capture/Capture.h"
#include "support/Error.h"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace r3 {

/// Receives consecutive pieces (at most one 4 MiB chunk each) of a region.
using ByteSink =
    std::function<Error(uint64_t Offset, std::span<const uint8_t> Bytes)>;

class CaptureReader {
public:
  /// Opens and validates the capture at Path.
  static Expected<std::unique_ptr<CaptureReader>> open(const std::string &Path);
  ~CaptureReader();

  const std::string &path() const;
  uint32_t formatVersion() const;
  const CaptureHeader &header() const;
  const std::vector<ModuleInfo> &modules() const;
  const std::vector<KernelInfo> &kernels() const;
  const std::vector<LaunchInfo> &launches() const;

  /// The whole image of module M.
  Expected<std::vector<uint8_t>> readModule(uint32_t M) const;
  /// Out.size() bytes at Offset of a region of a launch, before or after it.
  /// Reading Phase::Post of an unchanged region reads its unchanged bytes.
  Error readRegion(uint32_t Launch, uint32_t Region, Phase P, uint64_t Offset,
                   std::span<uint8_t> Out) const;
  /// Streams a whole region to Sink, one chunk at a time.
  Error streamRegion(uint32_t Launch, uint32_t Region, Phase P,
                     const ByteSink &Sink) const;
  /// Reads every stored byte, so that every checksum is checked; returns the
  /// number of bytes read.
  Expected<uint64_t> verifyData() const;

  struct Impl;

private:
  explicit CaptureReader(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

} // namespace r3
