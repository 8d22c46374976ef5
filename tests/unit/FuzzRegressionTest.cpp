// Regression tests for what fuzzing found (tests/fuzz): each case is one
// crash of a fuzz target, rebuilt as the smallest input that shows it, and
// fails without its fix. Streams whose header claims gigabytes must cost
// only the bytes that arrive; corrupt counts must not size containers;
// damaged captures must give errors, not overflow r3's buffers.
#include "Catch.h"

#include "SyntheticCapture.h"
#include "campaign/WorkerProtocol.h"
#include "capture/CaptureReader.h"
#include "capture/Format.h"
#include "record/CaptureSink.h"
#include "record/Messages.h"
#include "replay/ServerProtocol.h"
#include "support/Frame.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string_view>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace r3;

namespace {
std::string tempPath(const std::string &Name) {
  return (std::filesystem::temp_directory_path() /
          ("r3-fuzz-regression-" + std::to_string(::getpid()) + "-" + Name))
      .string();
}

/// A descriptor reading Bytes, then the end of the stream.
int streamOf(const std::vector<uint8_t> &Bytes) {
  int Fd = ::memfd_create("r3-test-stream", 0);
  REQUIRE(Fd >= 0);
  REQUIRE(::write(Fd, Bytes.data(), Bytes.size()) ==
          static_cast<ssize_t>(Bytes.size()));
  ::lseek(Fd, 0, SEEK_SET);
  return Fd;
}

/// A frame header of the shared codec: type, meta length, bulk length.
std::vector<uint8_t> header(uint32_t Type, uint32_t Meta, uint64_t Bulk) {
  auto H = wire::encodeHeader({Type, Meta, Bulk});
  return {H.begin(), H.end()};
}

/// A "VmHWM:" or "VmRSS:" figure of this process, in KiB.
long statusKiB(const char *Key) {
  std::ifstream In("/proc/self/status");
  std::string Line;
  while (std::getline(In, Line))
    if (Line.starts_with(Key))
      return std::stol(Line.substr(std::strlen(Key)));
  return -1;
}

/// How much the peak resident memory grew, in MiB, while Fn ran in a child
/// process (so that the measure is Fn's alone); -1 when the child died.
long peakGrowthMiB(const std::function<void()> &Fn) {
  pid_t Pid = ::fork();
  REQUIRE(Pid >= 0);
  if (Pid == 0) {
    long Before = statusKiB("VmHWM:");
    Fn();
    long Growth = (statusKiB("VmHWM:") - Before) / 1024;
    ::_exit(static_cast<int>(std::clamp(Growth, 0L, 255L)));
  }
  int Status = 0;
  REQUIRE(::waitpid(Pid, &Status, 0) == Pid);
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

constexpr uint64_t Claimed = (4ull << 30) - 1; // what a corrupt header says
} // namespace

TEST_CASE("fuzz: a replay server frame that claims gigabytes costs only the "
          "bytes that arrive",
          "[fuzz]") {
  // Found by r3-fuzz-server-protocol: readFrame sized its buffers by the
  // header's lengths before reading (a 4 GiB allocation for a 16-byte input).
  // A claim beyond what the protocol's frames carry is refused at once
  // (support/Frame.h's limits); one within them costs what arrives.
  for (uint32_t Meta : {0xF7000000u, 60u << 20}) {
    std::vector<uint8_t> In = header(101, Meta, 0);
    In.insert(In.end(), {1, 2, 3});
    long Growth = peakGrowthMiB([&] {
      int Fd = streamOf(In);
      ServerFrameData F;
      (void)readFrame(Fd, std::nullopt, F);
    });
    CHECK(Growth >= 0);
    CHECK(Growth < 200);
  }
  auto readOne = [](uint32_t Meta) {
    std::vector<uint8_t> In = header(101, Meta, 0);
    In.insert(In.end(), {1, 2, 3});
    int Fd = streamOf(In);
    ServerFrameData F;
    auto S = readFrame(Fd, std::nullopt, F);
    ::close(Fd);
    REQUIRE_FALSE(S);
    return S.error().message();
  };
  CHECK(readOne(0xF7000000u) ==
        "replay server protocol: a frame of type 101 claims 4143972352 meta "
        "bytes, more than any of its frames carries (67108864)");
  CHECK(readOne(60u << 20) == "replay server protocol: the stream ended "
                              "inside a frame (3 of 62914560 bytes)");
}

TEST_CASE("fuzz: a worker message that claims gigabytes costs only the bytes "
          "that arrive",
          "[fuzz]") {
  // Found by r3-fuzz-worker-protocol: readMessage resized its buffer to the
  // header's length (up to 4 GiB) before reading.
  std::vector<uint8_t> In = encodeShutdown();
  std::memcpy(In.data() + 8, &Claimed, 8);
  long Growth = peakGrowthMiB([&] {
    int Fd = streamOf(In);
    (void)readMessage(Fd);
  });
  CHECK(Growth >= 0);
  CHECK(Growth < 200);
  int Fd = streamOf(In);
  auto M = readMessage(Fd);
  ::close(Fd);
  REQUIRE_FALSE(M);
  CHECK(M.error().message() == "worker protocol: the stream ended in the "
                               "middle of a frame (0 of 4294967295 bytes)");
}

TEST_CASE("fuzz: a record stream module image that claims 2 GiB costs only "
          "the bytes that arrive",
          "[fuzz]") {
  // The same pattern in the record stream: a module image was allocated
  // whole (up to 2 GiB) before its bytes were read.
  std::vector<uint8_t> In;
  wire::HelloMsg Hello;
  Hello.Source = Backend::Host;
  auto Append = [&](uint32_t Type, const wire::MetaWriter &M, uint64_t Bulk) {
    std::vector<uint8_t> H = header(Type, M.data().size(), Bulk);
    In.insert(In.end(), H.begin(), H.end());
    In.insert(In.end(), M.data().begin(), M.data().end());
  };
  Append(uint32_t(wire::Type::Hello), wire::encode(Hello), 0);
  Append(uint32_t(wire::Type::Module), wire::encode(wire::ModuleMsg{}),
         (2ull << 30) - 1);
  std::string Path = tempPath("image.h5");
  long Growth = peakGrowthMiB([&] {
    int Fd = streamOf(In);
    (void)receiveCapture(Fd, Path, CaptureHeader{});
  });
  CHECK(Growth >= 0);
  CHECK(Growth < 200);
  int Fd = streamOf(In);
  auto Stats = receiveCapture(Fd, Path, CaptureHeader{});
  ::close(Fd);
  REQUIRE_FALSE(Stats);
  CHECK(Stats.error().message().find("(0 of 2147483647 bytes)") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(Path));
}

TEST_CASE("fuzz: a worker job whose flag count exceeds its bytes is an error",
          "[fuzz]") {
  // Found by r3-fuzz-worker-protocol: the count of a job's compiler flags
  // sized a vector of strings before any was read (0xffffffff of them).
  WorkerJob J;
  J.Source = SourceJob{};
  J.Source->Flags = {"-DX"};
  std::vector<uint8_t> In = encodeJob(J);
  // The count sits before the one flag (its 8-byte length and 3 bytes),
  // which the default compiler settings follow (encodeSettings: an empty
  // pipeline and the codegen level, 8 bytes each, and seven u32 fields).
  size_t At = In.size() - (8 + 3) - (8 + 8 + 7 * 4) - 4;
  uint32_t One = 0;
  std::memcpy(&One, In.data() + At, 4);
  REQUIRE(One == 1);
  uint32_t Huge = 0xffffffffu;
  std::memcpy(In.data() + At, &Huge, 4);
  auto M = decodeMessage(In);
  REQUIRE_FALSE(M);
  CHECK(M.error().message().find("worker job") != std::string::npos);
}

namespace {
/// A synthetic capture with Edit applied to it through HDF5 directly.
std::string damagedCapture(const std::string &Name,
                           const std::function<void(hid_t File)> &Edit) {
  std::string Path = tempPath(Name);
  testing::SyntheticSpec Spec;
  Spec.Kernels = 1;
  Spec.LaunchesPerKernel = 1;
  Spec.RegionsPerLaunch = 1;
  Spec.RegionBytes = 64;
  REQUIRE_FALSE(testing::writeSyntheticCapture(Path, Spec));
  hid_t File = H5Fopen(Path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(File >= 0);
  Edit(File);
  H5Fclose(File);
  return Path;
}

/// Replaces /application/command_line by a variable-length string dataset
/// of N elements that is never written (chunked, so its storage is not
/// allocated and every element reads as HDF5's fill value, a null string).
void unwrittenCommandLine(hid_t File, hsize_t N) {
  REQUIRE(H5Ldelete(File, "/application/command_line", H5P_DEFAULT) >= 0);
  hid_t Type = H5Tcopy(H5T_C_S1);
  H5Tset_size(Type, H5T_VARIABLE);
  hsize_t Max = H5S_UNLIMITED, Chunk = 16;
  hid_t Space = H5Screate_simple(1, &N, &Max);
  hid_t Props = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(Props, 1, &Chunk);
  hid_t D = H5Dcreate2(File, "/application/command_line", Type, Space,
                       H5P_DEFAULT, Props, H5P_DEFAULT);
  REQUIRE(D >= 0);
  H5Dclose(D);
  H5Pclose(Props);
  H5Sclose(Space);
  H5Tclose(Type);
}

std::string openError(const std::string &Path) {
  auto R = CaptureReader::open(Path);
  std::filesystem::remove(Path);
  REQUIRE_FALSE(R);
  return R.error().message();
}
} // namespace

TEST_CASE("fuzz: a capture string list with a missing element is an error",
          "[fuzz]") {
  // Found by r3-fuzz-capture: a null element (never written) became a
  // std::string built from a null pointer, which throws.
  std::string Path = damagedCapture(
      "null-string.h5", [](hid_t F) { unwrittenCommandLine(F, 2); });
  CHECK(openError(Path).ends_with(
      "/application: command_line: a string element is missing (null)"));
}

TEST_CASE("fuzz: a capture list larger than its file is an error", "[fuzz]") {
  // Found by r3-fuzz-capture: a damaged dataspace of 2^59 elements sized a
  // vector before HDF5 read anything.
  std::string Path = damagedCapture(
      "huge-list.h5", [](hid_t F) { unwrittenCommandLine(F, 1ull << 59); });
  std::string Message = openError(Path);
  CHECK(
      Message.find("command_line: 576460752303423488 elements in a file of") !=
      std::string::npos);
  CHECK(Message.ends_with("bytes (a damaged dataspace)"));
}

TEST_CASE("fuzz: a capture's scalar attribute with several values is an error",
          "[fuzz]") {
  // H5Aread writes every element of an attribute: four values overflowed
  // the reader's one variable.
  std::string Path = damagedCapture("wide-attr.h5", [](hid_t F) {
    REQUIRE(H5Adelete(F, format::VersionAttr.c_str()) >= 0);
    hsize_t N = 4;
    uint64_t V[4] = {1, 2, 3, 4};
    hid_t Space = H5Screate_simple(1, &N, nullptr);
    hid_t A = H5Acreate2(F, format::VersionAttr.c_str(), H5T_NATIVE_UINT64,
                         Space, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(A >= 0);
    REQUIRE(H5Awrite(A, H5T_NATIVE_UINT64, V) >= 0);
    H5Aclose(A);
    H5Sclose(Space);
  });
  CHECK(openError(Path).find(
            "attribute 'format_version': expected one value, got 4") !=
        std::string::npos);
}

TEST_CASE("capture superblocks are checked before HDF5 reads them", "[fuzz]") {
  // What r3 can check itself before handing a damaged file to HDF5
  // (capture/Superblock.h), on the superblock HDF5 1.10 writes (version 0).
  std::string Path = damagedCapture("superblock.h5", [](hid_t) {});
  std::vector<char> Bytes;
  {
    std::ifstream In(Path, std::ios::binary);
    Bytes.assign(std::istreambuf_iterator<char>(In), {});
  }
  REQUIRE(Bytes.size() > 96);
  REQUIRE(Bytes[8] == 0); // superblock version 0
  auto Patched = [&](size_t At, uint64_t V) {
    std::vector<char> B = Bytes;
    std::memcpy(B.data() + At, &V, sizeof(V));
    std::ofstream(Path, std::ios::binary).write(B.data(), B.size());
    auto R = CaptureReader::open(Path);
    REQUIRE_FALSE(R);
    return R.error().message().substr(Path.size() + 2);
  };
  CHECK(Patched(64, 1ull << 40) ==
        "damaged HDF5 superblock: the root group at 1099511627776 lies past "
        "the end of the file's data (" +
            std::to_string(Bytes.size()) + ")");
  CHECK(Patched(40, Bytes.size() + 1) ==
        "truncated file: its superblock says " +
            std::to_string(Bytes.size() + 1) + " bytes, the file has " +
            std::to_string(Bytes.size()));
  CHECK(Patched(8, 0x0808080808080807ull)
            .starts_with("HDF5 superblock version 7 is not one HDF5 writes"));
  std::filesystem::remove(Path);
}

TEST_CASE("fuzz: a frame that claims more than its protocol carries is "
          "refused before it is read",
          "[fuzz]") {
  // The shared frame reader (support/Frame.h, which the compile server
  // reads its requests and replies with) checks a header's claims against
  // the protocol's limits before it reads anything; what passes is read as
  // its bytes arrive.
  const wire::FrameLimits Limits{201, 203, 1u << 20, 8};
  auto readAll = [&](const std::vector<uint8_t> &In) {
    int Fd = streamOf(In);
    std::vector<uint8_t> Meta, Bulk;
    auto H = wire::readFrame(Fd, Limits, "test protocol", Meta, Bulk);
    ::close(Fd);
    return H;
  };
  auto H = readAll(header(201, 0xF7000000u, 8));
  REQUIRE_FALSE(H);
  CHECK(H.error().message() ==
        "test protocol: a frame of type 201 claims 4143972352 meta bytes, "
        "more than any of its frames carries (1048576)");
  H = readAll(header(201, 4, Claimed));
  REQUIRE_FALSE(H);
  CHECK(H.error().message() ==
        "test protocol: a frame of type 201 claims 4294967295 bulk bytes, "
        "more than any of its frames carries (8)");
  H = readAll(header(7, 0, 0));
  REQUIRE_FALSE(H);
  CHECK(H.error().message() == "test protocol: not a frame of this protocol "
                               "(type 7, expected 201 to 203)");
  // A short frame: the header's lengths within the limits, the bytes not.
  std::vector<uint8_t> Short = header(202, 1000, 0);
  Short.insert(Short.end(), {1, 2, 3});
  H = readAll(Short);
  REQUIRE_FALSE(H);
  CHECK(H.error().message() == "test protocol: the stream ended in the "
                               "middle of a frame (3 of 1000 bytes)");
  std::vector<uint8_t> Half = header(202, 0, 0);
  Half.resize(9);
  H = readAll(Half);
  REQUIRE_FALSE(H);
  CHECK(H.error().message() == "test protocol: the stream ended in the "
                               "middle of a frame (9 of 16 bytes)");
  // A clean end of the stream, and a whole frame.
  H = readAll({});
  REQUIRE(H);
  CHECK_FALSE(*H);
  std::vector<uint8_t> Whole = header(203, 2, 1);
  Whole.insert(Whole.end(), {7, 8, 9});
  H = readAll(Whole);
  REQUIRE(H);
  REQUIRE(*H);
  CHECK((*H)->Type == 203);
}

namespace {
/// The file offset of the first string of /application/command_line and
/// the global heap collection it refers to (a capture r3 wrote: one
/// contiguous dataset, one collection).
std::pair<uint64_t, uint64_t> commandLineHeap(const std::string &Path) {
  hid_t File = H5Fopen(Path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(File >= 0);
  hid_t D = H5Dopen2(File, "/application/command_line", H5P_DEFAULT);
  REQUIRE(D >= 0);
  haddr_t Elements = H5Dget_offset(D);
  H5Dclose(D);
  H5Fclose(File);
  REQUIRE(Elements != HADDR_UNDEF);
  std::ifstream In(Path, std::ios::binary);
  In.seekg(static_cast<std::streamoff>(Elements + 4));
  uint64_t Heap = 0;
  In.read(reinterpret_cast<char *>(&Heap), 8);
  return {Elements, Heap};
}

/// Writes V at At of the file at Path.
void patch(const std::string &Path, uint64_t At, uint64_t V, size_t Bytes) {
  std::fstream F(Path, std::ios::binary | std::ios::in | std::ios::out);
  F.seekp(static_cast<std::streamoff>(At));
  F.write(reinterpret_cast<const char *>(&V),
          static_cast<std::streamsize>(Bytes));
}
} // namespace

TEST_CASE("fuzz: a damaged global heap is an error, not a read past HDF5's "
          "buffers",
          "[fuzz]") {
  // Found by r3-fuzz-capture: a damaged object size in the global heap
  // collection that holds the command line made HDF5 1.10's H5HG_read copy
  // past its buffer (ASan: memcpy-param-overlap), and a damaged collection
  // size made HDF5 read gigabytes. r3 now checks the collections its
  // strings refer to first (capture/GlobalHeap.h).
  std::string Path = damagedCapture("heap.h5", [](hid_t) {});
  auto [Elements, Heap] = commandLineHeap(Path);
  REQUIRE(Heap > 0);
  std::vector<char> Bytes;
  {
    std::ifstream In(Path, std::ios::binary);
    Bytes.assign(std::istreambuf_iterator<char>(In), {});
  }
  REQUIRE(std::memcmp(Bytes.data() + Heap, "GCOL", 4) == 0);
  auto Damaged = [&](uint64_t At, uint64_t V, size_t N) {
    std::ofstream(Path, std::ios::binary).write(Bytes.data(), Bytes.size());
    patch(Path, At, V, N);
    auto R = CaptureReader::open(Path);
    REQUIRE_FALSE(R);
    return R.error().message().substr(Path.size() + 2);
  };
  std::string Where = "/application: command_line: damaged global heap at "
                      "offset " +
                      std::to_string(Heap) + ": ";
  // The first object's size (the collection's header is 16 bytes, the
  // size sits 8 bytes into the object's header).
  CHECK(Damaged(Heap + 16 + 8, 0x7ffffff0, 8) ==
        Where + "object 1 at offset " + std::to_string(Heap + 16) +
            " claims 2147483632 bytes, more than the " +
            std::to_string(4096 - 16) + " bytes left in the collection");
  CHECK(Damaged(Heap + 8, 1ull << 31, 8) ==
        Where + "a collection of 2147483648 bytes does not fit a file of " +
            std::to_string(Bytes.size()) + " bytes");
  // The first string's length ("./app"; HDF5 stores the strings' objects
  // in its own order).
  uint32_t Object = 0;
  std::memcpy(&Object, Bytes.data() + Elements + 12, 4);
  CHECK(Damaged(Elements, 500, 4) == Where + "object " +
                                         std::to_string(Object) +
                                         " holds 5 bytes, string 0 says 500");
  // Undamaged, the capture opens.
  std::ofstream(Path, std::ios::binary).write(Bytes.data(), Bytes.size());
  CHECK(CaptureReader::open(Path));
  std::filesystem::remove(Path);
}

TEST_CASE("fuzz: the capture seeds pass the global heap checks", "[fuzz]") {
  // No false alarm on captures r3 recorded (the fuzz target's seeds, from
  // the host recipes) or wrote synthetically.
  for (const auto &Entry :
       std::filesystem::directory_iterator(R3_TEST_FUZZ_CAPTURES)) {
    auto R = CaptureReader::open(Entry.path().string());
    INFO(Entry.path().string());
    INFO((R ? std::string() : R.error().message()));
    CHECK(R);
    if (R)
      CHECK_FALSE((*R)->header().CommandLine.empty());
  }
}

namespace {
/// The file offsets of the object header of Object (a path in the capture
/// at Path) and of the first occurrence of Pattern after it: a message of
/// that header found by its bytes, in a capture r3 wrote (version 1
/// headers).
std::pair<uint64_t, uint64_t> findInHeader(const std::string &Path,
                                           const char *Object,
                                           std::string_view Pattern) {
  hid_t File = H5Fopen(Path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(File >= 0);
  H5O_info_t Info;
  REQUIRE(H5Oget_info_by_name2(File, Object, &Info, H5O_INFO_BASIC,
                               H5P_DEFAULT) >= 0);
  H5Fclose(File);
  std::ifstream In(Path, std::ios::binary);
  std::vector<char> Bytes(std::istreambuf_iterator<char>(In), {});
  REQUIRE(Bytes.at(Info.addr) == 1); // a version 1 object header
  auto It = std::search(Bytes.begin() + static_cast<long>(Info.addr),
                        Bytes.end(), Pattern.begin(), Pattern.end());
  REQUIRE(It != Bytes.end());
  return {Info.addr, static_cast<uint64_t>(It - Bytes.begin())};
}

/// The file offset of the root group's object header, and of the data of
/// its attribute message named Name (found by the name, which the message
/// holds 8 bytes into its data).
std::pair<uint64_t, uint64_t> rootAttribute(const std::string &Path,
                                            const std::string &Name) {
  std::string Needle = Name + '\0';
  auto [Header, At] = findInHeader(Path, "/", Needle);
  std::ifstream In(Path, std::ios::binary);
  std::vector<char> Bytes(std::istreambuf_iterator<char>(In), {});
  uint64_t Data = At - 8;
  REQUIRE(Bytes.at(Data) == 1); // attribute message version 1
  REQUIRE(static_cast<uint8_t>(Bytes.at(Data + 2)) == Needle.size());
  return {Header, Data};
}
} // namespace

TEST_CASE("fuzz: a damaged attribute message is an error, not a read past "
          "HDF5's buffers",
          "[fuzz]") {
  // Found by r3-fuzz-capture: a damaged attribute message in the root
  // group's header made HDF5 1.10's attribute decoder, under r3's first
  // H5Aexists, strdup a name with no null inside the message or copy a value
  // past it (ASan: heap-buffer-overflow). r3 now checks every attribute
  // message of an object before HDF5 decodes one (capture/ObjectHeader.h).
  std::string Path = damagedCapture("attribute.h5", [](hid_t) {});
  auto [Header, Data] = rootAttribute(Path, format::VersionAttr);
  std::vector<char> Bytes;
  {
    std::ifstream In(Path, std::ios::binary);
    Bytes.assign(std::istreambuf_iterator<char>(In), {});
  }
  uint64_t MessageSize = static_cast<uint8_t>(Bytes[Data - 6]) |
                         static_cast<uint8_t>(Bytes[Data - 5]) << 8;
  auto Damaged = [&](uint64_t At, uint64_t V, size_t N) {
    std::ofstream(Path, std::ios::binary).write(Bytes.data(), Bytes.size());
    patch(Path, At, V, N);
    auto R = CaptureReader::open(Path);
    REQUIRE_FALSE(R);
    return R.error().message().substr(Path.size() + 2);
  };
  std::string Where = "/: damaged object header at offset " +
                      std::to_string(Header) +
                      ": the attribute message at offset " +
                      std::to_string(Data - 8) + ": ";
  // The name's size (2 bytes at 2), past the message.
  CHECK(Damaged(Data + 2, 0xfff0, 2) ==
        Where + "its name (65520 bytes at 8) runs past the message (" +
            std::to_string(MessageSize) + " bytes)");
  // The name without its terminating null: "format_version" is 14 bytes.
  CHECK(Damaged(Data + 2, 14, 2) ==
        Where + "its name has no terminating null within its 14 bytes");
  // The datatype's size (4 bytes at 4 of the datatype, which follows the
  // name padded to 8 bytes): the value of one element no longer fits.
  uint64_t Datatype = Data + 8 + 16;
  CHECK(Damaged(Datatype + 4, 1u << 20, 4).starts_with(
      Where + "its value (1 elements of 1048576 bytes) is larger than the "));
  // A datatype class r3 does not write (6: compound).
  CHECK(Damaged(Datatype, 0x16, 1) ==
        Where + "datatype class 6, which r3 does not write in attributes (it "
                "writes integers and fixed-length strings)");
  // The message's own size, past its chunk: HDF5 checks that itself when
  // it loads the header.
  CHECK(Damaged(Data - 6, 0xfff8, 2) ==
        "cannot open HDF5 file: corrupt object header");
  // Undamaged, the capture opens.
  std::ofstream(Path, std::ios::binary).write(Bytes.data(), Bytes.size());
  CHECK(CaptureReader::open(Path));
  std::filesystem::remove(Path);
}

TEST_CASE("fuzz: a byte dataset larger than what its file stores is an "
          "error, not gigabytes of zeros",
          "[fuzz]") {
  // Found by r3-fuzz-capture: a damaged dataspace made a 45 KB capture's
  // module image 1.7 GB, which HDF5 reads as zeros where no chunk is stored,
  // so readModule allocated it and the fuzzer ran out of memory. Every
  // chunk of a byte dataset must now be stored.
  std::string Path = damagedCapture("unstored.h5", [](hid_t F) {
    REQUIRE(H5Ldelete(F, "/modules/0/image", H5P_DEFAULT) >= 0);
    hsize_t N = 1ull << 30, Chunk = 4ull << 20;
    hid_t Space = H5Screate_simple(1, &N, nullptr);
    hid_t Props = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(Props, 1, &Chunk);
    hid_t D = H5Dcreate2(F, "/modules/0/image", H5T_NATIVE_UINT8, Space,
                         H5P_DEFAULT, Props, H5P_DEFAULT);
    REQUIRE(D >= 0);
    // The first chunk only.
    std::vector<uint8_t> Bytes(Chunk, 7);
    hsize_t Start = 0;
    hid_t Mem = H5Screate_simple(1, &Chunk, nullptr);
    H5Sselect_hyperslab(Space, H5S_SELECT_SET, &Start, nullptr, &Chunk,
                        nullptr);
    REQUIRE(H5Dwrite(D, H5T_NATIVE_UINT8, Mem, Space, H5P_DEFAULT,
                     Bytes.data()) >= 0);
    H5Sclose(Mem);
    H5Dclose(D);
    H5Pclose(Props);
    H5Sclose(Space);
  });
  CHECK(openError(Path).ends_with(
      "/modules/0/image: 1 of its 256 chunks of 4194304 bytes stored (a "
      "damaged or unfinished file)"));
}

TEST_CASE("fuzz: a variable-length string of huge characters is an error, "
          "not gigabytes of conversion buffers",
          "[fuzz]") {
  // Found by r3-fuzz-capture: the command line's datatype said each
  // character of its variable-length strings was 2.5 GB, and HDF5 1.10
  // converted the strings with buffers of that size (15 GB resident for a
  // 45 KB file). r3 now checks the character size first.
  std::string Path = damagedCapture("huge-char.h5", [](hid_t) {});
  // The datatype message's data: class 9 (variable-length) version 1, a
  // string, 16 bytes an element; its character type's size 12 bytes in.
  const char Type[] = {0x19, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00};
  auto [Header, Data] = findInHeader(Path, "/application/command_line",
                                     std::string_view(Type, sizeof(Type)));
  patch(Path, Data + 12, 0x98000001, 4);
  CHECK(openError(Path).ends_with(
      "/application: command_line: damaged object header at offset " +
      std::to_string(Header) + ": the datatype message at offset " +
      std::to_string(Data - 8) +
      ": a variable-length string of 2550136833-byte characters (expected "
      "1)"));
}

TEST_CASE("fuzz: a damaged region count is an error, not a huge vector",
          "[fuzz]") {
  // Found by r3-fuzz-capture: a launch's region_count sized its vector of
  // regions before any was read (ASan: out of memory for 2^61 bytes).
  std::string Path = damagedCapture("region-count.h5", [](hid_t F) {
    hid_t G = H5Gopen2(F, "/launches/0", H5P_DEFAULT);
    REQUIRE(G >= 0);
    uint64_t Huge = 1ull << 56;
    hid_t A = H5Aopen(G, "region_count", H5P_DEFAULT);
    REQUIRE(A >= 0);
    REQUIRE(H5Awrite(A, H5T_NATIVE_UINT64, &Huge) >= 0);
    H5Aclose(A);
    H5Gclose(G);
  });
  std::string Message = openError(Path);
  INFO(Message);
  CHECK(Message.ends_with("/launches/0/pre/region_1: missing dataset"));
}

TEST_CASE("fuzz: a string dataset whose layout became compact is an error, "
          "not a crash in HDF5",
          "[fuzz]") {
  // Found by r3-fuzz-capture: five bytes turned the environment's layout
  // message (version 3, contiguous) into a version 1 compact layout whose
  // data holds 0 bytes; HDF5 1.10's H5Dread then copied the four elements
  // from a null buffer (SEGV, with or without ASan). r3 reads such strings
  // only from contiguous storage, or from chunked storage never written.
  std::string Path = damagedCapture("compact.h5", [](hid_t) {});
  // The layout message: type 8, 24 bytes, then version 3, contiguous.
  const char Layout[] = {0x08, 0x00, 0x18, 0x00, 0x00, 0x00,
                         0x00, 0x00, 0x03, 0x01};
  uint64_t Data = findInHeader(Path, "/application/environment",
                               std::string_view(Layout, sizeof(Layout)))
                      .second +
                  8;
  std::vector<char> Bytes;
  {
    std::ifstream In(Path, std::ios::binary);
    Bytes.assign(std::istreambuf_iterator<char>(In), {});
  }
  // What the fuzzer wrote: version 1, three dimensions (the last is the
  // element size), compact, then dimensions 0x400000, 0, 0 and 0 bytes of
  // compact data.
  const uint8_t Damaged[24] = {1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0};
  std::memcpy(Bytes.data() + Data, Damaged, sizeof(Damaged));
  std::ofstream(Path, std::ios::binary).write(Bytes.data(), Bytes.size());
  std::string Message = openError(Path);
  INFO(Message);
  CHECK(Message.ends_with("/application: environment: expected "
                          "variable-length strings stored contiguously in "
                          "the file, as r3 writes them"));
}

namespace {
/// The file offsets of the object header of the chunked dataset Object and
/// of its layout message (type 8, 24 bytes: version 3, chunked, rank 2 for
/// a byte dataset: the bytes and the element), in a capture r3 wrote.
std::pair<uint64_t, uint64_t> chunkedLayout(const std::string &Path,
                                            const char *Object) {
  const char Layout[] = {0x08, 0x00, 0x18, 0x00, 0x00, 0x00,
                         0x00, 0x00, 0x03, 0x02, 0x02};
  return findInHeader(Path, Object, std::string_view(Layout, sizeof(Layout)));
}
} // namespace

TEST_CASE("fuzz: a chunk dimension of 0 is an error, not a division by zero "
          "in HDF5",
          "[fuzz]") {
  // Found by r3-fuzz-capture: a damaged layout message gave a region's
  // dataset a chunk dimension of 0, and HDF5 1.10 divided by it when it
  // opened the dataset (ASan: FPE under H5D__chunk_set_info). r3 checks a
  // dataset's layout before HDF5 opens it (capture/ObjectHeader.h).
  std::string Path = damagedCapture("chunk-zero.h5", [](hid_t) {});
  const char *Region = "/launches/0/pre/region_0";
  auto [Header, Message] = chunkedLayout(Path, Region);
  // The first dimension: after the message header (8), the version, class
  // and rank (3) and the index's address (8).
  patch(Path, Message + 8 + 11, 0, 4);
  CHECK(openError(Path).ends_with(
      std::string(Region) + ": damaged object header at offset " +
      std::to_string(Header) + ": the layout message at offset " +
      std::to_string(Message) + ": chunk dimension 0 is 0"));
}

TEST_CASE("fuzz: a chunked layout of rank 0 is an error, not a division by "
          "zero in HDF5",
          "[fuzz]") {
  // Found by r3-fuzz-capture: a damaged layout made an empty contiguous
  // list chunked with no dimensions; HDF5 1.10 divided by the missing
  // dimension of its one-dimensional dataspace (ASan: FPE under
  // H5D__chunk_set_info). A chunked layout's rank must be the dataspace's
  // plus one (the element).
  std::string Path = damagedCapture("chunk-rank.h5", [](hid_t) {});
  const char *Region = "/launches/0/pre/region_0";
  auto [Header, Message] = chunkedLayout(Path, Region);
  patch(Path, Message + 8 + 2, 0, 1);
  CHECK(openError(Path).ends_with(
      std::string(Region) + ": damaged object header at offset " +
      std::to_string(Header) + ": the layout message at offset " +
      std::to_string(Message) +
      ": a chunked layout of rank 0 (expected 2 to 33)"));
}

TEST_CASE("fuzz: a damaged chunk size is an error, not a checksum past "
          "HDF5's buffer",
          "[fuzz]") {
  // Found by the capture target's 20 s smoke: a damaged size of a stored
  // chunk (1 byte) in the chunk index made HDF5 1.10's Fletcher-32 filter
  // checksum all but the last 4 of its bytes, a size that wrapped around
  // (SEGV in H5_checksum_fletcher32). r3 checks each chunk's size first.
  std::string Path = damagedCapture("chunk-size.h5", [](hid_t) {});
  const char *Region = "/launches/0/pre/region_0";
  hid_t File = H5Fopen(Path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(File >= 0);
  hid_t D = H5Dopen2(File, Region, H5P_DEFAULT);
  REQUIRE(D >= 0);
  hsize_t Offset = 0, Stored = 0;
  unsigned Mask = 0;
  haddr_t Chunk = HADDR_UNDEF;
  REQUIRE(H5Dget_chunk_info_by_coord(D, &Offset, &Mask, &Chunk, &Stored) >=
          0);
  H5Dclose(D);
  H5Fclose(File);
  // The chunk index is a version 1 B-tree ("TREE") at the layout's
  // address (3 bytes into its data); its first key starts 24 bytes into
  // the node with the first chunk's stored size (4 bytes).
  auto [Header, Message] = chunkedLayout(Path, Region);
  (void)Header;
  std::vector<char> Bytes;
  {
    std::ifstream In(Path, std::ios::binary);
    Bytes.assign(std::istreambuf_iterator<char>(In), {});
  }
  uint64_t Tree = 0;
  std::memcpy(&Tree, Bytes.data() + Message + 8 + 3, 8);
  REQUIRE(std::memcmp(Bytes.data() + Tree, "TREE", 4) == 0);
  uint32_t Size = 0;
  std::memcpy(&Size, Bytes.data() + Tree + 24, 4);
  REQUIRE(Size == Stored);
  patch(Path, Tree + 24, 1, 4);
  CHECK(openError(Path).ends_with(
      std::string(Region) + ": chunk 0 claims 1 bytes at offset " +
      std::to_string(Chunk) + " (a damaged chunk index: " +
      std::to_string(Stored) + " bytes expected in a file of " +
      std::to_string(Bytes.size()) + ")"));
}

TEST_CASE("fuzz: a list whose elements have size 0 is an error, not a "
          "division by zero",
          "[fuzz]") {
  // Found by r3-fuzz-capture (UBSan): a damaged datatype gave a kernel's
  // list of integers elements of 0 bytes, and checkStored divided the bytes
  // stored by it.
  std::string Path = damagedCapture("zero-size.h5", [](hid_t) {});
  // The datatype message's data: class 0 (fixed-point) version 1, 8 bytes.
  const char Type[] = {0x10, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00};
  auto [Header, Data] = findInHeader(Path, "/kernels/0/param_offsets",
                                     std::string_view(Type, sizeof(Type)));
  patch(Path, Data + 4, 0, 4);
  std::string Message = openError(Path);
  INFO(Message);
  CHECK(Message.ends_with(
      "/kernels/0: param_offsets: elements of 0 bytes (a damaged datatype)"));
}

TEST_CASE("fuzz: a dataset of a datatype class r3 does not write is an "
          "error, not a copy past HDF5's buffer",
          "[fuzz]") {
  // Found by r3-fuzz-capture: one bit turned the command line's
  // variable-length string type (class 9) into an enumeration (class 8)
  // whose members the message does not hold, and HDF5 1.10 copied them past
  // its buffer when it opened the dataset (ASan: heap-buffer-overflow under
  // H5T_copy). r3 now accepts in a dataset only the classes it writes.
  std::string Path = damagedCapture("enum.h5", [](hid_t) {});
  const char Type[] = {0x19, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00};
  auto [Header, Data] = findInHeader(Path, "/application/command_line",
                                     std::string_view(Type, sizeof(Type)));
  patch(Path, Data, 0x18, 1);
  CHECK(openError(Path).ends_with(
      "/application: command_line: damaged object header at offset " +
      std::to_string(Header) + ": the datatype message at offset " +
      std::to_string(Data - 8) +
      ": datatype class 8, which r3 does not write in datasets (it writes "
      "integers and variable-length strings)"));
}
