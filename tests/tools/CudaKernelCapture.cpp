// A CUDA capture of one launch of a named kernel with a given parameter
// layout and values, for the tests of `r3 compile --capture`: what the
// injection library would have written, without a GPU. Parameters are laid
// out as the driver does, each at the next offset aligned to its size.
#include "SyntheticCapture.h"

#include "support/StringUtil.h"

#include <cstring>

namespace r3::testing {

namespace {

Expected<Dim3> parseDim3(const std::string &Text) {
  std::vector<std::string> Parts = split(Text, ',');
  Dim3 D = {1, 1, 1};
  if (Parts.empty() || Parts.size() > 3)
    return makeError("expected X[,Y[,Z]], got '", Text, "'");
  for (size_t I = 0; I < Parts.size(); ++I) {
    auto N = parseUnsigned(Parts[I]);
    if (!N || *N == 0 || *N > UINT32_MAX)
      return makeError("expected X[,Y[,Z]], got '", Text, "'");
    D[I] = static_cast<uint32_t>(*N);
  }
  return D;
}

/// "i32:5", "i64:7", "f32:1.5", "f64:2", "ptr:0x7f0000100000".
Expected<std::vector<uint8_t>> paramBytes(const std::string &Spec) {
  size_t Colon = Spec.find(':');
  std::string Type = Spec.substr(0, Colon);
  std::string Value = Colon == std::string::npos ? "" : Spec.substr(Colon + 1);
  std::vector<uint8_t> B;
  auto Put = [&B](const void *P, size_t N) {
    B.assign(static_cast<const uint8_t *>(P),
             static_cast<const uint8_t *>(P) + N);
  };
  if (Type == "i32") {
    int32_t V = std::stoi(Value);
    Put(&V, 4);
  } else if (Type == "i64" || Type == "ptr") {
    uint64_t V = std::stoull(Value, nullptr, 0);
    Put(&V, 8);
  } else if (Type == "f32") {
    float V = std::stof(Value);
    Put(&V, 4);
  } else if (Type == "f64") {
    double V = std::stod(Value);
    Put(&V, 8);
  } else {
    return makeError("parameter '", Spec,
                     "': expected i32:, i64:, f32:, f64: or ptr:VALUE");
  }
  return B;
}

} // namespace

Error writeCudaKernelCapture(const std::string &Path,
                             const CudaKernelSpec &Spec) {
  CaptureHeader H;
  H.Source = Backend::Cuda;
  H.Device = {"Synthetic GPU", 9, 0, 13000, 80ull << 30};
  H.CommandLine = {"./app"};
  auto W = CaptureWriter::create(Path, H, CaptureCompression::None);
  if (!W)
    return W.takeError();
  std::vector<uint8_t> Image(64, 0);
  if (auto M = (*W)->addModule(ModuleKind::Cubin, Image); !M)
    return M.takeError();
  KernelInfo K;
  K.Name = Spec.Kernel;
  LaunchInfo L;
  for (const std::string &P : Spec.Params) {
    std::vector<uint8_t> Bytes;
    R3_TRY(moveInto(paramBytes(P), Bytes));
    uint64_t Offset =
        (L.Params.size() + Bytes.size() - 1) / Bytes.size() * Bytes.size();
    L.Params.resize(Offset);
    L.Params.insert(L.Params.end(), Bytes.begin(), Bytes.end());
    K.Params.push_back({Offset, Bytes.size()});
  }
  auto KI = (*W)->addKernel(K);
  if (!KI)
    return KI.takeError();
  L.Kernel = *KI;
  R3_TRY(moveInto(parseDim3(Spec.Grid), L.Grid));
  R3_TRY(moveInto(parseDim3(Spec.Block), L.Block));
  if (auto I = (*W)->beginLaunch(L); !I)
    return I.takeError();
  return (*W)->finish();
}

} // namespace r3::testing
