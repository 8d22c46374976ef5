// A variant's compiler settings (compile/CompileSettings.h): each encoding
// gives the settings back, older histories' JSON still reads, bad JSON is
// an error that names its key, and a toolchain drops what it cannot apply.
#include "compile/CompileSettings.h"
#include "support/Frame.h"

#include "Catch.h"
#include <nlohmann/json.hpp>

using namespace r3;
using nlohmann::json;

namespace {
CompileSettings everything() {
  CompileSettings S;
  S.Pipeline = "default<O2>,licm";
  S.CodegenOpt = 2;
  S.Toolchain = CudaToolchain::Nvrtc;
  S.MaxRegisters = 64;
  S.FastMath = true;
  S.Bounds = LaunchBoundsSpec{256, 2};
  S.SpecializeArgs = true;
  S.SpecializeDims = true;
  S.NvccOptions = {"-Xptxas", "-dlcm=cg"};
  return S;
}
} // namespace

TEST_CASE("compile settings survive their JSON", "[compile-settings]") {
  for (const CompileSettings &S : {CompileSettings{}, everything()}) {
    json J = json::object();
    writeSettingsJson(J, S, true);
    auto Back = readSettingsJson(J);
    REQUIRE(Back);
    CHECK(*Back == S);
  }
  json J = json::object();
  writeSettingsJson(J, everything(), true);
  CHECK(J["launch_bounds"] == "256,2");
  CHECK(J["specialize"] == "args,dims");
  CHECK(J["nvcc_options"] == "-Xptxas -dlcm=cg");
  CHECK(J["toolchain"] == "nvrtc");
}

TEST_CASE("host settings are the pipeline and codegen level alone",
          "[compile-settings]") {
  json J = json::object();
  writeSettingsJson(J, everything(), false);
  CHECK(J.size() == 2);
  CHECK(J["pipeline"] == "default<O2>,licm");
  CHECK(J["codegen_opt"] == 2);
}

TEST_CASE("an older history's settings still read", "[compile-settings]") {
  // What campaigns wrote before the settings had one type: an empty
  // toolchain and specialization for the defaults, bounds as text.
  json Old = json::parse(R"({"pipeline":"","codegen_opt":-1,"toolchain":"",
      "max_registers":0,"fast_math":false,"launch_bounds":"128",
      "specialize":"","cache_preference":"none","dynamic_shared":0})");
  auto S = readSettingsJson(Old);
  REQUIRE(S);
  CHECK(S->Toolchain == CudaToolchain::Llvm);
  CHECK(S->CodegenOpt == -1);
  REQUIRE(S->Bounds);
  CHECK(*S->Bounds == LaunchBoundsSpec{128, 0});
  CHECK_FALSE(S->specialized());
  Old["specialize"] = "none";
  Old["nvcc_options"] = "--extra-device-vectorization";
  S = readSettingsJson(Old);
  REQUIRE(S);
  CHECK_FALSE(S->specialized());
  CHECK(S->NvccOptions ==
        std::vector<std::string>{"--extra-device-vectorization"});
}

TEST_CASE("bad settings JSON names the key", "[compile-settings]") {
  auto Bad = [](const char *Text) {
    auto S = readSettingsJson(json::parse(Text));
    REQUIRE_FALSE(S);
    return S.error().message();
  };
  CHECK(Bad(R"({"toolchain":"gcc"})") ==
        "settings: 'toolchain' must be llvm, nvrtc or nvcc, got 'gcc'");
  CHECK(Bad(R"({"codegen_opt":7})") ==
        "settings: 'codegen_opt' must be an integer from -1 to 3, got 7");
  CHECK(Bad(R"({"max_registers":"64"})").find("'max_registers'") !=
        std::string::npos);
  CHECK(Bad(R"({"fast_math":1})") ==
        "settings: 'fast_math' must be true or false, got 1");
  CHECK(Bad(R"({"launch_bounds":"0"})")
            .find("settings: 'launch_bounds': "
                  "launch bounds must be") == 0);
  CHECK(Bad(R"({"specialize":"everything"})").find("'specialize'") !=
        std::string::npos);
  CHECK(Bad("[1]").find("must be a JSON object") != std::string::npos);
}

TEST_CASE("compile settings survive their frames", "[compile-settings]") {
  for (const CompileSettings &S : {CompileSettings{}, everything()}) {
    wire::MetaWriter W;
    encodeSettings(W, S);
    W.u32(77); // what follows in a message is still where it was
    wire::MetaReader R(W.data());
    CompileSettings Back = decodeSettings(R);
    CHECK(R.u32() == 77);
    REQUIRE_FALSE(R.finish("settings"));
    CHECK(Back == S);
  }
  // A truncated frame is the reader's error, never a crash.
  wire::MetaWriter W;
  encodeSettings(W, everything());
  std::vector<uint8_t> Cut(W.data().begin(), W.data().end() - 5);
  wire::MetaReader R(Cut);
  (void)decodeSettings(R);
  CHECK(R.finish("settings"));
}

TEST_CASE("specialize's words", "[compile-settings]") {
  CompileSettings S;
  REQUIRE_FALSE(parseSpecialize("dims", S));
  CHECK(specializeText(S) == "dims");
  REQUIRE_FALSE(parseSpecialize("all", S));
  CHECK(specializeText(S) == "args,dims");
  REQUIRE_FALSE(parseSpecialize("none", S));
  CHECK(specializeText(S) == "none");
  REQUIRE_FALSE(parseSpecialize("args,dims", S));
  CHECK(S.SpecializeArgs);
  CHECK(S.SpecializeDims);
  Error E = parseSpecialize("args,sizes", S);
  REQUIRE(E);
  CHECK(E.message() ==
        "specialize expects args, dims, args,dims, all or none, got "
        "'args,sizes'");
}

TEST_CASE("a toolchain drops what it cannot apply", "[compile-settings]") {
  CompileSettings S = everything(); // nvrtc
  dropInapplicable(S);
  CHECK(S.Pipeline.empty());
  CHECK_FALSE(S.specialized());
  CHECK(S.Bounds);              // nvrtc applies bounds to its PTX
  CHECK(S.NvccOptions.empty()); // only nvcc takes nvcc options
  S = everything();
  S.Toolchain = CudaToolchain::Nvcc;
  dropInapplicable(S);
  CHECK_FALSE(S.Bounds);
  CHECK(S.NvccOptions.size() == 2);
  S = everything();
  S.Toolchain = CudaToolchain::Llvm;
  dropInapplicable(S);
  CHECK(S.Pipeline == "default<O2>,licm");
  CHECK(S.specialized());
  CHECK(S.Bounds);
  CHECK(S.NvccOptions.empty());
}
