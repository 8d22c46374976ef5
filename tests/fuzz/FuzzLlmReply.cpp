// Fuzz target: the LLM reply parser (fenced source, SEARCH/REPLACE blocks,
// the signature, host-code and include checks). Replies are untrusted: any
// text must become a checked source or a reason. The input is the reply, or
// "KERNEL\n@@@@\nPARENT\n@@@@\nREPLY" to vary what it is checked against;
// the first byte's low bit picks C or CUDA rules.
#include "FuzzInput.h"

#include "search/llm/Reply.h"

using namespace r3;
using namespace r3::llm;

namespace {
const char *HostParent = "#include <math.h>\n"
                         "void matmul(int n, const double *a, double *c) {\n"
                         "  for (int i = 0; i < n; ++i)\n"
                         "    c[i] = sqrt(a[i]);\n"
                         "}\n";
const char *CudaParent =
    "__global__ void saxpy(int n, float a, const float *x, float *y) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

ReplyRules rulesFor(KernelLanguage L, std::string_view Kernel,
                    std::string_view Parent) {
  ReplyRules R;
  R.Language = L;
  R.Kernel = std::string(Kernel);
  R.Parent = std::string(Parent);
  R.Includes = includeLines(Parent);
  R.IncludeDirs = {fuzz::scratchPath("-include")};
  return R;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  KernelLanguage L = Data[0] & 1 ? KernelLanguage::Cuda : KernelLanguage::Host;
  std::string_view In = fuzz::text(Data + 1, Size - 1);
  std::string_view Kernel = L == KernelLanguage::Cuda ? "saxpy" : "matmul";
  std::string_view Parent = L == KernelLanguage::Cuda ? CudaParent : HostParent;
  std::string_view Reply = In;
  auto [First, Rest] = fuzz::splitAt(In, "\n@@@@\n");
  auto [Second, Third] = fuzz::splitAt(Rest, "\n@@@@\n");
  if (!Third.empty()) {
    Kernel = First;
    Parent = Second;
    Reply = Third;
  }
  (void)kernelBaseName(Kernel);
  (void)kernelSignature(Reply, Kernel);
  (void)includeLines(Reply);
  auto P = parseReply(Reply, rulesFor(L, kernelBaseName(Kernel), Parent));
  if (P && P->Source.empty())
    __builtin_trap(); // an accepted reply is a source
  return 0;
}
