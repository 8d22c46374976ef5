// `r3 profile`: which kernels matter. Runs the application once with every
// launch of every kernel timed (record/Profile.h) and prints, before anything
// else, the ceiling: what the kernels r3 can tune could give end to end if
// they took no time, and if each became K times faster (Amdahl over their
// shares of the run, report/Amdahl.h). Then one row a kernel, heaviest first:
// launches, total and mean time, share of the kernels' time and of the run,
// and whether r3 can tune it (or why not). `--format json` prints the same
// for scripts; the application's own output goes to stderr.
#include "cli/Profile.h"
#include "app/ProfileModel.h"
#include "cli/Args.h"
#include "cli/Command.h"
#include "cli/Diagnostics.h"
#include "cli/Installed.h"
#include "record/Profile.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace r3::cli {

/// The ceiling first, then the run's totals, then one row a kernel.
void printProfile(const app::ProfileModel &M) {
  std::printf("ceiling: the %zu kernel%s r3 can tune take %s of the run: %s "
              "end to end if they took no time, %s if each became %gx "
              "faster\n",
              M.Tunable, M.Tunable == 1 ? "" : "s",
              formatShare(M.TunableShare).c_str(),
              formatFactor(M.CeilingFree).c_str(),
              formatFactor(M.CeilingAtSpeedup).c_str(), M.Speedup);
  std::printf(
      "run: %.3f s wall, %.3f s in %zu kernel%s (%s of the run), "
      "%llu launches\n\n",
      M.WallSeconds, M.KernelSeconds, M.Kernels.size(),
      M.Kernels.size() == 1 ? "" : "s",
      formatShare(M.WallSeconds > 0 ? M.KernelSeconds / M.WallSeconds : 0)
          .c_str(),
      static_cast<unsigned long long>(M.Launches));
  int W = 6;
  for (const app::KernelShare &K : M.Kernels)
    W = std::max(W, static_cast<int>(K.Display.size()));
  std::printf("%-*s  %10s  %11s  %11s  %8s  %7s  %s\n", W, "kernel", "launches",
              "total ms", "mean us", "kernels", "run", "tunable");
  for (const app::KernelShare &K : M.Kernels)
    std::printf("%-*s  %10llu  %11.3f  %11.1f  %8s  %7s  %s\n", W,
                K.Display.c_str(), static_cast<unsigned long long>(K.Launches),
                K.TotalMs, K.MeanUs, formatShare(K.ShareOfKernels).c_str(),
                formatShare(K.ShareOfRun).c_str(),
                K.Untunable.empty() ? "yes" : ("no: " + K.Untunable).c_str());
}

Expected<ProfileRequest> profileRequest(const ParsedArgs &A) {
  if (!A.Positional.empty())
    return makeError("unexpected argument '", A.Positional.front(),
                     "' (the application goes after '--')");
  if (A.Trailing.empty())
    return Error::make("no application to profile: give it after '--', as "
                       "in r3 profile -- ./app ARGS");
  ProfileRequest R;
  if (auto It = A.Values.find("--kernel"); It != A.Values.end())
    R.Patterns = It->second;
  R3_TRY(moveInto(resolveProgram(A.Trailing.front()), R.Program));
  R.Argv = A.Trailing;
  std::string Chosen;
  R3_TRY(moveInto(choiceValue(A, "--backend", {"cuda", "host"}, ""), Chosen));
  R3_TRY(moveInto(applicationBackend(R.Program, Chosen), R.Source));
  if (R.Source == Backend::Cuda) {
#ifdef R3_HAVE_CUDA
    R3_TRY(moveInto(installedFile(CudaInjectionLibrary), R.Injection));
#else
    return makeError("'", R.Program,
                     "' would be profiled with the CUDA backend, but this r3 "
                     "was built without CUDA; rebuild r3 with the CUDA "
                     "toolkit, or pass --backend host for an application "
                     "built with $(r3 host-flags ...)");
#endif
  }
  return R;
}

namespace {
int runProfile(const ParsedArgs &A) {
  std::string Format;
  if (Error E = moveInto(choiceValue(A, "--format", {"table", "json"}, "table"),
                         Format))
    return usageError(E.message(), "profile");
  double Speedup = 1.5;
  if (auto V = A.value("--speedup")) {
    auto S = parseDouble(*V);
    if (!S || !(*S > 1))
      return usageError("option '--speedup' expects a factor above 1 such as "
                        "1.5, got " +
                            quoteShort(*V),
                        "profile");
    Speedup = *S;
  }
  auto R = profileRequest(A);
  if (!R)
    return usageError(R.error().message(), "profile");
  auto P = profileApplication(*R);
  if (!P)
    return fail(P.error());
  for (const std::string &W : P->Warnings)
    printWarning(W);
  app::ProfileModel M = app::profileModel(*P, *R, Speedup);
  if (Format == "json")
    std::printf("%s\n", app::profileJson(M).dump(2).c_str());
  else
    printProfile(M);
  return ExitSuccess;
}
} // namespace

CommandSpec profileCommand() {
  return {"profile",
          "run an application once and show which kernels matter, and the "
          "end-to-end ceiling",
          "[--kernel REGEX]... [--format table|json] -- APP [ARGS...]",
          "Every launch of every kernel is timed (CUDA: CUPTI activity; host "
          "backend:\nthe instrumented kernels). The first line is the "
          "ceiling: the end-to-end\nspeedup if the kernels r3 can tune took "
          "no time, and if each became --speedup\ntimes faster (Amdahl over "
          "their shares of the run, assuming the host waits\nfor them). The "
          "application's output goes to stderr; if it fails, r3 says how\n"
          "and shows its last lines, and nothing is written.",
          {{"--kernel", "-k", Arity::Value, "REGEX",
            "profile only kernels whose name matches (repeatable)"},
           {"--backend", "", Arity::Value, "cuda|host",
            "which backend runs the application"},
           {"--speedup", "", Arity::Value, "K",
            "the per-kernel speedup of the second ceiling (default 1.5)"},
           {"--format", "", Arity::Value, "table|json",
            "output format (default table)"}},
          true,
          runProfile};
}

} // namespace r3::cli
