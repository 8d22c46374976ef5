// `r3 inspect`: what a capture holds, as a table or as JSON with stable keys.
#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <numeric>

namespace r3::cli {

namespace {
using nlohmann::json;

json regionJson(const RegionInfo &Reg, uint32_t Index) {
  return {{"index", Index},   {"kind", regionKindName(Reg.Kind)},
          {"base", Reg.Base}, {"size", Reg.Size},
          {"name", Reg.Name}, {"changed", Reg.Changed}};
}

std::string hex(std::span<const uint8_t> Bytes) {
  static const char Digits[] = "0123456789abcdef";
  std::string S;
  for (uint8_t B : Bytes) {
    S += Digits[B >> 4];
    S += Digits[B & 15];
  }
  return S;
}

json launchJson(const CaptureReader &R, uint32_t Index) {
  const LaunchInfo &L = R.launches()[Index];
  uint64_t Changed = 0, ChangedBytes = 0;
  json Regions = json::array();
  for (uint32_t I = 0; I < L.Regions.size(); ++I) {
    const RegionInfo &Reg = L.Regions[I];
    Regions.push_back(regionJson(Reg, I));
    if (Reg.Changed) {
      ++Changed;
      ChangedBytes += Reg.Size;
    }
  }
  return {{"index", Index},
          {"ordinal", L.Ordinal},
          {"grid", L.Grid},
          {"block", L.Block},
          {"dynamic_shared_bytes", L.DynamicSharedBytes},
          {"param_bytes", L.Params.size()},
          {"params_hex", hex(L.Params)},
          {"regions", L.Regions.size()},
          {"region_list", Regions},
          {"bytes", totalRegionBytes(L)},
          {"changed_regions", Changed},
          {"changed_bytes", ChangedBytes},
          {"duration_ns", L.DurationNs ? json(*L.DurationNs) : json(nullptr)}};
}

json kernelJson(const CaptureReader &R, uint32_t K) {
  const KernelInfo &Info = R.kernels()[K];
  json Globals = json::array();
  for (const GlobalInfo &G : Info.Globals)
    Globals.push_back(
        {{"name", G.Name}, {"address", G.Address}, {"size", G.Size}});
  json Params = json::array();
  for (const ParamInfo &P : Info.Params)
    Params.push_back({{"offset", P.Offset}, {"size", P.Size}});
  const auto &D = Info.AppDurationsNs;
  json Launches = json::array();
  for (uint32_t L = 0; L < R.launches().size(); ++L)
    if (R.launches()[L].Kernel == K)
      Launches.push_back(launchJson(R, L));
  return {{"name", Info.Name},
          {"demangled", Info.Demangled},
          {"module", Info.Module},
          {"params", Params},
          {"globals", Globals},
          {"registers", Info.Attributes.Registers},
          {"static_shared_bytes", Info.Attributes.StaticSharedBytes},
          {"app_launches", D.size()},
          {"app_mean_duration_ns",
           D.empty()
               ? json(nullptr)
               : json(std::accumulate(D.begin(), D.end(), 0.0) / D.size())},
          {"launches", Launches}};
}

json captureJson(const CaptureReader &R) {
  const CaptureHeader &H = R.header();
  json Modules = json::array();
  for (const ModuleInfo &M : R.modules())
    Modules.push_back({{"kind", moduleKindName(M.Kind)}, {"bytes", M.Size}});
  json Kernels = json::array();
  for (uint32_t K = 0; K < R.kernels().size(); ++K)
    Kernels.push_back(kernelJson(R, K));
  return {{"path", R.path()},
          {"format_version", R.formatVersion()},
          {"producer", H.Producer},
          {"backend", backendName(H.Source)},
          {"device",
           {{"name", H.Device.Name},
            {"compute_capability", std::to_string(H.Device.ComputeMajor) + "." +
                                       std::to_string(H.Device.ComputeMinor)},
            {"driver_version", H.Device.DriverVersion},
            {"memory_bytes", H.Device.MemoryBytes},
            {"ordinal", H.Device.Ordinal},
            {"pci_bus_id", H.Device.PciBusId}}},
          {"command_line", H.CommandLine},
          {"modules", Modules},
          {"kernels", Kernels}};
}

/// ", device 0 at 0000:1b:00.0", or nothing for captures that do not say.
std::string deviceWhere(const json &D) {
  int Ordinal = D["ordinal"].get<int>();
  std::string Bus = D["pci_bus_id"];
  if (Ordinal < 0)
    return "";
  return ", device " + std::to_string(Ordinal) +
         (Bus.empty() ? "" : " at " + Bus);
}

std::string dims(const json &D) {
  return "(" + std::to_string(D[0].get<uint32_t>()) + "," +
         std::to_string(D[1].get<uint32_t>()) + "," +
         std::to_string(D[2].get<uint32_t>()) + ")";
}

std::string duration(const json &Ns) {
  if (Ns.is_null())
    return "-";
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.1f us", Ns.get<double>() / 1000.0);
  return Buf;
}

/// "@3": how r3 replay --launch and r3 compile --launch name a launch by its
/// index in the capture.
std::string at(const json &L) {
  return "@" + std::to_string(L["index"].get<uint32_t>());
}

void printKernel(const json &K, size_t Index) {
  std::string Name = K["name"];
  std::string Demangled = K["demangled"];
  std::printf("\nkernel %zu: %s%s\n", Index, Name.c_str(),
              Demangled.empty() ? "" : (" (" + Demangled + ")").c_str());
  std::printf(
      "  module %u, %zu params, %zu globals, %zu launches in the application, "
      "mean duration %s\n",
      K["module"].get<uint32_t>(), K["params"].size(), K["globals"].size(),
      K["app_launches"].get<size_t>(),
      duration(K["app_mean_duration_ns"]).c_str());
  std::printf("  %-6s %-8s %-16s %-14s %-8s %-8s %-11s %-8s %s\n", "launch",
              "capture", "grid", "block", "dynsmem", "regions", "bytes",
              "changed", "duration");
  for (const json &L : K["launches"])
    std::printf(
        "  %-6lu %-8s %-16s %-14s %-8u %-8zu %-11s %-8zu %s\n",
        L["ordinal"].get<unsigned long>(), at(L).c_str(),
        dims(L["grid"]).c_str(), dims(L["block"]).c_str(),
        L["dynamic_shared_bytes"].get<uint32_t>(), L["regions"].get<size_t>(),
        formatBytes(L["bytes"].get<uint64_t>()).c_str(),
        L["changed_regions"].get<size_t>(), duration(L["duration_ns"]).c_str());
}

void printRegions(const json &K) {
  for (const json &L : K["launches"]) {
    std::printf("  launch %lu (%s) regions:\n",
                L["ordinal"].get<unsigned long>(), at(L).c_str());
    std::printf("    %-6s %-11s %-18s %-11s %-8s %s\n", "region", "kind",
                "base", "bytes", "changed", "name");
    for (const json &Reg : L["region_list"]) {
      std::string Kind = Reg["kind"], Name = Reg["name"];
      std::printf("    %-6u %-11s 0x%-16lx %-11s %-8s %s\n",
                  Reg["index"].get<uint32_t>(), Kind.c_str(),
                  Reg["base"].get<unsigned long>(),
                  formatBytes(Reg["size"].get<uint64_t>()).c_str(),
                  Reg["changed"].get<bool>() ? "yes" : "no",
                  Name.empty() ? "-" : Name.c_str());
    }
  }
}

void printTable(const json &J, bool Regions) {
  std::string Path = J["path"], Backend = J["backend"],
              Producer = J["producer"];
  std::printf("capture:     %s (format %u, %s backend, written by %s)\n",
              Path.c_str(), J["format_version"].get<uint32_t>(),
              Backend.c_str(), Producer.c_str());
  const json &D = J["device"];
  std::string DevName = D["name"], CC = D["compute_capability"];
  if (Backend == "host")
    std::printf("device:      %s (%s memory)\n", DevName.c_str(),
                formatBytes(D["memory_bytes"].get<uint64_t>()).c_str());
  else
    std::printf("device:      %s (compute %s, driver %d, %s%s)\n",
                DevName.c_str(), CC.c_str(), D["driver_version"].get<int>(),
                formatBytes(D["memory_bytes"].get<uint64_t>()).c_str(),
                deviceWhere(D).c_str());
  std::vector<std::string> Cmd = J["command_line"];
  std::printf("application: %s\n", Cmd.empty() ? "-" : join(Cmd, " ").c_str());
  std::printf("modules:     %zu\n", J["modules"].size());
  for (size_t K = 0; K < J["kernels"].size(); ++K) {
    printKernel(J["kernels"][K], K);
    if (Regions)
      printRegions(J["kernels"][K]);
  }
  std::string Checksums = J["checksums"];
  std::printf("\nchecksums:   %s", Checksums.c_str());
  if (J.contains("bytes_read"))
    std::printf(" (%s read)",
                formatBytes(J["bytes_read"].get<uint64_t>()).c_str());
  std::printf("\n");
}

/// The capture's launch that "LAUNCH" of --dump names: the kernel's launch N
/// (of --kernel, or of the one kernel that has a launch N), or @N.
Expected<uint32_t> dumpedLaunch(const CaptureReader &R, const ParsedArgs &A,
                                LaunchRef Ref) {
  if (auto Name = A.value("--kernel")) {
    uint32_t K = 0;
    R3_TRY(moveInto(findKernel(R, *Name), K));
    return findLaunch(R, K, Ref);
  }
  return findLaunch(viewOf(R), Ref);
}

/// Finds "LAUNCH:REGION" (REGION a region index or name) in the capture.
Expected<std::pair<uint32_t, uint32_t>> findRegion(const CaptureReader &R,
                                                   const ParsedArgs &A) {
  std::string Spec = *A.value("--dump");
  auto Colon = Spec.find(':');
  auto Ref = parseLaunchRef(Spec.substr(0, Colon));
  if (Colon == std::string::npos || !Ref)
    return makeError("--dump expects LAUNCH:REGION (LAUNCH the kernel's launch "
                     "N or the capture's @N, REGION a region index or name), "
                     "got '",
                     Spec, "'");
  uint32_t L = 0;
  R3_TRY(moveInto(dumpedLaunch(R, A, *Ref), L));
  const auto &Regions = R.launches()[L].Regions;
  std::string Which = Spec.substr(Colon + 1);
  for (uint32_t I = 0; I < Regions.size(); ++I)
    if (Regions[I].Name == Which || std::to_string(I) == Which)
      return std::pair<uint32_t, uint32_t>(L, I);
  return makeError("--dump: ", shownLaunchName(viewOf(R), L),
                   " has no region '", Which, "' (it has ", Regions.size(),
                   " regions)");
}

/// Writes one region's bytes, before or after its launch, to a file.
int dumpRegion(const CaptureReader &R, const ParsedArgs &A) {
  auto Phase = choiceValue(A, "--phase", {"pre", "post"}, "post");
  if (!Phase)
    return usageError(Phase.error().message(), "inspect");
  auto Out = A.value("--output");
  if (!Out)
    return usageError("--dump needs -o FILE for the region's bytes", "inspect");
  auto Where = findRegion(R, A);
  if (!Where)
    return fail(Where.error());
  std::FILE *F = std::fopen(Out->c_str(), "wb");
  if (!F)
    return fail(errnoError("cannot create '" + *Out + "'"));
  Error E = R.streamRegion(
      Where->first, Where->second, *Phase == "pre" ? Phase::Pre : Phase::Post,
      [&](uint64_t, std::span<const uint8_t> Bytes) -> Error {
        if (std::fwrite(Bytes.data(), 1, Bytes.size(), F) != Bytes.size())
          return errnoError("cannot write '" + *Out + "'");
        return Error::success();
      });
  if (std::fclose(F) != 0 && !E)
    E = errnoError("cannot write '" + *Out + "'");
  return E ? fail(E) : ExitSuccess;
}

int runInspect(const ParsedArgs &A) {
  if (A.Positional.size() != 1)
    return usageError("'r3 inspect' takes one capture file, got " +
                          std::to_string(A.Positional.size()),
                      "inspect");
  auto Format = choiceValue(A, "--format", {"table", "json"}, "table");
  if (!Format)
    return usageError(Format.error().message(), "inspect");
  auto Reader = CaptureReader::open(A.Positional.front());
  if (!Reader)
    return fail(Reader.error());
  if (A.has("--dump"))
    return dumpRegion(**Reader, A);
  if (A.has("--kernel"))
    return usageError("option '--kernel' applies to --dump: it names the "
                      "kernel whose launch --dump writes",
                      "inspect");
  json J = captureJson(**Reader);
  J["checksums"] = "skipped";
  if (!A.has("--no-verify")) {
    auto Bytes = (*Reader)->verifyData();
    if (!Bytes)
      return fail(Bytes.error());
    J["checksums"] = "ok";
    J["bytes_read"] = *Bytes;
  }
  if (*Format == "json")
    std::printf("%s\n", J.dump(2).c_str());
  else
    printTable(J, A.has("--regions"));
  return ExitSuccess;
}
} // namespace

CommandSpec inspectCommand() {
  return {
      "inspect",
      "list a capture's kernels, launches, regions and timings",
      "CAPTURE.h5 [--format table|json] [--regions] [--no-verify]\n"
      "       r3 inspect CAPTURE.h5 --dump LAUNCH:REGION [--kernel NAME] "
      "[--phase pre|post] -o FILE",
      "Every stored byte is read so that every checksum is checked, unless\n"
      "--no-verify is given. A kernel's launches are numbered from 0 in the\n"
      "order the application launched it (the launch column, what --launch\n"
      "N takes everywhere); the capture column is the launch's index in the\n"
      "capture (@N). --dump writes one region's raw bytes (LAUNCH is N or\n"
      "@N, REGION its index or name), after the launch by default.",
      {{"--format", "", Arity::Value, "table|json",
        "output format (default table)"},
       {"--no-verify", "", Arity::Flag, "",
        "skip reading the data (no checksums)"},
       {"--regions", "", Arity::Flag, "", "list every launch's regions"},
       {"--dump", "", Arity::Value, "LAUNCH:REGION",
        "write a region's bytes to the -o file"},
       {"--kernel", "", Arity::Value, "NAME",
        "the kernel whose launch --dump names (when several kernels have a "
        "launch of that number)"},
       {"--phase", "", Arity::Value, "pre|post",
        "which bytes --dump writes (default post)"},
       {"--output", "-o", Arity::Value, "FILE", "where --dump writes"}},
      false,
      runInspect};
}

} // namespace r3::cli
