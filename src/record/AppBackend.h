// Which backend an application uses, for `r3 record` without --backend: a
// small ELF reader looks at the application's dynamic symbols and needed
// libraries. An application instrumented for the host backend refers to
// __r3_host_register_unit and links libr3-host-rt.so; anything else is taken
// to be a CUDA application.
#pragma once

#include "capture/Capture.h"
#include "support/Error.h"

#include <string>
#include <string_view>

namespace r3 {

/// What the ELF file at a path says about the host runtime.
struct ElfFacts {
  bool IsElf = false;             ///< a 64-bit little-endian ELF file
  bool RefersToHostHooks = false; ///< __r3_host_register_unit in .dynsym
  bool NeedsHostRuntime = false;  ///< DT_NEEDED libr3-host-rt.so
};

/// Reads the dynamic symbol table and DT_NEEDED entries of Path. A file that
/// is not ELF (a script) gives IsElf = false, not an error; a damaged ELF file
/// is an error naming it.
Expected<ElfFacts> readElfFacts(const std::string &Path);

/// The backend an application with these facts records with.
Backend detectBackend(const ElfFacts &F);

/// The backend the program at Path runs with: Chosen ("host" or "cuda", as
/// --backend gives it), or, when Chosen is empty, what its ELF file says.
Expected<Backend> applicationBackend(const std::string &Path,
                                     std::string_view Chosen);

} // namespace r3
