// `r3 host-flags`: compiler and linker flags that instrument CPU kernels, used
// like pkg-config inside $(...). The output is split into words by the shell
// and never unquoted, so every word printed must be free of whitespace and
// quotes; a --kernel pattern that is not is refused with a way out (\s).
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "cli/Installed.h"
#include "support/Paths.h"

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace r3::cli {

namespace fs = std::filesystem;

namespace {
const Installed Plugin{"r3-host-plugin.so", "pass plugin", "r3-host-plugin"};
const Installed Runtime{"libr3-host-rt.so", "host runtime", "r3-host-rt"};

/// Where r3 keeps its plugin and runtimes: <dir of r3>/../lib/r3.
Expected<fs::path> pkgLibDir() {
  fs::path Exe = selfExecutable();
  if (Exe.empty())
    return makeError("cannot find the r3 executable (/proc/self/exe is "
                     "unreadable)");
  std::error_code EC;
  fs::path Dir =
      fs::weakly_canonical(Exe.parent_path() / ".." / "lib" / "r3", EC);
  if (EC)
    return makeError("cannot resolve r3's library directory beside ",
                     Exe.string(), ": ", EC.message());
  return Dir;
}

bool splitsOrQuotes(const std::string &S) {
  return S.find_first_of(" \t\n\v\f\r'\"`") != std::string::npos;
}

} // namespace

Expected<std::string> installedFile(const Installed &F) {
  auto Dir = pkgLibDir();
  if (!Dir)
    return Dir.takeError();
  fs::path P = *Dir / F.File;
  std::error_code EC;
  if (!fs::is_regular_file(P, EC))
    return makeError("the ", F.What, " is not at ", P.string(),
                     ", where r3 expects it (<prefix>/lib/r3 beside "
                     "<prefix>/bin/r3); reinstall r3 or build its ",
                     F.Target, " target");
  if (splitsOrQuotes(P.string()))
    return makeError("r3 is installed under ", P.parent_path().string(),
                     ", a path with whitespace or a quote, which $(r3 "
                     "host-flags) cannot pass to clang as one word");
  return P.string();
}

namespace {
Error checkPattern(const std::string &P) {
  if (P.empty())
    return Error::make("--kernel expects a regular expression, got ''");
  if (splitsOrQuotes(P))
    return makeError("--kernel '", P,
                     "': a space or quote would not survive the shell's "
                     "word splitting of $(r3 host-flags ...); write \\s for a "
                     "space and leave quotes out");
  try {
    std::regex R(P, std::regex::ECMAScript);
  } catch (const std::regex_error &E) {
    return makeError("--kernel '", P, "': not a valid regular expression (",
                     E.what(), ")");
  }
  return Error::success();
}

Expected<std::string> compileFlags(const std::vector<std::string> &Patterns) {
  for (const std::string &P : Patterns)
    R3_TRY(checkPattern(P));
  auto Path = installedFile(Plugin);
  if (!Path)
    return Path.takeError();
  // -Xclang -load makes the plugin's -r3-kernel option known before -mllvm
  // is parsed; -fpass-plugin adds its pass. Value names give the descriptors
  // the parameters' source names without -g.
  std::string Out = "-fpass-plugin=" + *Path + " -Xclang -load -Xclang " +
                    *Path + " -fno-discard-value-names";
  for (const std::string &P : Patterns)
    Out += " -mllvm -r3-kernel=" + P;
  return Out;
}

Expected<std::string> linkFlags() {
  auto Path = installedFile(Runtime);
  if (!Path)
    return Path.takeError();
  std::string Dir = fs::path(*Path).parent_path().string();
  return "-L" + Dir + " -Wl,-rpath," + Dir + " -lr3-host-rt";
}

int runHostFlags(const ParsedArgs &A) {
  if (!A.Positional.empty())
    return usageError("'r3 host-flags' takes no positional arguments, got '" +
                          A.Positional.front() + "'",
                      "host-flags");
  auto Kernels = A.Values.find("--kernel");
  bool HasKernels = Kernels != A.Values.end();
  if (A.has("--libs") && HasKernels)
    return usageError("--libs prints the link flags and takes no --kernel "
                      "(run r3 host-flags once for each step)",
                      "host-flags");
  auto Flags = A.has("--libs")
                   ? linkFlags()
                   : compileFlags(HasKernels ? Kernels->second
                                             : std::vector<std::string>());
  if (!Flags)
    return fail(Flags.error());
  std::printf("%s\n", Flags->c_str());
  return ExitSuccess;
}
} // namespace

CommandSpec hostFlagsCommand() {
  return {
      "host-flags",
      "print clang flags that instrument CPU kernels for recording",
      "[--kernel REGEX]... | --libs",
      "Use like pkg-config, in two steps:\n"
      "  clang-19 $(r3 host-flags --kernel 'REGEX') -O2 -c app.c\n"
      "  clang-19 app.o -o app $(r3 host-flags --libs)\n"
      "The compile flags load r3's pass plugin into clang-19. It instruments\n"
      "every defined function whose mangled or demangled name contains a\n"
      "match of a --kernel ECMAScript regular expression (the option "
      "repeats),\n"
      "and, with or without --kernel, every function declared with\n"
      "__attribute__((annotate(\"r3_kernel\"))). A pattern may hold no\n"
      "whitespace or quotes, since $(...) splits words: write \\s for a "
      "space.\n"
      "The link flags add r3's host runtime (libr3-host-rt.so), which\n"
      "`r3 record --backend host` talks to. Both files live in "
      "<prefix>/lib/r3\n"
      "beside <prefix>/bin/r3.",
      {{"--kernel", "", Arity::Value, "REGEX", "the functions to instrument"},
       {"--libs", "", Arity::Flag, "", "print the link flags instead"}},
      false,
      runHostFlags};
}

} // namespace r3::cli
