// Synthetic capture writer shared by the unit tests, the CLI tests' fixture
// tool and the capture I/O benchmark.
#include "SyntheticCapture.h"

namespace r3::testing {

ByteSource syntheticSource(uint64_t Seed) {
  return [Seed](uint64_t Offset, std::span<uint8_t> Out) {
    for (size_t I = 0; I < Out.size(); ++I)
      Out[I] = syntheticByte(Seed, Offset + I);
    return Error::success();
  };
}

namespace {
KernelInfo syntheticKernel(uint32_t K) {
  KernelInfo Info;
  Info.Name = "_Z7kernel" + std::to_string(K) + "Pfi";
  Info.Demangled = "kernel" + std::to_string(K) + "(float*, int)";
  Info.Params = {{0, 8}, {8, 4}};
  Info.Globals = {{"coeffs", 0x7f0000001000ull, 64}};
  Info.Attributes = {32, 1024, 1024, 0};
  return Info;
}

Error writeLaunch(CaptureWriter &W, const SyntheticSpec &S, uint32_t K,
                  uint32_t Ordinal) {
  LaunchInfo L;
  L.Kernel = K;
  L.Ordinal = Ordinal;
  L.Grid = {64, 2, 1};
  L.Block = {128, 1, 1};
  L.Params.assign(16, 0xAB);
  auto Index = W.beginLaunch(L);
  if (!Index)
    return Index.takeError();
  W.setLaunchDuration(*Index, 12000 + 100 * Ordinal);
  for (uint32_t R = 0; R < S.RegionsPerLaunch; ++R) {
    RegionInfo Reg{0x7f0000100000ull + (uint64_t(R) << 32),
                   syntheticRegionSize(S, R),
                   R == 2 ? RegionKind::Global : RegionKind::Device,
                   R == 2 ? "coeffs" : "", false};
    auto RI = W.addRegion(*Index, Reg,
                          syntheticSource(regionSeed(*Index, R, Phase::Pre)));
    if (!RI)
      return RI.takeError();
    if (R % 2 == 1)
      R3_TRY(W.addChangedRegion(
          *Index, *RI, syntheticSource(regionSeed(*Index, R, Phase::Post))));
  }
  return Error::success();
}
} // namespace

Error writeSyntheticCapture(const std::string &Path, const SyntheticSpec &S) {
  CaptureHeader H;
  H.Source = Backend::Cuda;
  H.Device = {"Synthetic GPU", 9, 0, 13000, 80ull << 30};
  H.CommandLine = {"./app", "--steps", "10"};
  H.Environment = {"OMP_NUM_THREADS=4"};
  auto W = CaptureWriter::create(Path, H, S.Compression);
  if (!W)
    return W.takeError();
  std::vector<uint8_t> Image(3000);
  for (size_t I = 0; I < Image.size(); ++I)
    Image[I] = syntheticByte(99, I);
  auto M = (*W)->addModule(ModuleKind::Cubin, Image);
  if (!M)
    return M.takeError();
  for (uint32_t K = 0; K < S.Kernels; ++K) {
    auto KI = (*W)->addKernel(syntheticKernel(K));
    if (!KI)
      return KI.takeError();
    for (uint32_t Ns : {11000u, 12000u, 13000u})
      (*W)->addAppDuration(*KI, Ns);
    for (uint32_t L = 0; L < S.LaunchesPerKernel; ++L)
      R3_TRY(writeLaunch(**W, S, *KI, L));
  }
  return (*W)->finish();
}

} // namespace r3::testing
