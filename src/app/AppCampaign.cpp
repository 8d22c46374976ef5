// The written campaign (AppCampaign.h).
#include "app/AppCampaign.h"

#include "support/StringUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace r3::app {

namespace {
std::string fixed(double V, const char *Format) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), Format, V);
  return Buf;
}

/// A TOML basic string.
std::string quoted(const std::string &S) {
  std::string Out = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      Out += '\\';
    Out += C;
  }
  return Out + "\"";
}

std::string list(const std::vector<std::string> &Items) {
  std::vector<std::string> Q;
  for (const std::string &I : Items)
    Q.push_back(quoted(I));
  return "[" + join(Q, ", ") + "]";
}

std::string names(const std::vector<KernelShare> &Ks) {
  std::vector<std::string> N;
  for (const KernelShare &K : Ks)
    N.push_back(K.Display + " (" + formatShare(K.ShareOfKernels) + ")");
  return join(N, ", ");
}

void header(std::ostream &O, const AppCampaignSpec &S) {
  const ProfileModel &P = S.Profile;
  O << "# Written by r3 tune --app for: " << join(P.Command, " ") << "\n"
    << "# Profile: " << fixed(P.WallSeconds, "%.3f") << " s wall, "
    << fixed(P.KernelSeconds, "%.3f") << " s in kernels; the " << P.Tunable
    << " kernels r3 can tune take " << formatShare(P.TunableShare)
    << " of the run:\n#   at most " << formatFactor(P.CeilingFree)
    << " end to end if they took no time, " << formatFactor(P.CeilingAtSpeedup)
    << " if each became " << fixed(P.Speedup, "%g") << "x faster.\n"
    << "# Tuned: the kernels that cover " << formatShare(S.Cover)
    << " of the kernels' time (--cover), heaviest first: "
    << names(S.Chosen.Chosen) << ".\n";
  for (const KernelShare &K : S.Chosen.Left)
    O << "# Left out: " << K.Display << " (" << formatShare(K.ShareOfKernels)
      << " of the kernels' time): "
      << (K.Untunable.empty() ? "beyond --cover" : K.Untunable) << ".\n";
  O << "# Edit freely and re-run `r3 tune` on this file; the reference "
       "campaign\n# (share/r3/campaign.toml) explains every key.\n";
  O << "database = \"history.db\"\nbackend = \""
    << (P.Source == Backend::Cuda ? "cuda" : "host") << "\"\nseed = 1\n";
}

void sourceKeys(std::ostream &O, const AppKernel &K, Backend B) {
  if (!K.Source) {
    O << "# No source: no file defines " << baseName(K.Profile.Display)
      << (B == Backend::Cuda ? " as a __global__ function" : "")
      << ", so only its recorded code is tuned\n# ("
      << (B == Backend::Cuda ? "launch settings on its own cubin"
                             : "pipelines and codegen on its recorded "
                               "bitcode")
      << "). Add source = \"...\" to tune its source too.\n";
    return;
  }
  O << "# Source: the definition at " << K.Source->File << ":" << K.Source->Line
    << ".\n"
    << "source = " << quoted(K.Source->File) << "\n"
    << "# Variants compile the kernel alone: its file without the functions "
       "it does\n# not reach (if clang compiles that; the history's extract "
       "event says).\nextract = true\n";
  if (!K.Database.empty())
    O << "# Its flags: the application's own, from the build's compilation "
         "database.\ncompile_commands = "
      << quoted(K.Database) << "\n";
  else
    O << "# Its flags: its folder for includes (no compilation database was "
         "found;\n# give --compile-commands to use the application's own).\n"
      << "cflags = " << list(K.CFlags) << "\n";
}

void kernelSection(std::ostream &O, const AppKernel &K,
                   const AppCampaignSpec &S) {
  const KernelShare &P = K.Profile;
  O << "\n[[kernel]]\n# " << P.Display << ": " << P.Launches << " launches, "
    << fixed(P.MeanUs, "%.1f") << " us each, " << formatShare(P.ShareOfKernels)
    << " of the kernels' time, " << formatShare(P.ShareOfRun)
    << " of the run.\n"
    << "name = " << quoted(P.Name) << "\ncapture = " << quoted(S.Capture)
    << "\n# Launch " << K.Launch << " of " << P.Launches
    << (K.Launch > 0 ? ": after the first few, as the application runs in "
                       "steady state.\n"
                     : ": the kernel's first.\n")
    << "launches = [" << K.Launch << "]\n"
    << "# Its share of the run, from the profile: r3 status and r3 report "
       "turn its\n# speedup into an end-to-end one by it.\n"
    << "share = " << fixed(std::max(P.ShareOfRun, 1e-6), "%.6g") << "\n";
  sourceKeys(O, K, S.Profile.Source);
  if (S.Profile.Source == Backend::Cuda)
    O << "# A block-size change keeps the total thread count.\n"
         "grid_rule = \"keep_threads\"\n";
  O << "[kernel.verify]\n# " << K.VerifyWhy << "\n";
  for (const std::string &L : K.Verify)
    O << L << "\n";
}

void searchSections(std::ostream &O, const AppCampaignSpec &S) {
  bool Cuda = S.Profile.Source == Backend::Cuda;
  bool AnySource = false;
  std::vector<uint32_t> Blocks;
  for (const AppKernel &K : S.Kernels) {
    AnySource |= K.Source.has_value();
    if (Blocks.empty())
      Blocks = blockChoices(K.Profile.Block);
  }
  O << "\n[budget]\n# Evaluations over all kernels: each next one goes to "
       "the kernel where the\n# expected end-to-end gain is largest (its "
       "share times its recent progress).\nevaluations = "
    << S.Evaluations << "\ninner_evaluations = 10\n";
  if (AnySource)
    O << "\n# The rewrite operator: r3 reads each kernel's source with clang "
         "and offers\n# `#pragma unroll` on its loops and __restrict__/const "
         "on its pointers as\n# knobs whose value 0 is the source as written "
         "(the history's rewrite events\n# name them). Add [kernel.knobs] or "
         "an [llm] section (and operators) for\n# more.\n[source]\n"
         "operators = { rewrite = 1.0 }\n";
  else
    O << "\n# No source: each kernel's recorded code is its one variant.\n"
         "[source]\nstrategy = \"none\"\n";
  O << "\n[compiler]\nstrategy = \"portfolio\"\n";
  if (Cuda && AnySource)
    O << "# nvcc builds the application's own code; clang's LLVM pipelines "
         "are the\n# other toolchain.\ntoolchains = [\"nvcc\", \"llvm\"]\n";
  O << "pipelines = [\"default<O1>\", \"default<O2>\", \"default<O3>\"]\n"
    << "# Up to two passes of the installed pass list after the pipeline.\n"
    << "max_passes = 2\n"
    << (Cuda ? "codegen_opt = [2, 3]\nmax_registers = [0, 32, 64, 128]\n"
             : "codegen_opt = [1, 2, 3]\n");
  if (Cuda && !Blocks.empty()) {
    std::vector<std::string> B;
    for (uint32_t V : Blocks)
      B.push_back(std::to_string(V));
    O << "\n# Block sizes around the recorded one (one-dimensional "
         "blocks only).\n[launch]\nblock_x = ["
      << join(B, ", ") << "]\n";
    if (AnySource)
      O << "# Kernels whose source strides over the grid (a loop that reads "
           "gridDim)\n# also search their grid, in blocks per "
           "multiprocessor (0: as recorded).\ngrid_per_sm = [0, 1, 2, 4, 8, "
           "16, 32]\n";
  }
  O << "\n[evaluation]\nwarmup = 2\nrepetitions = 20\nmin_repetitions = 6\n"
       "target_ci = 0.01\ntimeout = 10\n";
}
} // namespace

std::vector<uint32_t> blockChoices(const Dim3 &Recorded) {
  if (Recorded[1] != 1 || Recorded[2] != 1 || Recorded[0] % 32 != 0)
    return {};
  std::vector<uint32_t> Out;
  for (uint32_t V : {Recorded[0] / 4, Recorded[0] / 2, Recorded[0],
                     Recorded[0] * 2, Recorded[0] * 4})
    if (V >= 32 && V <= 1024 && V % 32 == 0 && (Out.empty() || Out.back() != V))
      Out.push_back(V);
  return Out.size() > 1 ? Out : std::vector<uint32_t>{};
}

uint64_t representativeLaunch(uint64_t Fewest) {
  return Fewest == 0 ? 0 : std::min<uint64_t>(3, Fewest - 1);
}

std::string campaignText(const AppCampaignSpec &S) {
  std::ostringstream O;
  header(O, S);
  for (const AppKernel &K : S.Kernels)
    kernelSection(O, K, S);
  searchSections(O, S);
  return O.str();
}

} // namespace r3::app
