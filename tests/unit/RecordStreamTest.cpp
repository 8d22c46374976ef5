// The record stream: frames sent through a real pipe by a sender thread (as the
// injected library would) become a capture; a broken stream leaves none.
#include "Catch.h"

#include "SyntheticCapture.h"
#include "capture/CaptureReader.h"
#include "record/CaptureSink.h"
#include "record/Messages.h"
#include "record/Ring.h"

#include <cstring>
#include <filesystem>
#include <functional>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace r3;
using namespace r3::wire;
using r3::testing::syntheticByte;

namespace {
constexpr uint64_t BigRegion = (9ull << 20) + 3; // several chunks, not whole

std::string tempPath(const std::string &Name) {
  return (std::filesystem::temp_directory_path() /
          ("r3-stream-" + std::to_string(::getpid()) + "-" + Name))
      .string();
}

/// Runs Send on a thread writing into a pipe while the capture is received.
Expected<RecordStats>
receiveFrom(const std::function<void(FrameWriter &)> &Send,
            const std::string &Path) {
  int Fds[2];
  REQUIRE(::pipe(Fds) == 0);
  std::thread Sender([&] {
    FrameWriter W(Fds[1]);
    Send(W);
    ::close(Fds[1]);
  });
  CaptureHeader Base;
  Base.CommandLine = {"./stencil", "64"};
  auto Stats = receiveCapture(Fds[0], Path, Base);
  ::close(Fds[0]); // unblocks a sender the receiver stopped listening to
  Sender.join();
  return Stats;
}

void sendStreamed(FrameWriter &W, const RegionMsg &M, uint64_t Size,
                  uint64_t Seed) {
  REQUIRE_FALSE(W.begin(Type::Region, encode(M), Size));
  std::vector<uint8_t> Chunk(1 << 20);
  for (uint64_t Off = 0; Off < Size; Off += Chunk.size()) {
    size_t N = std::min<uint64_t>(Chunk.size(), Size - Off);
    for (size_t I = 0; I < N; ++I)
      Chunk[I] = syntheticByte(Seed, Off + I);
    REQUIRE_FALSE(W.sendBulk(std::span(Chunk.data(), N)));
  }
}

void sendPrologue(FrameWriter &W) {
  HelloMsg Hello;
  Hello.Device = {"Test GPU", 9, 0, 13000, 1ull << 30, 2, "0000:1b:00.0"};
  REQUIRE_FALSE(W.send(Type::Hello, encode(Hello)));
  std::vector<uint8_t> Image(5000, 0x5A);
  REQUIRE_FALSE(
      W.send(Type::Module, encode(ModuleMsg{77, ModuleKind::Cubin}), Image));
  KernelMsg K;
  K.Id = 0xABC;
  K.ModuleId = 77;
  K.Info.Name = "_Z7stencilPKfPfii";
  K.Info.Params = {{0, 8}, {8, 8}, {16, 4}, {20, 4}};
  K.Info.Globals = {{"coeffs", 0x1000, 40}};
  REQUIRE_FALSE(W.send(Type::Kernel, encode(K)));
}

void sendRecording(FrameWriter &W) {
  sendPrologue(W);
  LaunchMsg L;
  L.Id = 5;
  L.KernelId = 0xABC;
  L.Info.Ordinal = 3;
  L.Info.Grid = {8, 8, 1};
  L.Info.Block = {32, 4, 1};
  L.Info.Params.assign(24, 0x11);
  REQUIRE_FALSE(W.send(Type::Launch, encode(L)));
  RegionMsg In{
      5, Phase::Pre, 0, {0x7f00000000, 0, RegionKind::Device, "", false}};
  sendStreamed(W, In, BigRegion, 1);
  RegionMsg Out{
      5, Phase::Pre, 1, {0x7f10000000, 0, RegionKind::Device, "", false}};
  sendStreamed(W, Out, 4096, 2);
  Out.Side = Phase::Post;
  sendStreamed(W, Out, 4096, 3);
  REQUIRE_FALSE(
      W.send(Type::Duration, encode(DurationMsg{0xABC, NoLaunch, 900})));
  REQUIRE_FALSE(W.send(Type::Duration, encode(DurationMsg{0xABC, 5, 1000})));
  REQUIRE_FALSE(W.send(Type::Done, MetaWriter()));
}

uint64_t mismatches(const CaptureReader &R, uint32_t Reg, Phase P,
                    uint64_t Seed) {
  uint64_t Bad = 0;
  Error E =
      R.streamRegion(0, Reg, P, [&](uint64_t Off, std::span<const uint8_t> B) {
        for (size_t I = 0; I < B.size(); ++I)
          Bad += B[I] != syntheticByte(Seed, Off + I);
        return Error::success();
      });
  REQUIRE_FALSE(E);
  return Bad;
}
} // namespace

namespace {
/// Three pages a slot, two slots: a region of several MiB cycles through
/// them many times, and slots straddle the capture's 4 MiB chunks.
constexpr RingGeometry SmallRing{2, 3 * 4096};

/// Runs Send on a thread with the sending ends of a socketpair and a bulk
/// ring while the capture is received through both; UseRing false receives
/// as if r3 record had made no ring.
Expected<RecordStats>
receiveViaRing(const std::function<void(FrameWriter &, RingWriter &)> &Send,
               const std::string &Path, bool UseRing = true) {
  int Fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, Fds) == 0);
  auto Ring = BulkRing::create(SmallRing);
  REQUIRE(Ring);
  auto Mine = BulkRing::attach(::dup(Ring->fd()), SmallRing);
  REQUIRE(Mine);
  std::thread Sender([&] {
    FrameWriter W(Fds[1], SendMode::SocketNoSignal);
    RingWriter R(std::move(*Mine), Fds[1], W);
    Send(W, R);
    ::shutdown(Fds[1], SHUT_WR);
  });
  CaptureHeader Base;
  auto Stats = receiveCapture(Fds[0], Path, Base, CaptureCompression::None,
                              UseRing ? &*Ring : nullptr);
  ::shutdown(Fds[0], SHUT_RDWR); // unblocks a sender waiting for a slot
  Sender.join();
  ::close(Fds[0]);
  ::close(Fds[1]);
  return Stats;
}

/// Sends Size bytes of Seed's synthetic data as ring chunks of at most a
/// slot; Stop, when set, ends the region early after that many bytes.
Error sendThroughRing(RingWriter &R, uint64_t Size, uint64_t Seed,
                      uint64_t Stop = ~0ull) {
  uint64_t SlotBytes = R.ring().geometry().SlotBytes;
  for (uint64_t Off = 0; Off < std::min(Size, Stop); Off += SlotBytes) {
    auto Slot = R.acquire();
    if (!Slot)
      return Slot.takeError();
    uint64_t N = std::min(SlotBytes, Size - Off);
    uint8_t *P = R.ring().slot(*Slot);
    for (uint64_t I = 0; I < N; ++I)
      P[I] = syntheticByte(Seed, Off + I);
    R3_TRY(R.post(*Slot, N));
  }
  return Error::success();
}

void sendRingLaunch(FrameWriter &W) {
  sendPrologue(W);
  LaunchMsg L;
  L.Id = 5;
  L.KernelId = 0xABC;
  L.Info.Params.assign(24, 0x11);
  REQUIRE_FALSE(W.send(Type::Launch, encode(L)));
}

RegionMsg ringRegion(Phase Side, uint64_t Index, uint64_t Size) {
  RegionMsg M{
      5,
      Side,
      Index,
      {0x7f00000000 + (Index << 28), Size, RegionKind::Device, "", false}};
  M.ViaRing = true;
  return M;
}
} // namespace

TEST_CASE("region bytes through the bulk ring become a capture", "[record]") {
  std::string Path = tempPath("ring.h5");
  auto Stats = receiveViaRing(
      [](FrameWriter &W, RingWriter &R) {
        sendRingLaunch(W);
        REQUIRE_FALSE(
            W.send(Type::Region, encode(ringRegion(Phase::Pre, 0, BigRegion))));
        REQUIRE_FALSE(sendThroughRing(R, BigRegion, 1));
        // Inline and ring regions mix in one stream.
        RegionMsg Inline{
            5, Phase::Pre, 1, {0x7f10000000, 0, RegionKind::Device, "", false}};
        sendStreamed(W, Inline, 4096, 2);
        REQUIRE_FALSE(W.send(Type::Region,
                             encode(ringRegion(Phase::Post, 0, BigRegion))));
        REQUIRE_FALSE(sendThroughRing(R, BigRegion, 3));
        REQUIRE_FALSE(W.send(Type::Done, MetaWriter()));
      },
      Path);
  REQUIRE(Stats);
  CHECK(Stats->Regions == 2);
  CHECK(Stats->RegionBytes == 2 * BigRegion + 4096);
  auto C = CaptureReader::open(Path);
  if (!C)
    FAIL(C.error().message());
  REQUIRE((*C)->launches().at(0).Regions.size() == 2);
  CHECK((*C)->launches()[0].Regions[0].Size == BigRegion);
  CHECK((*C)->launches()[0].Regions[0].Changed);
  CHECK(mismatches(**C, 0, Phase::Pre, 1) == 0);
  CHECK(mismatches(**C, 1, Phase::Pre, 2) == 0);
  CHECK(mismatches(**C, 0, Phase::Post, 3) == 0);
  std::remove(Path.c_str());
}

TEST_CASE("a broken bulk ring stream leaves no capture", "[record]") {
  std::string Path = tempPath("ring-bad.h5");
  auto errorOf = [&](const std::function<void(FrameWriter &, RingWriter &)> &F,
                     bool UseRing = true) {
    auto S = receiveViaRing(F, Path, UseRing);
    REQUIRE_FALSE(S);
    CHECK_FALSE(std::filesystem::exists(Path));
    return S.error().message();
  };
  auto region = [](FrameWriter &W, uint64_t Size) {
    sendRingLaunch(W);
    REQUIRE_FALSE(
        W.send(Type::Region, encode(ringRegion(Phase::Pre, 0, Size))));
  };
  CHECK(errorOf(
            [&](FrameWriter &W, RingWriter &R) {
              region(W, 100);
              (void)sendThroughRing(R, 100, 1);
            },
            false) == "record stream: a region sent through a record ring "
                      "that this recording does not have");
  CHECK(errorOf([&](FrameWriter &W, RingWriter &) {
          region(W, 100);
          (void)W.send(Type::RingChunk, encode(RingChunkMsg{7, 100}));
        })
            .find("record stream: a ring chunk of 100 bytes in slot 7 (2 slots "
                  "of 12288 bytes; 100 bytes of the region left)") !=
        std::string::npos);
  CHECK(errorOf([&](FrameWriter &W, RingWriter &R) {
          region(W, 100);
          (void)sendThroughRing(R, 200, 1); // more than the region holds
        }).find("a ring chunk of 200 bytes") != std::string::npos);
  // A recording that fails in the middle of a region says why.
  CHECK(errorOf([&](FrameWriter &W, RingWriter &R) {
          region(W, 50000);
          (void)sendThroughRing(R, 50000, 1, 20000);
          (void)W.send(Type::Failure, encodeFailure("cuMemcpy: it broke"));
        }) == "cuMemcpy: it broke");
  CHECK(errorOf([&](FrameWriter &W, RingWriter &R) {
          region(W, 50000);
          (void)sendThroughRing(R, 50000, 1, 20000);
          (void)W.send(Type::Done, MetaWriter());
        })
            .find("record stream: frame type 8 where the next ring chunk of a "
                  "region was due") != std::string::npos);
  CHECK(errorOf([&](FrameWriter &W, RingWriter &) {
          sendRingLaunch(W);
          (void)W.send(Type::RingChunk, encode(RingChunkMsg{0, 10}));
        }) == "record stream: a ring chunk outside a region");
}

TEST_CASE("a bulk ring writer waits for slots and sees the reader go",
          "[record]") {
  int Fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, Fds) == 0);
  auto Ring = BulkRing::create(SmallRing);
  REQUIRE(Ring);
  FrameWriter W(Fds[1], SendMode::SocketNoSignal);
  RingWriter R(std::move(*Ring), Fds[1], W);
  auto A = R.acquire(), B = R.acquire();
  REQUIRE(A);
  REQUIRE(B);
  CHECK(*A != *B);
  R.release(*A); // not posted: free again at once
  auto C = R.acquire();
  REQUIRE(C);
  CHECK(*C == *A);
  // Both slots are out; the reader gives one back, then goes away.
  uint32_t Back = *B;
  REQUIRE(::send(Fds[0], &Back, sizeof(Back), 0) == sizeof(Back));
  auto D = R.acquire();
  REQUIRE(D);
  CHECK(*D == *B);
  uint32_t Wrong = 9;
  REQUIRE(::send(Fds[0], &Wrong, sizeof(Wrong), 0) == sizeof(Wrong));
  auto E = R.acquire();
  REQUIRE_FALSE(E);
  CHECK(E.error().message() == "record ring: r3 record gave back slot 9 of 2");
  ::close(Fds[0]);
  auto F = R.acquire();
  REQUIRE_FALSE(F);
  CHECK(F.error().message() == "record ring: r3 record closed the stream");
  ::close(Fds[1]);
}

TEST_CASE("bulk ring geometry is checked on both ends", "[record]") {
  CHECK(BulkRing::create({0, 4096}).error().message().find("0 slots") !=
        std::string::npos);
  CHECK_FALSE(BulkRing::create({2, 1000}));              // not whole pages
  CHECK_FALSE(BulkRing::create({1u << 20, 1ull << 20})); // over the maximum
  auto Ring = BulkRing::create({2, 4096});
  REQUIRE(Ring);
  // A descriptor smaller than the geometry claims is refused, not mapped.
  auto Big = BulkRing::attach(::dup(Ring->fd()), {4, 4096});
  REQUIRE_FALSE(Big);
  CHECK(Big.error().message().find("holds 8192 bytes, not 16384") !=
        std::string::npos);
  auto Same = BulkRing::attach(::dup(Ring->fd()), {2, 4096});
  REQUIRE(Same);
  Ring->slot(1)[5] = 42; // one memory, two mappings
  CHECK(Same->slot(1)[5] == 42);
}

TEST_CASE("a record stream through a pipe becomes a capture", "[record]") {
  std::string Path = tempPath("good.h5");
  auto Stats = receiveFrom(sendRecording, Path);
  REQUIRE(Stats);
  CHECK(Stats->Launches == 1);
  CHECK(Stats->Regions == 2);
  CHECK(Stats->RegionBytes == BigRegion + 2 * 4096);
  auto R = CaptureReader::open(Path);
  REQUIRE(R);
  const CaptureReader &C = **R;
  CHECK(C.header().Device.Name == "Test GPU");
  CHECK(C.header().Device.Ordinal == 2);
  CHECK(C.header().Device.PciBusId == "0000:1b:00.0");
  CHECK(C.header().CommandLine == std::vector<std::string>{"./stencil", "64"});
  REQUIRE(C.kernels().size() == 1);
  CHECK(C.kernels()[0].Params.size() == 4);
  CHECK(C.kernels()[0].AppDurationsNs == std::vector<uint64_t>{900, 1000});
  REQUIRE(C.launches().size() == 1);
  const LaunchInfo &L = C.launches()[0];
  CHECK(L.Ordinal == 3);
  CHECK(L.Block == Dim3{32, 4, 1});
  CHECK(L.DurationNs == std::optional<uint64_t>(1000));
  REQUIRE(L.Regions.size() == 2);
  CHECK(L.Regions[0].Size == BigRegion);
  CHECK_FALSE(L.Regions[0].Changed);
  CHECK(L.Regions[1].Changed);
  CHECK(mismatches(C, 0, Phase::Pre, 1) == 0);
  CHECK(mismatches(C, 1, Phase::Pre, 2) == 0);
  CHECK(mismatches(C, 1, Phase::Post, 3) == 0);
  std::remove(Path.c_str());
}

TEST_CASE("warnings on the record stream reach the statistics", "[record]") {
  std::string Path = tempPath("warned.h5");
  auto Stats = receiveFrom(
      [](FrameWriter &W) {
        sendPrologue(W);
        REQUIRE_FALSE(W.send(Type::Warning, encodeWarning("managed memory")));
        REQUIRE_FALSE(W.send(Type::Warning, encodeWarning("second")));
        REQUIRE_FALSE(W.send(Type::Done, MetaWriter()));
      },
      Path);
  REQUIRE(Stats);
  CHECK(Stats->Warnings ==
        std::vector<std::string>{"managed memory", "second"});
  std::remove(Path.c_str());
}

TEST_CASE("a broken record stream leaves no capture", "[record]") {
  std::string Path = tempPath("bad.h5");
  auto Failed = receiveFrom(
      [](FrameWriter &W) {
        sendPrologue(W);
        (void)W.send(
            Type::Failure,
            encodeFailure("kernel 'foo' was launched from a CUDA graph"));
      },
      Path);
  REQUIRE_FALSE(Failed);
  CHECK(Failed.error().message() ==
        "kernel 'foo' was launched from a CUDA graph");
  CHECK_FALSE(std::filesystem::exists(Path));

  auto Ended = receiveFrom(sendPrologue, Path);
  REQUIRE_FALSE(Ended);
  CHECK(Ended.error().message().find("ended before recording finished") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(Path));

  auto Unknown = receiveFrom(
      [](FrameWriter &W) {
        sendPrologue(W);
        (void)W.send(Type::Duration, encode(DurationMsg{0xABC, 99, 1}));
      },
      Path);
  REQUIRE_FALSE(Unknown);
  CHECK(Unknown.error().message() == "record stream: unknown launch id 99");

  auto Version = receiveFrom(
      [](FrameWriter &W) {
        HelloMsg H;
        H.Version = 99;
        (void)W.send(Type::Hello, encode(H));
      },
      Path);
  REQUIRE_FALSE(Version);
  CHECK(Version.error().message().find("protocol version 99, expected 4") !=
        std::string::npos);

  auto Cut = receiveFrom(
      [](FrameWriter &W) {
        sendPrologue(W);
        RegionMsg M{0, Phase::Pre, 0, {}};
        (void)W.begin(Type::Region, encode(M), 100); // no launch, no bytes
      },
      Path);
  REQUIRE_FALSE(Cut);
  CHECK(Cut.error().message() == "record stream: unknown launch id 0");
  CHECK_FALSE(std::filesystem::exists(Path));
}

TEST_CASE("meta fields round-trip and truncation is caught", "[record]") {
  LaunchMsg L;
  L.Id = 1;
  L.KernelId = 2;
  L.Info.Grid = {3, 4, 5};
  L.Info.Params = {9, 8, 7};
  MetaWriter W = encode(L);
  LaunchMsg Back;
  REQUIRE_FALSE(decode(W.data(), Back));
  CHECK(Back.Info.Grid == Dim3{3, 4, 5});
  CHECK(Back.Info.Params == std::vector<uint8_t>{9, 8, 7});
  std::vector<uint8_t> Short(W.data().begin(), W.data().end() - 1);
  Error E = decode(Short, Back);
  REQUIRE(E);
  CHECK(E.message() == "launch message: truncated fields");
}

namespace {
/// A whole frame as bytes, laid out as Protocol.h describes.
std::vector<uint8_t> frameBytes(Type T, const MetaWriter &Meta) {
  std::vector<uint8_t> Out(16);
  uint32_t Kind = static_cast<uint32_t>(T), Len = Meta.data().size();
  std::memcpy(Out.data(), &Kind, 4);
  std::memcpy(Out.data() + 4, &Len, 4);
  Out.insert(Out.end(), Meta.data().begin(), Meta.data().end());
  return Out;
}

/// Receives a stream that is written whole into the pipe first (it fits in the
/// pipe's buffer), so the receiver may stop reading at any point.
Expected<RecordStats> receiveBytes(const std::vector<uint8_t> &Bytes,
                                   const std::string &Path) {
  int Fds[2];
  REQUIRE(::pipe(Fds) == 0);
  REQUIRE(::write(Fds[1], Bytes.data(), Bytes.size()) ==
          static_cast<ssize_t>(Bytes.size()));
  ::close(Fds[1]);
  auto Stats = receiveCapture(Fds[0], Path, CaptureHeader{});
  ::close(Fds[0]);
  return Stats;
}
} // namespace

TEST_CASE("random bytes on the record stream are errors, not crashes",
          "[record]") {
  std::string Path = tempPath("noise.h5");
  uint64_t State = 42;
  auto Next = [&] {
    State = State * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint8_t>(State >> 56);
  };
  int Errors = 0;
  for (int Round = 0; Round < 300; ++Round) {
    // Half the rounds start with a valid hello, so that the noise reaches the
    // decoders of the other frames; a type byte in range makes it likelier.
    std::vector<uint8_t> Bytes;
    if (Round % 2)
      Bytes = frameBytes(Type::Hello, encode(HelloMsg{}));
    size_t Start = Bytes.size();
    Bytes.resize(Start + 16 + Round * 3);
    for (size_t I = Start; I < Bytes.size(); ++I)
      Bytes[I] = Next();
    Bytes[Start] = 1 + Round % 8;
    Bytes[Start + 1] = Bytes[Start + 2] = Bytes[Start + 3] = 0;
    Errors += !receiveBytes(Bytes, Path);
    REQUIRE_FALSE(std::filesystem::exists(Path));
  }
  CHECK(Errors == 300);
}
