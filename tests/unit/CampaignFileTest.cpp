// The campaign file: the reference campaign parses; every class of mistake
// is reported with its line and column, all of them at once; the spaces a
// campaign defines have the sizes and settings their domains imply.
#include "Catch.h"

#include "campaign/Campaign.h"
#include "campaign/WorkerCompile.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace r3;

namespace {

/// A temporary folder holding a campaign's files, removed afterwards.
struct Folder {
  fs::path Dir;
  Folder() {
    Dir = fs::temp_directory_path() /
          ("r3-campaign-test-" + std::to_string(getpid()) + "-" +
           std::to_string(Counter++));
    fs::create_directories(Dir);
  }
  ~Folder() { fs::remove_all(Dir); }
  std::string touch(const std::string &Name) const {
    fs::create_directories((Dir / Name).parent_path());
    std::ofstream(Dir / Name) << "";
    return (Dir / Name).string();
  }
  std::string path(const std::string &Name) const {
    return (Dir / Name).string();
  }
  static inline int Counter = 0;
};

std::string readText(const std::string &Path) {
  std::ifstream In(Path);
  std::ostringstream S;
  S << In.rdbuf();
  return S.str();
}

/// The pass list's entries, read independently of the parser.
std::vector<std::string> passEntries(const std::string &Path) {
  std::vector<std::string> Out;
  std::ifstream In(Path);
  for (std::string Line; std::getline(In, Line);)
    if (!Line.empty() && Line[0] != '#')
      Out.push_back(Line);
  return Out;
}

/// Points the default pass list at the source tree's share folder.
void useTestShare() { setenv("R3_SHARE_DIR", R3_TEST_SHARE, 1); }

/// A minimal valid host campaign with Extra appended (its files exist in F).
std::string campaignText(const Folder &F, const std::string &Extra) {
  F.touch("k.h5");
  return "[[kernel]]\nname = \"k\"\ncapture = \"k.h5\"\n" + Extra;
}

Expected<Campaign> parse(const Folder &F, const std::string &Text) {
  useTestShare();
  return parseCampaign(Text, F.path("c.toml"));
}

/// The error message of a campaign that must fail.
std::string mistakes(const Folder &F, const std::string &Text) {
  auto C = parse(F, Text);
  REQUIRE_FALSE(C);
  return C.error().message();
}

std::vector<std::string> lines(const std::string &S) {
  std::vector<std::string> Out;
  std::istringstream In(S);
  for (std::string L; std::getline(In, L);)
    Out.push_back(L);
  return Out;
}

} // namespace

TEST_CASE("the reference campaign parses as a host campaign", "[campaign]") {
  Folder F;
  F.touch("matmul.h5");
  F.touch("matmul.c");
  std::string Text = readText(std::string(R3_TEST_SHARE) + "/campaign.toml");
  REQUIRE(!Text.empty());
  auto C = parse(F, Text);
  INFO((C ? "" : C.error().message()));
  REQUIRE(C);
  CHECK(C->Target == Backend::Host);
  CHECK(C->Database == F.path("history.db"));
  CHECK(C->Text == Text);
  REQUIRE(C->Kernels.size() == 1);
  const KernelSpec &K = C->Kernels[0];
  CHECK(K.Name == "matmul");
  CHECK(K.Capture == F.path("matmul.h5"));
  CHECK(K.Source == F.path("matmul.c"));
  CHECK(K.Launches.empty());
  REQUIRE(K.Knobs.size() == 2);
  CHECK(K.Knobs[0].Name == "TILE");
  CHECK(K.Knobs[0].Values == std::vector<std::string>{"8", "16", "32"});
  CHECK(C->Budget.Evaluations == 200);
  CHECK(C->Budget.WallSeconds == 7200);
  CHECK(C->Budget.TargetSpeedup == 1.5);
  CHECK(C->Compiler.Pipelines.size() == 3);
  CHECK(C->Compiler.MaxPasses == 4);
  CHECK(C->Compiler.PassList ==
        fs::path(std::string(R3_TEST_SHARE) + "/passes/host.txt")
            .lexically_normal()
            .string());
  CHECK(C->Compiler.Passes ==
        passEntries(std::string(R3_TEST_SHARE) + "/passes/host.txt"));
  REQUIRE(C->Source.Descriptors.size() == 2);
  CHECK(C->Source.Descriptors[0].Name == "knob:TILE");
  CHECK(C->Source.Descriptors[0].Max == 2);
  CHECK(C->Source.Descriptors[0].Bins == 3);
  CHECK(C->Evaluation.Repetitions == 20);
}

/// The reference campaign as a CUDA campaign: the backend switched and the
/// commented-out cuda-only keys (and [launch], and the kernel's share)
/// uncommented.
std::string cudaReference(const std::string &Text) {
  static const char *CudaKeys[] = {
      "[launch]",       "max_registers",    "fast_math", "launch_bounds",
      "specialize",     "block_x",          "block_y",   "block_z",
      "dynamic_shared", "cache_preference", "flush_l2",  "nvcc_options",
      "share"};
  std::istringstream In(Text);
  std::string Out;
  for (std::string L; std::getline(In, L);) {
    for (const char *K : CudaKeys)
      if (L.rfind(std::string("# ") + K, 0) == 0)
        L = L.substr(2);
    if (L == "backend = \"host\"")
      L = "backend = \"cuda\"";
    Out += L + "\n";
  }
  return Out;
}

TEST_CASE("the reference campaign's cuda-only keys are valid on cuda",
          "[campaign]") {
  Folder F;
  F.touch("matmul.h5");
  F.touch("matmul.c");
  std::string Host = readText(std::string(R3_TEST_SHARE) + "/campaign.toml");
  std::string Cuda = cudaReference(Host);
  REQUIRE(Cuda != Host);
  auto C = parse(F, Cuda);
  INFO((C ? "" : C.error().message()));
  REQUIRE(C);
  CHECK(C->Target == Backend::Cuda);
  CHECK(C->Launch.BlockX == std::vector<uint32_t>{32, 64, 128, 256});
  CHECK(C->Compiler.FastMath == std::vector<bool>{false, true});
  CHECK(C->Compiler.NvccOptions ==
        std::vector<std::string>{"", "--extra-device-vectorization"});
  CHECK(C->Kernels[0].Share == 0.42);
  CHECK(C->Compiler.PassList.ends_with("passes/cuda.txt"));
  search::Space S = innerSpace(*C);
  CHECK(S.find("block_x") >= 0);
  CHECK(S.find("max_registers") >= 0);
  // With backend = "host" the same keys are each refused.
  std::string HostWithCudaKeys = Cuda;
  HostWithCudaKeys.replace(HostWithCudaKeys.find("backend = \"cuda\""), 16,
                           "backend = \"host\"");
  auto Refused = parse(F, HostWithCudaKeys);
  REQUIRE_FALSE(Refused);
  CHECK(lines(Refused.error().message()).size() == 11);
}

TEST_CASE("a broken campaign reports every mistake with its position",
          "[campaign]") {
  Folder F;
  std::string Text = "backend = \"host\"\n"       // 1
                     "seed = -3\n"                // 2
                     "[[kernel]]\n"               // 3
                     "name = \"k\"\n"             // 4
                     "capture = \"missing.h5\"\n" // 5
                     "[budget]\n"                 // 6
                     "wall_time = \"2 hours\"\n"  // 7
                     "[compiler]\n"               // 8
                     "strategy = \"bayes\"\n"     // 9
                     "codegen_opt = [2, 5]\n"     // 10
                     "[evaluation]\n"             // 11
                     "repetitons = 5\n"           // 12
                     "flush_l2 = true\n";         // 13
  std::vector<std::string> L = lines(mistakes(F, Text));
  std::string P = F.path("c.toml");
  REQUIRE(L.size() == 7);
  CHECK(L[0] == P + ":2:8: 'seed' must be a non-negative integer, got -3");
  CHECK(L[1].rfind(P + ":5:11: 'capture' names a file that does not exist: "
                       "missing.h5",
                   0) == 0);
  CHECK(L[2].rfind(P + ":7:13: 'wall_time' must be a duration", 0) == 0);
  CHECK(L[3].rfind(P + ":9:12: 'strategy' must be \"portfolio\", \"bo\", "
                       "\"random\", \"grid\", \"tpe\" or \"ga\", got "
                       "\"bayes\"",
                   0) == 0);
  CHECK(L[4] == P + ":10:19: each entry of 'codegen_opt' must be an integer "
                    "from 0 to 3, got 5");
  CHECK(L[5] == P + ":12:1: unknown key 'repetitons' in [evaluation]; did "
                    "you mean 'repetitions'?");
  CHECK(L[6] == P + ":13:1: 'flush_l2' needs backend = \"cuda\" (this "
                    "campaign's backend is \"host\")");
}

TEST_CASE("unknown keys and sections get a suggestion", "[campaign]") {
  Folder F;
  std::string M = mistakes(F, campaignText(F, "nmae = \"x\"\n[compilr]\n"));
  CHECK(M.find(":4:1: unknown key 'nmae' in [[kernel]]; did you mean "
               "'name'?") != std::string::npos);
  CHECK(M.find(":5:2: unknown section [compilr]; did you mean [compiler]?") !=
        std::string::npos);
  std::string Far = mistakes(F, "zzzzzz = 1\n" + campaignText(F, ""));
  CHECK(Far.find(":1:1: unknown key 'zzzzzz' at the top level") !=
        std::string::npos);
  CHECK(Far.find("did you mean") == std::string::npos);
}

TEST_CASE("wrong types say what was expected and what was got", "[campaign]") {
  Folder F;
  CHECK(mistakes(F,
                 campaignText(F, "[evaluation]\nrepetitions = \"twenty\"\n")) ==
        F.path("c.toml") +
            ":5:15: 'repetitions' must be a positive integer, got \"twenty\"");
  CHECK(mistakes(F, campaignText(F, "[evaluation]\ntimeout = true\n"))
            .find("'timeout' must be a positive number, got true") !=
        std::string::npos);
  CHECK(mistakes(F, campaignText(F, "[budget]\nevaluations = 1.5\n"))
            .find("'evaluations' must be a positive integer, got 1.5") !=
        std::string::npos);
  CHECK(mistakes(F, campaignText(F, "[kernel.knobs]\nTILE = [8, 1.5]\n"))
            .find(":5:12: each entry of 'TILE' must be an integer or a "
                  "non-empty string, got 1.5") != std::string::npos);
  CHECK(mistakes(F, campaignText(F, "cflags = \"-O2 -DN=4\"\n"))
            .find(":4:10: 'cflags' must be a list of flags") !=
        std::string::npos);
  CHECK(mistakes(F, "kernel = 3\n")
            .find("'kernel' must be an array of "
                  "tables ([[kernel]]), got 3") != std::string::npos);
}

TEST_CASE("values out of range are refused", "[campaign]") {
  Folder F;
  CHECK(
      mistakes(F, campaignText(F, "[source]\nislands = 0\n"))
          .find(":5:11: 'islands' must be an integer from 1 to 1024, got 0") !=
      std::string::npos);
  CHECK(mistakes(F, campaignText(F, "[budget]\ntarget_speedup = 0.9\n"))
            .find("'target_speedup' must be a number above 1, got 0.9") !=
        std::string::npos);
  std::string Cuda = "backend = \"cuda\"\n" +
                     campaignText(F, "[launch]\nblock_x = [0, 2048]\n");
  std::string M = mistakes(F, Cuda);
  CHECK(M.find(":6:12: each entry of 'block_x' must be an integer from 1 to "
               "1024, got 0") != std::string::npos);
  CHECK(M.find(":6:15: each entry of 'block_x' must be an integer from 1 to "
               "1024, got 2048") != std::string::npos);
  std::string Big = "backend = \"cuda\"\n" +
                    campaignText(F, "[launch]\nblock_x = [512, 1024]\n"
                                    "block_y = [4]\n");
  CHECK(mistakes(F, Big).find("even the smallest block (block_x * block_y * "
                              "block_z = 2048)") != std::string::npos);
  CHECK(mistakes(F, campaignText(F, "[kernel.verify]\ntolerance = \"abs\"\n"))
            .find("tolerance \"abs\" needs dtype = \"f32\" or \"f64\"") !=
        std::string::npos);
  CHECK(mistakes(F, campaignText(F, "[compiler]\npipelines = "
                                    "[\"default<O4>\", \"gvn,(licm\"]\n"))
            .find("pipeline \"default<O4>\" uses a default pipeline other "
                  "than default<O0> to default<O3>") != std::string::npos);
}

TEST_CASE("missing files name the key and the path", "[campaign]") {
  Folder F;
  std::string M =
      mistakes(F, campaignText(F, "source = \"src/k.c\"\nfiles = [\"a.c\"]\n"));
  CHECK(M.find(":4:10: 'source' names a file that does not exist: src/k.c "
               "(looked for " +
               F.path("src/k.c") + ")") != std::string::npos);
  CHECK(M.find(":5:10: each entry of 'files' names a file that does not "
               "exist: a.c") != std::string::npos);
  fs::create_directories(F.Dir / "sub");
  CHECK(mistakes(F, campaignText(F, "source = \"sub\"\n"))
            .find(":4:10: 'source' names a folder, not a file: sub") !=
        std::string::npos);
  CHECK(mistakes(F, campaignText(F, "[compiler]\npass_list = \"/nonexistent/"
                                    "p.txt\"\n"))
            .find(":5:13: 'pass_list' names a file that does not exist: "
                  "/nonexistent/p.txt") != std::string::npos);
  CHECK(mistakes(F, "[[kernel]]\nname = \"k\"\n")
            .find(":1:1: [[kernel]] needs 'capture'") != std::string::npos);
  CHECK(mistakes(F, "seed = 2\n").find(":1:1: the campaign names no kernel") !=
        std::string::npos);
}

TEST_CASE("cuda-only keys are refused on the host backend", "[campaign]") {
  Folder F;
  std::string M = mistakes(
      F, campaignText(F, "[compiler]\ntoolchains = [\"llvm\", \"nvrtc\"]\n"
                         "max_registers = [0, 64]\n[launch]\nblock_x = [64]\n"
                         "[source]\ndescriptors = [\"registers\"]\n"));
  CHECK(M.find(":5:23: toolchain \"nvrtc\" needs backend = \"cuda\"") !=
        std::string::npos);
  CHECK(M.find(":6:1: 'max_registers' needs backend = \"cuda\" (this "
               "campaign's backend is \"host\")") != std::string::npos);
  CHECK(M.find(":8:1: 'block_x' needs backend = \"cuda\"") !=
        std::string::npos);
  CHECK(M.find(":10:16: descriptor \"registers\" needs backend = \"cuda\"") !=
        std::string::npos);
  std::string Cuda = "backend = \"cuda\"\n" +
                     campaignText(F, "[compiler]\nmax_registers = [0, 64]\n"
                                     "[launch]\nblock_x = [64, 128]\n");
  auto C = parse(F, Cuda);
  INFO((C ? "" : C.error().message()));
  REQUIRE(C);
  CHECK(C->Compiler.MaxRegisters == std::vector<int>{0, 64});
  CHECK(C->Launch.BlockX == std::vector<uint32_t>{64, 128});
  REQUIRE(C->Source.Descriptors.size() == 2);
  CHECK(C->Source.Descriptors[0].Name == "registers");
}

TEST_CASE("strategies and operators are checked by name", "[campaign]") {
  Folder F;
  CHECK(mistakes(F, campaignText(F, "[compiler]\nstrategy = \"randm\"\n"))
            .find("got \"randm\"; did you mean \"random\"?") !=
        std::string::npos);
  CHECK(mistakes(F, campaignText(F, "[source]\nstrategy = \"nsga\"\n"))
            .find("'strategy' must be \"map-elites\" or \"none\", got "
                  "\"nsga\"") != std::string::npos);
  std::string M = mistakes(
      F, campaignText(F, "[source]\noperators = { knob = 1, llm = 0.5, "
                         "crossove = 0.2 }\n"));
  CHECK(M.find("the llm operator needs an [llm] section (its endpoint and "
               "model)") != std::string::npos);
  CHECK(M.find("unknown key 'crossove' in [source.operators]; did you mean "
               "'crossover'?") != std::string::npos);
}

TEST_CASE("a kernel's share of the run is above 0 and at most 1",
          "[campaign]") {
  Folder F;
  auto C = parse(F, campaignText(F, "share = 0.25\n"));
  REQUIRE(C);
  CHECK(C->Kernels[0].Share == 0.25);
  CHECK(mistakes(F, campaignText(F, "share = 1.5\n"))
            .find(":4:9: 'share' is the kernel's share of the application's "
                  "run, above 0 and at most 1, got 1.5") != std::string::npos);
  CHECK(mistakes(F, campaignText(F, "share = 0\n"))
            .find("'share' must be a positive number, got 0") !=
        std::string::npos);
}

TEST_CASE("durations take units or seconds", "[campaign]") {
  Folder F;
  auto Seconds = [&](const std::string &V) {
    auto C = parse(F, campaignText(F, "[budget]\nwall_time = " + V + "\n"));
    REQUIRE(C);
    return C->Budget.WallSeconds;
  };
  CHECK(Seconds("\"90s\"") == 90);
  CHECK(Seconds("\"30m\"") == 1800);
  CHECK(Seconds("\"2h\"") == 7200);
  CHECK(Seconds("\"1d\"") == 86400);
  CHECK(Seconds("\"1h30m\"") == 5400);
  CHECK(Seconds("45") == 45);
  CHECK(Seconds("2.5") == 2.5);
  // More digits than a double holds: refused, not infinite.
  std::string Huge = "\"" + std::string(400, '9') + "s\"";
  for (const char *Bad : {"\"2 hours\"", "\"10\"", "\"5w\"", "0", "\"\"",
                          "\"1.2.3h\"", Huge.c_str()})
    CHECK(mistakes(F, campaignText(F, std::string("[budget]\nwall_time = ") +
                                          Bad + "\n"))
              .find(":5:13: 'wall_time' must be a duration such as \"90s\"") !=
          std::string::npos);
}

TEST_CASE("a TOML syntax error is reported at its position", "[campaign]") {
  Folder F;
  std::string M = mistakes(F, "seed = 1\n[budget\nevaluations = 3\n");
  CHECK(M.rfind(F.path("c.toml") + ":2:", 0) == 0);
  CHECK(M.find("TOML syntax") != std::string::npos);
  CHECK(M.find('\n') == std::string::npos);
}

TEST_CASE("descriptors follow the knobs of every kernel", "[campaign]") {
  Folder F;
  F.touch("j.h5");
  std::string Two = campaignText(F, "[kernel.knobs]\nTILE = [8, 16]\n"
                                    "B = [\"x\", \"y\", \"z\", \"w\"]\n"
                                    "[[kernel]]\nname = \"j\"\n"
                                    "capture = \"j.h5\"\n"
                                    "[kernel.knobs]\nTILE = [4]\n");
  auto C = parse(F, Two);
  INFO((C ? "" : C.error().message()));
  REQUIRE(C);
  // Default on host: the first two knobs of the first kernel that every
  // kernel has (only TILE here), binned by the largest domain.
  REQUIRE(C->Source.Descriptors.size() == 1);
  CHECK(C->Source.Descriptors[0].Name == "knob:TILE");
  CHECK(C->Source.Descriptors[0].Bins == 2);
  std::string Named =
      Two + "[source]\ndescriptors = [\"knob:B\", \"source_bytes\"]\n";
  CHECK(mistakes(F, Named).find("descriptor \"knob:B\" names a knob that "
                                "kernel \"j\" does not have") !=
        std::string::npos);
}

TEST_CASE("max_passes needs a pass list", "[campaign]") {
  Folder F;
  Folder EmptyShare;
  setenv("R3_SHARE_DIR", EmptyShare.Dir.c_str(), 1);
  std::string Text = campaignText(F, "[compiler]\nmax_passes = 2\n");
  auto C = parseCampaign(Text, F.path("c.toml"));
  REQUIRE_FALSE(C);
  CHECK(C.error().message().find(":5:1: 'max_passes' needs a pass list, and "
                                 "the default one is missing: " +
                                 EmptyShare.path("passes/host.txt")) !=
        std::string::npos);
  auto NoPasses = parseCampaign(campaignText(F, ""), F.path("c.toml"));
  CHECK(NoPasses);
  F.touch("p.txt");
  std::ofstream(F.path("p.txt")) << "# mine\n  gvn  \n\nlicm # hoist\n";
  auto Own = parse(F, campaignText(F, "[compiler]\npass_list = \"p.txt\"\n"
                                      "max_passes = 1\n"));
  REQUIRE(Own);
  CHECK(Own->Compiler.Passes == std::vector<std::string>{"gvn", "licm"});
}

TEST_CASE("the inner space has one parameter per domain with a choice",
          "[campaign]") {
  Folder F;
  F.touch("p.txt");
  std::ofstream(F.path("p.txt")) << "licm\ninstcombine\ngvn\n";
  auto C = parse(F, "backend = \"cuda\"\n" +
                        campaignText(F, "[compiler]\npipelines = "
                                        "[\"default<O2>\", \"default<O3>\"]\n"
                                        "pass_list = \"p.txt\"\n"
                                        "max_passes = 2\n"
                                        "codegen_opt = [3]\n"
                                        "[launch]\nblock_x = [256, 64]\n"));
  INFO((C ? "" : C.error().message()));
  REQUIRE(C);
  search::Space S = innerSpace(*C);
  REQUIRE(S.Params.size() == 3);
  CHECK(S.Params[0].Name == "pipeline");
  CHECK(S.Params[1].Name == "passes");
  CHECK(S.Params[1].Kind == search::ParamKind::Sequence);
  CHECK(S.Params[1].MaxLength == 2);
  CHECK(S.Params[2].Name == "block_x");
  CHECK(S.Params[2].Numbers == std::vector<double>{64, 256});
  // pipelines 2 x passes (1 + 3 + 9 sequences) x block_x 2
  CHECK(S.size() == 2 * 13 * 2);

  search::Point P;
  P.Values = {{1}, {0, 1}, {1}};
  InnerSettings I = innerSettings(*C, S, P);
  CHECK(I.Compiler.Pipeline == "default<O3>,licm,instcombine");
  CHECK(I.Compiler.CodegenOpt == 3);
  REQUIRE(I.Block);
  CHECK(*I.Block == Dim3{256, 1, 1});
  P.Values = {{0}, {}, {0}};
  I = innerSettings(*C, S, P);
  CHECK(I.Compiler.Pipeline == "default<O2>");
  CHECK((*I.Block)[0] == 64);
}

TEST_CASE("without base pipelines the extra passes are the pipeline",
          "[campaign]") {
  Folder F;
  F.touch("p.txt");
  std::ofstream(F.path("p.txt")) << "gvn\nsccp\n";
  auto C = parse(F, campaignText(F, "[compiler]\npass_list = \"p.txt\"\n"
                                    "max_passes = 1\n"));
  REQUIRE(C);
  search::Space S = innerSpace(*C);
  REQUIRE(S.Params.size() == 1);
  search::Point P;
  P.Values = {{1}};
  InnerSettings I = innerSettings(*C, S, P);
  CHECK(I.Compiler.Pipeline == "sccp");
  CHECK(I.Compiler.CodegenOpt == -1);
  CHECK_FALSE(I.Block);
  P.Values = {{}};
  CHECK(innerSettings(*C, S, P).Compiler.Pipeline.empty());
}

TEST_CASE("describeSpaces gives each level's size", "[campaign]") {
  Folder F;
  F.touch("k.c");
  F.touch("k2.c");
  F.touch("p.txt");
  std::ofstream(F.path("p.txt")) << "a\nb\nc\nd\n";
  auto C = parse(F, campaignText(F, "source = \"k.c\"\nfiles = [\"k2.c\"]\n"
                                    "[kernel.knobs]\nTILE = [8, 16, 32]\n"
                                    "[compiler]\npipelines = [\"default<O1>\","
                                    " \"default<O3>\"]\npass_list = "
                                    "\"p.txt\"\nmax_passes = 2\n"));
  INFO((C ? "" : C.error().message()));
  REQUIRE(C);
  std::vector<std::string> L = describeSpaces(*C);
  REQUIRE(L.size() >= 4);
  CHECK(L[0] == "kernel k: source level: 2 files x TILE(3) = 6 variants");
  // pipeline 2 x passes (1 + 4 + 16)
  CHECK(L[1] == "compiler level: pipeline(2) x passes(0..2 of 4) = 42 points");
  CHECK(L[2] == "launch level: (none for backend host)");
  CHECK(L[3] == "inner space: 42 points");
}

TEST_CASE("large spaces are described with three digits", "[campaign]") {
  Folder F;
  useTestShare();
  auto C = parse(F, campaignText(F, "[compiler]\nmax_passes = 4\n"));
  REQUIRE(C);
  size_t N = C->Compiler.Passes.size();
  REQUIRE(N > 10);
  double Size =
      1 + double(N) + double(N * N) + double(N * N * N) + double(N * N * N * N);
  char Expected[32];
  std::snprintf(Expected, sizeof(Expected), "%.3g", Size);
  std::vector<std::string> L = describeSpaces(*C);
  CHECK(L[0] == "kernel k: source level: the recorded code only (no "
                "'source')");
  CHECK(L[1] == "compiler level: passes(0..4 of " + std::to_string(N) +
                    ") = " + Expected + " points");
  CHECK(L[3] == std::string("inner space: ") + Expected + " points");
}

TEST_CASE("the [llm] section", "[campaign][llm]") {
  Folder F;
  auto C = parse(F, campaignText(F, R"([source]
operators = { knob = 0.5, llm = 0.5 }
[llm]
endpoint = "http://127.0.0.1:8000/v1"
models = ["small", { name = "large", weight = 3 }]
api_key_env = "MY_LLM_KEY"
concurrency = 4
timeout = "90s"
retries = 5
max_calls = 40
max_total_tokens = 200000
)"));
  INFO((C ? std::string() : C.error().message()));
  REQUIRE(C);
  CHECK(C->Llm.Given);
  CHECK(C->Llm.Endpoint == "http://127.0.0.1:8000/v1");
  REQUIRE(C->Llm.Models.size() == 2);
  CHECK(C->Llm.Models[0].Name == "small");
  CHECK(C->Llm.Models[0].Weight == 1);
  CHECK(C->Llm.Models[1].Name == "large");
  CHECK(C->Llm.Models[1].Weight == 3);
  CHECK(C->Llm.ApiKeyEnv == "MY_LLM_KEY");
  CHECK(C->Llm.Concurrency == 4);
  CHECK(C->Llm.TimeoutSeconds == 90);
  CHECK(C->Llm.Retries == 5);
  CHECK(C->Llm.MaxCalls == 40);
  CHECK(C->Llm.MaxTotalTokens == 200000);
  CHECK(C->Llm.Prompts == fs::path(R3_TEST_SHARE) / "prompts");
  REQUIRE(C->Source.Operators.size() == 2);
  CHECK(C->Source.Operators[1] == std::pair<std::string, double>("llm", 0.5));

  std::string M = mistakes(F, campaignText(F, R"([llm]
endpoint = "ftp://example.org"
api_key_env = "sk-live-123"
temperature = -1
modle = "x"
)"));
  CHECK(M.find("'endpoint' must be an http:// or https:// URL, got "
               "\"ftp://example.org\"") != std::string::npos);
  CHECK(M.find("'api_key_env' must name an environment variable (the key "
               "itself never goes into the campaign file)") !=
        std::string::npos);
  CHECK(M.find("unknown key 'modle' in [llm]; did you mean 'model'?") !=
        std::string::npos);
  CHECK(M.find("[llm] needs 'model' (or 'models', with weights)") !=
        std::string::npos);
  CHECK(M.find("'temperature'") != std::string::npos);

  // A prompt folder with a misspelt placeholder is refused at its line.
  fs::create_directories(F.Dir / "prompts");
  std::ofstream(F.Dir / "prompts" / "system.txt") << "You optimise.\n";
  std::ofstream(F.Dir / "prompts" / "mutate.txt")
      << "Kernel {{kernel}}\n{{sourse}}\n";
  M = mistakes(F, campaignText(F, "[llm]\nendpoint = \"http://h/v1\"\n"
                                  "model = \"m\"\nprompts = \"prompts\"\n"));
  CHECK(M.find("prompts/mutate.txt:2: unknown placeholder '{{sourse}}'; "
               "known: kernel,") != std::string::npos);
}

TEST_CASE("the reference campaign's [llm] section is valid uncommented",
          "[campaign][llm]") {
  Folder F;
  F.touch("matmul.h5");
  F.touch("matmul.c");
  std::string Text = readText(std::string(R3_TEST_SHARE) + "/campaign.toml");
  // Uncomment "# [llm]" and every "# key = value" after it, but only one of
  // model and models; the llm operator joins the others.
  std::string Out;
  bool InLlm = false;
  for (const std::string &L : lines(Text)) {
    InLlm |= L == "# [llm]";
    bool Setting = L.size() > 2 && L.starts_with("# ") &&
                   (L == "# [llm]" || L.find(" = ") != std::string::npos) &&
                   (std::islower((unsigned char)L[2]) || L[2] == '[') &&
                   !L.starts_with("# models");
    Out += (InLlm && Setting ? L.substr(2) : L) + "\n";
  }
  size_t Ops = Out.find("operators = { knob = 0.7, crossover = 0.3 }");
  REQUIRE(Ops != std::string::npos);
  Out.replace(Ops, 43, "operators = { knob = 0.5, llm = 0.5 }");
  REQUIRE(Out.find("\n[llm]\n") != std::string::npos);
  fs::create_directories(F.Dir / "my-prompts");
  std::ofstream(F.Dir / "my-prompts" / "system.txt") << "s\n";
  std::ofstream(F.Dir / "my-prompts" / "mutate.txt") << "{{source}}\n";
  auto C = parse(F, Out);
  INFO((C ? "" : C.error().message()));
  REQUIRE(C);
  CHECK(C->Llm.Given);
  CHECK(C->Llm.Endpoint == "http://127.0.0.1:8000/v1");
  CHECK(C->Llm.Models.size() == 1);
  CHECK(C->Llm.ApiKeyEnv == "OPENAI_API_KEY");
  CHECK(C->Llm.TimeoutSeconds == 120);
  CHECK(C->Llm.MaxCalls == 200);
  CHECK(C->Llm.Prompts == F.path("my-prompts"));
}

TEST_CASE("a specialized kernel's code depends on its block",
          "[campaign]") {
  // The worker keeps compiled code by this key: a kernel with its grid and
  // block folded in must not be reused for another block size.
  WorkerJob A;
  A.Capture = "/captures/app.h5";
  A.Target = Backend::Cuda;
  A.Work.Kernel = "_Z5scalePfPKffii";
  A.Work.Launches = {3};
  A.Work.Block = Dim3{128, 1, 1};
  A.Source = SourceJob{};
  A.Source->Text = "__global__ void scale(...) {}";
  A.Source->FileName = "scale.cu";
  WorkerJob B = A;
  B.Work.Block = Dim3{256, 1, 1};
  // Unspecialized, the block is a launch setting: one code for both.
  CHECK(jobCodeKey(A) == jobCodeKey(B));
  A.Source->Settings.SpecializeDims = true;
  B.Source->Settings.SpecializeDims = true;
  CHECK(jobCodeKey(A) != jobCodeKey(B));
  WorkerJob C = A;
  C.Work.Launches = {4}; // another launch's recorded values
  CHECK(jobCodeKey(A) != jobCodeKey(C));
  // Any compiler setting changes the code.
  WorkerJob D = A;
  D.Source->Settings.MaxRegisters = 64;
  CHECK(jobCodeKey(A) != jobCodeKey(D));
}
