// Writes a capture file (format: docs/capture-format.md). Small metadata is
// kept in memory and written by finish(); bulk bytes (module images, region
// contents) stream to disk chunk by chunk as they are produced, so regions of
// many GiB never sit in memory whole. The file is written under a temporary
// name and renamed into place by finish(): a writer killed midway leaves no
// file that reads as valid.
#pragma once

#include "capture/Capture.h"
#include "support/Error.h"

#include <functional>
#include <memory>
#include <span>
#include <string>

namespace r3 {

/// Fills Out with the bytes at Offset of the region being written. Called with
/// consecutive offsets, at most one chunk (4 MiB) at a time.
using ByteSource =
    std::function<Error(uint64_t Offset, std::span<uint8_t> Out)>;

/// A ByteSource reading from memory that outlives the write.
ByteSource bytesFrom(std::span<const uint8_t> Bytes);

/// How bulk datasets are stored; Fletcher32 checksums are always on.
enum class CaptureCompression { None, Deflate };

class CaptureWriter {
public:
  /// Starts a capture that finish() will place at Path.
  static Expected<std::unique_ptr<CaptureWriter>>
  create(const std::string &Path, const CaptureHeader &Header,
         CaptureCompression Compression = CaptureCompression::None);
  ~CaptureWriter();

  /// Adds a module image (cubin or LLVM bitcode); returns its index.
  Expected<uint32_t> addModule(ModuleKind Kind, std::span<const uint8_t> Image);
  /// Adds a kernel of an already added module; returns its index.
  Expected<uint32_t> addKernel(const KernelInfo &Kernel);
  /// Starts a launch of an already added kernel; its Regions are ignored (add
  /// them with addRegion). Returns the launch's index.
  Expected<uint32_t> beginLaunch(const LaunchInfo &Launch);
  /// Adds a region live at the launch, with its bytes before the launch.
  Expected<uint32_t> addRegion(uint32_t Launch, const RegionInfo &Region,
                               const ByteSource &Before);
  /// Stores the bytes after the launch of a region the launch changed.
  Error addChangedRegion(uint32_t Launch, uint32_t Region,
                         const ByteSource &After);
  /// The in-application duration of a recorded launch.
  void setLaunchDuration(uint32_t Launch, uint64_t Nanoseconds);
  /// One more in-application launch duration of a kernel, recorded or not.
  void addAppDuration(uint32_t Kernel, uint64_t Nanoseconds);

  /// Writes the metadata, marks the file complete and renames it into place.
  Error finish();

  struct Impl;

private:
  explicit CaptureWriter(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

} // namespace r3
