// Flags from compile_commands.json: the entry of the source, include paths
// made absolute against its directory, nvcc spellings translated, outputs and
// host-only options dropped, and the errors for a missing entry or database.
#include "Catch.h"

#include "compile/CompileCommands.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace r3;
namespace fs = std::filesystem;

namespace {
std::string writeDatabase(const std::string &Text) {
  fs::path Dir =
      fs::temp_directory_path() / ("r3-cc-test-" + std::to_string(::getpid()));
  fs::create_directories(Dir);
  std::ofstream(Dir / "compile_commands.json") << Text;
  return (Dir / "compile_commands.json").string();
}
} // namespace

TEST_CASE("command lines split like a shell", "[compile-commands]") {
  CHECK(splitCommandLine(R"(a 'b c' "d e" f\ g)") ==
        std::vector<std::string>{"a", "b c", "d e", "f g"});
  CHECK(splitCommandLine("  ").empty());
  CHECK(splitCommandLine(R"(-DX="1 2")") ==
        std::vector<std::string>{"-DX=1 2"});
}

TEST_CASE("device flags keep includes, macros and the standard",
          "[compile-commands]") {
  std::vector<std::string> Words = {"/usr/local/cuda/bin/nvcc",
                                    "-Iinc",
                                    "-I",
                                    "/abs",
                                    "-isystem",
                                    "sys",
                                    "-DN=4",
                                    "-D",
                                    "M",
                                    "-UOLD",
                                    "--std",
                                    "c++17",
                                    "-O3",
                                    "-c",
                                    "x.cu",
                                    "-o",
                                    "x.o",
                                    "-Xcompiler=-fPIC",
                                    "--generate-code=arch=compute_90",
                                    "--define-macro=K=2",
                                    "--include-path=more"};
  CHECK(deviceFlags(Words, "/build") ==
        std::vector<std::string>{"-I/build/inc", "-I/abs", "-isystem",
                                 "/build/sys", "-DN=4", "-DM", "-UOLD",
                                 "-std=c++17", "-DK=2", "-I/build/more"});
}

TEST_CASE("the entry of the source is found", "[compile-commands]") {
  std::string Db = writeDatabase(R"([
    {"directory": "/home/ada/proj/build", "file": "/home/ada/proj/src/other.cu",
     "command": "nvcc -DOTHER -c /home/ada/proj/src/other.cu"},
    {"directory": "/home/ada/proj/build", "file": "../src/k.cu",
     "arguments": ["clang++", "-x", "cuda", "-Iinclude", "-DK", "-c",
                   "../src/k.cu", "-o", "k.o"]}])");
  auto F = flagsFromCompileCommands(Db, "/home/ada/proj/src/k.cu");
  REQUIRE(F);
  CHECK(*F ==
        std::vector<std::string>{"-I/home/ada/proj/build/include", "-DK"});
  auto Missing = flagsFromCompileCommands(Db, "/home/ada/proj/src/none.cu");
  REQUIRE(!Missing);
  CHECK(Missing.error().message() ==
        Db + ": no entry for '/home/ada/proj/src/none.cu' (2 entries); pass "
             "the flags "
             "with --cflags instead");
}

TEST_CASE("a malformed database is an error", "[compile-commands]") {
  std::string Db = writeDatabase("{\"not\": \"an array\"}");
  auto F = flagsFromCompileCommands(Db, "k.cu");
  REQUIRE(!F);
  CHECK(F.error().message() ==
        Db + ": expected a JSON array of compile commands");
  auto None = flagsFromCompileCommands("/no/such/db.json", "k.cu");
  REQUIRE(!None);
  CHECK(None.error().message() ==
        "/no/such/db.json: cannot read the compile commands: No such file or "
        "directory");
}
