// The kernel alone (compile/KernelAlone.h): one kernel of a file with
// three, what it reaches kept (through a template, a macro and a type),
// the rest dropped, and the result compiling with nvcc.
#include "Catch.h"
#include "compile/KernelAlone.h"
#include "support/FileUtil.h"
#include "support/Process.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace r3;

namespace {
std::string input() {
  auto T = readWholeFile(std::string(R3_TEST_INPUTS) + "/alone.cu", "input");
  REQUIRE(T);
  return *T;
}
} // namespace

TEST_CASE("top-level functions of a file", "[alone]") {
  std::vector<std::string> Names;
  for (const TopFunction &F : topLevelFunctions(input()))
    Names.push_back(F.Name);
  CHECK(Names == std::vector<std::string>{"square", "cube", "twice", "unused",
                                          "scale", "other", "third", "main"});
}

TEST_CASE("one kernel alone", "[alone]") {
  std::string T = input();
  KernelAlone A = kernelAlone(T, "scale");
  REQUIRE(A.Found);
  // square through the macro, twice by its call, cube through twice.
  CHECK(A.Kept == std::vector<std::string>{"square", "cube", "twice"});
  CHECK(A.Dropped == std::vector<std::string>{"unused", "other", "third",
                                              "main"});
  CHECK(A.Text.find("__global__ void scale(") != std::string::npos);
  CHECK(A.Text.find("X[threadIdx.x] = detail::unused") == std::string::npos);
  CHECK(A.Text.find("int main()") == std::string::npos);
  CHECK(A.Text.find("struct Pair") != std::string::npos);
  CHECK(A.Text.find("__global__ void other(float *X, int N);") !=
        std::string::npos); // a declaration stays
  CHECK(A.Text.find("namespace detail {\n\n}") != std::string::npos);
  // Every kept line keeps its number.
  auto lineOf = [](const std::string &S, const std::string &What) {
    return std::count(S.begin(), S.begin() + S.find(What), '\n');
  };
  CHECK(lineOf(A.Text, "__global__ void scale(") ==
        lineOf(T, "__global__ void scale("));
  CHECK(std::count(A.Text.begin(), A.Text.end(), '\n') ==
        std::count(T.begin(), T.end(), '\n'));

  // It compiles for the device, alone.
  std::string Dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR")
                                                      : "/tmp");
  std::string Path = Dir + "/r3-alone-" + std::to_string(::getpid()) + ".cu";
  std::ofstream(Path) << A.Text;
  auto R = runCapturing({"nvcc", "-cubin", "-arch=sm_90", "-o", Path + ".cubin",
                         Path});
  REQUIRE(R);
  INFO(R->Output);
  CHECK(R->succeeded());
  ::unlink(Path.c_str());
  ::unlink((Path + ".cubin").c_str());
}

TEST_CASE("the kernel alone of a kernel the file lacks", "[alone]") {
  KernelAlone A = kernelAlone(input(), "absent");
  CHECK_FALSE(A.Found);
}
