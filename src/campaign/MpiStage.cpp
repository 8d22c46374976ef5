// Capture staging across the nodes of an MPI job (Mpi.h). It runs once,
// before the campaign, as a sequence every rank takes part in: rank 0
// broadcasts the plan (the folder, and each capture's path, size and
// SHA-256); every rank reports, in one gather, the captures its node lacks
// (only the first worker rank of a node asks); rank 0 sends each asked-for
// capture to each asking rank in chunks, and each answers whether the hash
// of what it wrote matched; a node's other ranks learn from a broadcast on
// the node that the copies are in place. The staged copy of capture P is
// Dir/<first 16 hex digits of P's hash>/<P's name>, so that copies of one
// capture made by earlier runs are found and checked, not sent again.
#include "campaign/MpiStage.h"

#include "support/FileUtil.h"
#include "support/Frame.h"
#include "support/Sha256.h"
#include "support/StringUtil.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace r3 {

namespace {
namespace fs = std::filesystem;
constexpr int TagChunk = 3, TagAck = 4;
constexpr size_t ChunkBytes = 64u << 20;

Expected<std::string> fileHash(const std::string &Path, uint64_t &Size) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return makeError(Path, ": cannot read the capture");
  Sha256 H;
  std::vector<char> Buf(1 << 20);
  Size = 0;
  while (In) {
    In.read(Buf.data(), static_cast<std::streamsize>(Buf.size()));
    std::streamsize N = In.gcount();
    H.update(std::string_view(Buf.data(), static_cast<size_t>(N)));
    Size += static_cast<uint64_t>(N);
  }
  return H.hexDigest();
}

std::vector<uint8_t> encodePlan(const StagePlan &P) {
  wire::MetaWriter W;
  W.u32(P.Abort).str(P.Dir).u32(static_cast<uint32_t>(P.Captures.size()));
  for (const StagedCapture &C : P.Captures)
    W.str(C.Path).u64(C.Size).str(C.Hash);
  return W.data();
}

Expected<StagePlan> decodePlan(std::span<const uint8_t> Bytes) {
  wire::MetaReader R(Bytes);
  StagePlan P;
  P.Abort = R.u32() != 0;
  P.Dir = R.str();
  uint32_t N = R.u32();
  for (uint32_t I = 0; I < N && I < 64; ++I) {
    StagedCapture C;
    C.Path = R.str();
    C.Size = R.u64();
    C.Hash = R.str();
    P.Captures.push_back(std::move(C));
  }
  R3_TRY(R.finish("staging plan"));
  return P;
}

/// Broadcasts Bytes from rank 0 (its size first).
Error broadcast(std::vector<uint8_t> &Bytes, MPI_Comm Comm) {
  uint64_t N = Bytes.size();
  R3_TRY(mpiError(MPI_Bcast(&N, 1, MPI_UINT64_T, 0, Comm), "MPI_Bcast"));
  Bytes.resize(N);
  return mpiError(
      MPI_Bcast(Bytes.data(), static_cast<int>(N), MPI_BYTE, 0, Comm),
      "MPI_Bcast");
}

/// Rank 0: sends capture C to rank To in chunks; true when To's copy
/// matched its hash.
Expected<bool> sendCapture(const StagedCapture &C, int To) {
  std::ifstream In(C.Path, std::ios::binary);
  if (!In)
    return makeError(C.Path, ": cannot read the capture");
  std::vector<char> Buf(ChunkBytes);
  uint64_t Left = C.Size;
  while (Left > 0) {
    size_t N = static_cast<size_t>(std::min<uint64_t>(Left, Buf.size()));
    In.read(Buf.data(), static_cast<std::streamsize>(N));
    if (static_cast<size_t>(In.gcount()) != N)
      return makeError(C.Path, ": the capture changed while it was sent");
    R3_TRY(mpiError(MPI_Send(Buf.data(), static_cast<int>(N), MPI_BYTE, To,
                             TagChunk, MPI_COMM_WORLD),
                    "MPI_Send"));
    Left -= N;
  }
  int Ok = 0;
  R3_TRY(mpiError(MPI_Recv(&Ok, 1, MPI_INT, To, TagAck, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE),
                  "MPI_Recv"));
  return Ok != 0;
}
} // namespace

Error mpiError(int Rc, const char *Call) {
  if (Rc == MPI_SUCCESS)
    return Error::success();
  char Text[MPI_MAX_ERROR_STRING];
  int Len = 0;
  MPI_Error_string(Rc, Text, &Len);
  return makeError(Call, ": ", std::string(Text, Len));
}

std::string stagedPath(const StagePlan &P, const StagedCapture &C,
                       const std::string &Node) {
  std::string Dir = P.Dir;
  for (size_t At; (At = Dir.find("%h")) != std::string::npos;)
    Dir.replace(At, 2, Node);
  return (fs::path(Dir) / C.Hash.substr(0, 16) / fs::path(C.Path).filename())
      .string();
}

Expected<StagePlan> makePlan(const std::vector<std::string> &Captures,
                             const std::string &Dir) {
  StagePlan P;
  P.Dir = Dir;
  if (Dir.empty())
    return P;
  if (Captures.size() > 64)
    return makeError("--stage-captures stages at most 64 captures, the "
                     "campaign has ",
                     Captures.size());
  for (const std::string &Path : Captures) {
    if (std::any_of(P.Captures.begin(), P.Captures.end(),
                    [&](const StagedCapture &C) { return C.Path == Path; }))
      continue;
    StagedCapture C;
    C.Path = Path;
    R3_TRY(moveInto(fileHash(Path, C.Size), C.Hash));
    P.Captures.push_back(std::move(C));
  }
  return P;
}

Error rootStage(const StagePlan &P, int Size) {
  std::vector<uint8_t> Bytes = encodePlan(P);
  R3_TRY(broadcast(Bytes, MPI_COMM_WORLD));
  if (P.Abort || P.Dir.empty())
    return Error::success();
  uint64_t None = 0;
  std::vector<uint64_t> Needs(static_cast<size_t>(Size));
  R3_TRY(mpiError(MPI_Gather(&None, 1, MPI_UINT64_T, Needs.data(), 1,
                             MPI_UINT64_T, 0, MPI_COMM_WORLD),
                  "MPI_Gather"));
  for (int Rank = 1; Rank < Size; ++Rank)
    for (size_t I = 0; I < P.Captures.size(); ++I) {
      if (!(Needs[Rank] >> I & 1))
        continue;
      bool Ok = false;
      for (int Try = 0; Try < 2 && !Ok; ++Try)
        R3_TRY(moveInto(sendCapture(P.Captures[I], Rank), Ok));
      if (!Ok)
        return makeError("staging ", P.Captures[I].Path, " to rank ", Rank,
                         ": its copy was damaged twice in a row");
    }
  return Error::success();
}

/// A node leader: receives capture C into Path, checking its hash; asks
/// once more when it does not match.
Error receiveCapture(const StagedCapture &C, const std::string &Path) {
  std::error_code EC;
  fs::create_directories(fs::path(Path).parent_path(), EC);
  for (int Try = 0; Try < 2; ++Try) {
    std::string Tmp = temporaryPathFor(Path);
    std::ofstream Out(Tmp, std::ios::binary);
    Sha256 H;
    std::vector<char> Buf(ChunkBytes);
    for (uint64_t Left = C.Size; Left > 0;) {
      int N = static_cast<int>(std::min<uint64_t>(Left, Buf.size()));
      R3_TRY(mpiError(MPI_Recv(Buf.data(), N, MPI_BYTE, 0, TagChunk,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                      "MPI_Recv"));
      Out.write(Buf.data(), N);
      H.update(std::string_view(Buf.data(), static_cast<size_t>(N)));
      Left -= static_cast<uint64_t>(N);
    }
    Out.close();
    int Ok = Out.good() && H.hexDigest() == C.Hash;
    R3_TRY(mpiError(MPI_Send(&Ok, 1, MPI_INT, 0, TagAck, MPI_COMM_WORLD),
                    "MPI_Send"));
    if (Ok)
      return commitTemporary(Tmp, Path);
    fs::remove(Tmp, EC);
    std::fprintf(stderr, "r3: staging %s: the copy's hash does not match; "
                         "asking for it again\n",
                 C.Path.c_str());
  }
  return makeError("staging ", C.Path, ": the copy was damaged twice");
}

Expected<StagedPaths> workerStage(bool Leader, MPI_Comm Node,
                                  const std::string &NodeName) {
  std::vector<uint8_t> Bytes;
  R3_TRY(broadcast(Bytes, MPI_COMM_WORLD));
  StagePlan P;
  R3_TRY(moveInto(decodePlan(Bytes), P));
  StagedPaths Out;
  Out.Abort = P.Abort;
  if (P.Abort || P.Dir.empty())
    return Out;
  uint64_t Need = 0;
  for (size_t I = 0; Leader && I < P.Captures.size(); ++I) {
    std::string Path = stagedPath(P, P.Captures[I], NodeName);
    uint64_t Size = 0;
    auto Have = pathExists(Path) ? fileHash(Path, Size)
                                 : Expected<std::string>(std::string());
    if (!Have || *Have != P.Captures[I].Hash) {
      if (Have && !Have->empty())
        std::fprintf(stderr, "r3: staging: the copy of %s on %s is damaged "
                             "or stale; asking for it again\n",
                     P.Captures[I].Path.c_str(), NodeName.c_str());
      Need |= uint64_t(1) << I;
    }
  }
  R3_TRY(mpiError(MPI_Gather(&Need, 1, MPI_UINT64_T, nullptr, 1, MPI_UINT64_T,
                             0, MPI_COMM_WORLD),
                  "MPI_Gather"));
  for (size_t I = 0; I < P.Captures.size(); ++I)
    if (Need >> I & 1)
      R3_TRY(receiveCapture(P.Captures[I],
                            stagedPath(P, P.Captures[I], NodeName)));
  // The node's other ranks read the copies once its leader has them.
  R3_TRY(mpiError(MPI_Barrier(Node), "MPI_Barrier"));
  for (const StagedCapture &C : P.Captures)
    Out.Paths[C.Path] = stagedPath(P, C, NodeName);
  return Out;
}

} // namespace r3
