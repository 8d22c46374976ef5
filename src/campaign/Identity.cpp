// Candidate identities and capture fingerprints (see Identity.h).
#include "campaign/Identity.h"

#include <fstream>
#include <vector>

namespace r3 {

Expected<std::string> captureFingerprint(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary | std::ios::ate);
  if (!In)
    return makeError(Path, ": cannot open the capture");
  const uint64_t Size = static_cast<uint64_t>(In.tellg());
  const uint64_t Window = 1 << 20;
  std::string Ends;
  for (uint64_t Offset : {uint64_t(0), Size > Window ? Size - Window : 0}) {
    std::vector<char> Buf(std::min(Window, Size));
    In.seekg(static_cast<std::streamoff>(Offset));
    In.read(Buf.data(), static_cast<std::streamsize>(Buf.size()));
    if (!In)
      return makeError(Path, ": cannot read the capture");
    Ends.append(Buf.data(), Buf.size());
  }
  return std::to_string(Size) + ":" + sha256Hex(Ends);
}

std::string candidateIdentity(const IdentityParts &P) {
  std::string Text;
  for (const std::string *Part :
       {&P.Kernel, &P.Capture, &P.Launches, &P.SourceHash, &P.Settings,
        &P.Evaluation, &P.Backend, &P.Device}) {
    Text += std::to_string(Part->size());
    Text += ':';
    Text += *Part;
    Text += ';';
  }
  return sha256Hex(Text);
}

} // namespace r3
