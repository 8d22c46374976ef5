// The CUDA part of `r3 export` (Export.cpp): the best candidate's code as
// the GPU runs it (its cubin and PTX, recompiled from its source and
// settings through the compile cache, or the recorded cubin when the best
// is the application's own code at another launch), and the `r3 replay`
// command line that evaluates it again on the capture.
#pragma once

#include "compile/CompileSettings.h"
#include "support/Error.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace r3::cli {

struct CudaExportInput {
  std::string Capture;    ///< the campaign's capture (absolute)
  std::string KernelName; ///< as the campaign names it
  std::string GridRule;   ///< LaunchRule.h syntax; empty: keep-threads
  /// The best's source text and the name export writes it under; an empty
  /// text: the recorded cubin.
  std::string SourceText, SourceName;
  std::string Dir;                ///< the export folder (absolute)
  std::vector<std::string> Flags; ///< cflags, -I, -D
  /// The candidate's settings_json: its launch part (block, dynamic shared
  /// memory, cache preference) is read from here...
  nlohmann::ordered_json Settings;
  CompileSettings Compiler; ///< ...its compiler part, as readSettingsJson
};

struct CudaExportFiles {
  std::vector<std::pair<std::string, std::string>> Files; ///< name, bytes
  std::string ReplayCommand;
};

/// The cubin (and PTX) of the best candidate, and its replay command.
Expected<CudaExportFiles> exportCudaCode(const CudaExportInput &In);

} // namespace r3::cli
