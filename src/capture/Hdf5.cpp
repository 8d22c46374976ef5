// HDF5 C API wrapper. Every call that can fail is checked here, once, and its
// failure converted to an r3::Error carrying HDF5's own words.
#include "capture/Hdf5.h"

#include "capture/GlobalHeap.h"
#include "capture/ObjectHeader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <functional>
#include <mutex>
#include <utility>

#include <unistd.h>

namespace r3::h5 {

Handle &Handle::operator=(Handle &&O) noexcept {
  if (this != &O) {
    reset();
    Id = O.Id;
    Close = O.Close;
    O.Id = -1;
  }
  return *this;
}

void Handle::reset() {
  if (Id >= 0 && Close)
    Close(Id);
  Id = -1;
}

void silenceErrors() {
  static std::once_flag Once;
  std::call_once(Once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {
herr_t collectMessage(unsigned, const H5E_error2_t *E, void *Data) {
  auto *Messages = static_cast<std::vector<std::string> *>(Data);
  if (E->desc && *E->desc)
    Messages->push_back(E->desc);
  return 0;
}

bool containsCaseless(const std::string &S, const std::string &Needle) {
  auto It = std::search(
      S.begin(), S.end(), Needle.begin(), Needle.end(),
      [](char A, char B) { return std::tolower(A) == std::tolower(B); });
  return It != S.end();
}
} // namespace

Error lastError(const std::string &What) {
  std::vector<std::string> Messages; // most specific first
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collectMessage, &Messages);
  H5Eclear2(H5E_DEFAULT);
  for (const std::string &M : Messages)
    if (containsCaseless(M, "fletcher32") || containsCaseless(M, "checksum"))
      // Corruption is the whole story: the caller adds the object's path.
      return Error::make("checksum mismatch (the stored data is corrupt)");
  for (const std::string &M : Messages)
    if (containsCaseless(M, "truncated file"))
      return Error::make(What + ": truncated file (" + M + ")");
  if (Messages.empty())
    return Error::make(What + ": HDF5 call failed");
  return Error::make(What + ": " + Messages.front());
}

Expected<Handle> createFile(const std::string &Path) {
  silenceErrors();
  hid_t Id = H5Fcreate(Path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (Id < 0)
    return lastError("cannot create HDF5 file");
  return Handle(Id, H5Fclose);
}

Expected<Handle> openFile(const std::string &Path) {
  silenceErrors();
  htri_t Is = H5Fis_hdf5(Path.c_str());
  if (Is == 0)
    return Error::make("not an HDF5 file");
  if (Is < 0)
    return lastError("cannot read file");
  hid_t Id = H5Fopen(Path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (Id < 0)
    return lastError("cannot open HDF5 file");
  return Handle(Id, H5Fclose);
}

namespace {
/// The size in bytes of the file that holds Obj (0 when unknown).
uint64_t fileBytes(hid_t Obj) {
  Handle File(H5Iget_file_id(Obj), H5Fclose);
  hsize_t Size = 0;
  if (!File.valid() || H5Fget_filesize(File.get(), &Size) < 0)
    return 0;
  return Size;
}

/// The path of the file that holds Obj.
std::string filePath(hid_t Obj) {
  ssize_t N = H5Fget_name(Obj, nullptr, 0);
  if (N <= 0)
    return "";
  std::string Path(static_cast<size_t>(N) + 1, '\0');
  H5Fget_name(Obj, Path.data(), Path.size());
  Path.resize(static_cast<size_t>(N));
  return Path;
}

/// Calls Check with the size of the file that holds Obj and a reader of its
/// bytes, for r3's checks of metadata that HDF5 trusts. With HDF5's default
/// driver the reader reads HDF5's own descriptor of the file (a check per
/// object opens nothing); otherwise it opens the file by name.
Error withFileBytes(
    hid_t Obj, const std::function<Error(uint64_t, const ReadAt &)> &Check) {
  Handle File(H5Iget_file_id(Obj), H5Fclose);
  hsize_t Size = 0;
  if (!File.valid() || H5Fget_filesize(File.get(), &Size) < 0)
    return lastError("cannot find the size of its file");
  Handle Access(H5Fget_access_plist(File.get()), H5Pclose);
  void *Vfd = nullptr;
  if (Access.valid() && H5Pget_driver(Access.get()) == H5FD_SEC2 &&
      H5Fget_vfd_handle(File.get(), Access.get(), &Vfd) >= 0 && Vfd) {
    int Fd = *static_cast<int *>(Vfd);
    ReadAt Read = [Fd](uint64_t At, std::span<uint8_t> Out) -> Error {
      size_t Done = 0;
      while (Done < Out.size()) {
        ssize_t N = ::pread(Fd, Out.data() + Done, Out.size() - Done,
                            static_cast<off_t>(At + Done));
        if (N < 0 && errno == EINTR)
          continue;
        if (N <= 0)
          return makeError("cannot read ", Out.size(), " bytes at offset ",
                           At, " of the file");
        Done += static_cast<size_t>(N);
      }
      return Error::success();
    };
    return Check(Size, Read);
  }
  H5Eclear2(H5E_DEFAULT);
  std::string Path = filePath(Obj);
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return makeError("cannot read ", Path);
  ReadAt Read = [&](uint64_t At, std::span<uint8_t> Out) -> Error {
    In.clear();
    In.seekg(static_cast<std::streamoff>(At));
    In.read(reinterpret_cast<char *>(Out.data()),
            static_cast<std::streamsize>(Out.size()));
    if (static_cast<size_t>(In.gcount()) != Out.size())
      return makeError("cannot read ", Out.size(), " bytes at offset ", At,
                       " of ", Path);
    return Error::success();
  };
  return Check(Size, Read);
}

/// Where the object Name at Loc ("." for Loc itself) has its header: the
/// serial number HDF5 gives its open file (never reused in a process) and
/// the header's address in the file. H5O_INFO_BASIC loads the header
/// without decoding its attribute or layout messages.
Expected<std::pair<uint64_t, uint64_t>> headerPlace(hid_t Loc,
                                                    const char *Name) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t Info;
  haddr_t Addr = HADDR_UNDEF;
  if (H5Oget_info_by_name3(Loc, Name, &Info, H5O_INFO_BASIC, H5P_DEFAULT) <
          0 ||
      H5VLnative_token_to_addr(Loc, Info.token, &Addr) < 0)
    return lastError("cannot read its object header");
  return std::pair<uint64_t, uint64_t>(Info.fileno, Addr);
#else
  H5O_info_t Info;
  if (H5Oget_info_by_name2(Loc, Name, &Info, H5O_INFO_BASIC, H5P_DEFAULT) <
      0)
    return lastError("cannot read its object header");
  return std::pair<uint64_t, uint64_t>(Info.fileno, Info.addr);
#endif
}

/// Checks the header of the object Name at Loc ("." for Loc itself) before
/// HDF5 opens it as a dataset, decodes any of its attributes or converts
/// its strings (capture/ObjectHeader.h). The reader asks for several
/// attributes of one object in a row, so the last header found sound is not
/// read again (half the time of opening a capture of 8000 regions went to
/// reading the same headers again).
Error checkHeader(hid_t Loc, const char *Name = ".") {
  std::pair<uint64_t, uint64_t> Place;
  R3_TRY(moveInto(headerPlace(Loc, Name), Place));
  // Per thread: the header last found sound, and whether the file last
  // asked about (by its serial number) is open for writing.
  thread_local std::pair<uint64_t, uint64_t> LastSound{UINT64_MAX,
                                                       UINT64_MAX};
  thread_local std::pair<uint64_t, bool> LastFile{UINT64_MAX, false};
  if (Place == LastSound)
    return Error::success();
  if (LastFile.first != Place.first) {
    Handle File(H5Iget_file_id(Loc), H5Fclose);
    unsigned Intent = 0;
    bool Writing = File.valid() && H5Fget_intent(File.get(), &Intent) >= 0 &&
                   (Intent & H5F_ACC_RDWR);
    LastFile = {Place.first, Writing};
  }
  // A file open for writing is one r3 is writing: its headers are r3's
  // own, and not all on disk yet.
  if (LastFile.second)
    return Error::success();
  R3_TRY(withFileBytes(Loc, [&](uint64_t FileSize, const ReadAt &Read) {
    return checkObjectHeader(Place.second, FileSize, Read);
  }));
  LastSound = Place;
  return Error::success();
}
} // namespace

Expected<Handle> createGroup(hid_t Loc, const std::string &Name) {
  hid_t Id =
      H5Gcreate2(Loc, Name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (Id < 0)
    return lastError(Name + ": cannot create group");
  return Handle(Id, H5Gclose);
}

Expected<Handle> openGroup(hid_t Loc, const std::string &Name) {
  if (!exists(Loc, Name))
    return Error::make(Name + ": missing group");
  hid_t Id = H5Gopen2(Loc, Name.c_str(), H5P_DEFAULT);
  if (Id < 0)
    return lastError(Name + ": cannot open group");
  return Handle(Id, H5Gclose);
}

Expected<Handle> openDataset(hid_t Loc, const std::string &Name) {
  if (!exists(Loc, Name))
    return Error::make(Name + ": missing dataset");
  if (Error E = checkHeader(Loc, Name.c_str()))
    return std::move(E).context(Name);
  hid_t Id = H5Dopen2(Loc, Name.c_str(), H5P_DEFAULT);
  if (Id < 0)
    return lastError(Name + ": cannot open dataset");
  return Handle(Id, H5Dclose);
}

bool exists(hid_t Loc, const std::string &Name) {
  htri_t R = H5Lexists(Loc, Name.c_str(), H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  return R > 0;
}


Expected<bool> hasAttribute(hid_t Obj, const std::string &Name) {
  R3_TRY(checkHeader(Obj));
  htri_t R = H5Aexists(Obj, Name.c_str());
  H5Eclear2(H5E_DEFAULT);
  return R > 0;
}

namespace {
Error writeRawAttr(hid_t Obj, const std::string &Name, hid_t Type, hid_t Space,
                   const void *Data) {
  // A file r3 is writing: its header is r3's own, and not all on disk yet.
  if (H5Aexists(Obj, Name.c_str()) > 0)
    H5Adelete(Obj, Name.c_str());
  H5Eclear2(H5E_DEFAULT);
  Handle A(H5Acreate2(Obj, Name.c_str(), Type, Space, H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  if (!A.valid() || H5Awrite(A.get(), Type, Data) < 0)
    return lastError("attribute '" + Name + "': cannot write");
  return Error::success();
}

Error writeScalarAttr(hid_t Obj, const std::string &Name, hid_t Type,
                      const void *V) {
  Handle Space(H5Screate(H5S_SCALAR), H5Sclose);
  return writeRawAttr(Obj, Name, Type, Space.get(), V);
}

Expected<Handle> openAttr(hid_t Obj, const std::string &Name) {
  bool Exists = false;
  R3_TRY(moveInto(hasAttribute(Obj, Name), Exists));
  if (!Exists)
    return Error::make("missing attribute '" + Name + "'");
  hid_t Id = H5Aopen(Obj, Name.c_str(), H5P_DEFAULT);
  if (Id < 0)
    return lastError("attribute '" + Name + "'");
  return Handle(Id, H5Aclose);
}

/// Number of elements in an attribute's or dataset's dataspace.
int64_t elementCount(hid_t Space) {
  return H5Sget_simple_extent_npoints(Space);
}

/// H5Aread writes every element of an attribute: the scalar readers'
/// attributes must hold exactly one, or a damaged file overflows them.
Error expectOne(hid_t Attr, const std::string &Name) {
  Handle Space(H5Aget_space(Attr), H5Sclose);
  int64_t N = elementCount(Space.get());
  if (N != 1)
    return makeError("attribute '", Name, "': expected one value, got ", N);
  return Error::success();
}

/// The element count of a small object that r3 reads whole (an attribute,
/// a list of integers or strings, a parameter buffer), checked before a
/// buffer is sized by it: such objects are stored whole, uncompressed, so
/// one cannot hold more elements than its file has bytes. A larger count is
/// a damaged dataspace (it once asked for exabytes).
Expected<size_t> smallCount(hid_t Obj, hid_t Space, const std::string &Name) {
  int64_t N = elementCount(Space);
  if (N < 0)
    return lastError(Name + ": cannot read its dataspace");
  uint64_t Limit = fileBytes(Obj);
  if (static_cast<uint64_t>(N) > Limit)
    return makeError(Name, ": ", N, " elements in a file of ", Limit,
                     " bytes (a damaged dataspace)");
  return static_cast<size_t>(N);
}

Error expectClass(hid_t Obj, H5T_class_t Class, const std::string &Name,
                  const char *Expected, bool IsAttr) {
  Handle Type(IsAttr ? H5Aget_type(Obj) : H5Dget_type(Obj), H5Tclose);
  if (H5Tget_class(Type.get()) != Class)
    return Error::make(std::string(IsAttr ? "attribute '" : "dataset '") +
                       Name + "': expected " + Expected);
  return Error::success();
}
} // namespace

Error writeAttr(hid_t Obj, const std::string &Name, uint64_t Value) {
  return writeScalarAttr(Obj, Name, H5T_NATIVE_UINT64, &Value);
}

Error writeAttr(hid_t Obj, const std::string &Name, int64_t Value) {
  return writeScalarAttr(Obj, Name, H5T_NATIVE_INT64, &Value);
}

Error writeAttr(hid_t Obj, const std::string &Name, const std::string &Value) {
  Handle Type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(Type.get(), std::max<size_t>(1, Value.size()));
  H5Tset_strpad(Type.get(), H5T_STR_NULLPAD);
  std::string Padded = Value.empty() ? std::string(1, '\0') : Value;
  return writeScalarAttr(Obj, Name, Type.get(), Padded.data());
}

Error writeAttr(hid_t Obj, const std::string &Name,
                std::span<const uint32_t> Values) {
  hsize_t N = Values.size();
  Handle Space(H5Screate_simple(1, &N, nullptr), H5Sclose);
  return writeRawAttr(Obj, Name, H5T_NATIVE_UINT32, Space.get(), Values.data());
}

Expected<uint64_t> readUnsignedAttr(hid_t Obj, const std::string &Name) {
  auto A = openAttr(Obj, Name);
  if (!A)
    return A.takeError();
  R3_TRY(expectClass(A->get(), H5T_INTEGER, Name, "an integer", true));
  R3_TRY(expectOne(A->get(), Name));
  uint64_t V = 0;
  if (H5Aread(A->get(), H5T_NATIVE_UINT64, &V) < 0)
    return lastError("attribute '" + Name + "'");
  return V;
}

Expected<int64_t> readSignedAttr(hid_t Obj, const std::string &Name) {
  auto A = openAttr(Obj, Name);
  if (!A)
    return A.takeError();
  R3_TRY(expectClass(A->get(), H5T_INTEGER, Name, "an integer", true));
  R3_TRY(expectOne(A->get(), Name));
  int64_t V = 0;
  if (H5Aread(A->get(), H5T_NATIVE_INT64, &V) < 0)
    return lastError("attribute '" + Name + "'");
  return V;
}

Expected<std::string> readStringAttr(hid_t Obj, const std::string &Name) {
  auto A = openAttr(Obj, Name);
  if (!A)
    return A.takeError();
  R3_TRY(expectClass(A->get(), H5T_STRING, Name, "a string", true));
  Handle Type(H5Aget_type(A->get()), H5Tclose);
  if (H5Tis_variable_str(Type.get()) > 0)
    return Error::make("attribute '" + Name +
                       "': expected a fixed-length string");
  R3_TRY(expectOne(A->get(), Name));
  size_t Bytes = H5Tget_size(Type.get());
  if (Bytes > fileBytes(Obj))
    return makeError("attribute '", Name, "': a string of ", Bytes,
                     " bytes in a file of ", fileBytes(Obj), " bytes");
  std::string S(Bytes, '\0');
  if (H5Aread(A->get(), Type.get(), S.data()) < 0)
    return lastError("attribute '" + Name + "'");
  S.resize(S.find('\0') == std::string::npos ? S.size() : S.find('\0'));
  return S;
}

Expected<std::vector<uint32_t>> readU32ArrayAttr(hid_t Obj,
                                                 const std::string &Name) {
  auto A = openAttr(Obj, Name);
  if (!A)
    return A.takeError();
  R3_TRY(expectClass(A->get(), H5T_INTEGER, Name, "integers", true));
  Handle Space(H5Aget_space(A->get()), H5Sclose);
  size_t N = 0;
  R3_TRY(moveInto(smallCount(Obj, Space.get(), "attribute '" + Name + "'"), N));
  std::vector<uint32_t> V(N);
  if (!V.empty() && H5Aread(A->get(), H5T_NATIVE_UINT32, V.data()) < 0)
    return lastError("attribute '" + Name + "'");
  return V;
}

namespace {
Expected<Handle> createSimple(hid_t Loc, const std::string &Name, hid_t Type,
                              uint64_t N) {
  hsize_t Dims = N;
  Handle Space(H5Screate_simple(1, &Dims, nullptr), H5Sclose);
  hid_t Id = H5Dcreate2(Loc, Name.c_str(), Type, Space.get(), H5P_DEFAULT,
                        H5P_DEFAULT, H5P_DEFAULT);
  if (Id < 0)
    return lastError(Name + ": cannot create dataset");
  return Handle(Id, H5Dclose);
}
} // namespace

Error writeU64Dataset(hid_t Loc, const std::string &Name,
                      std::span<const uint64_t> V) {
  auto D = createSimple(Loc, Name, H5T_NATIVE_UINT64, V.size());
  if (!D)
    return D.takeError();
  if (!V.empty() && H5Dwrite(D->get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL,
                             H5P_DEFAULT, V.data()) < 0)
    return lastError(Name + ": cannot write");
  return Error::success();
}

Expected<std::vector<uint64_t>> readU64Dataset(hid_t Loc,
                                               const std::string &Name) {
  auto D = openDataset(Loc, Name);
  if (!D)
    return D.takeError();
  R3_TRY(expectClass(D->get(), H5T_INTEGER, Name, "integers", false));
  Handle Space(H5Dget_space(D->get()), H5Sclose);
  size_t N = 0;
  R3_TRY(moveInto(smallCount(D->get(), Space.get(), Name), N));
  if (Error E = checkStored(D->get(), N))
    return std::move(E).context(Name);
  std::vector<uint64_t> V(N);
  if (!V.empty() && H5Dread(D->get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL,
                            H5P_DEFAULT, V.data()) < 0)
    return lastError(Name);
  return V;
}

Error writeStringDataset(hid_t Loc, const std::string &Name,
                         const std::vector<std::string> &V) {
  Handle Type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(Type.get(), H5T_VARIABLE);
  auto D = createSimple(Loc, Name, Type.get(), V.size());
  if (!D)
    return D.takeError();
  std::vector<const char *> Ptrs;
  for (const std::string &S : V)
    Ptrs.push_back(S.c_str());
  if (!V.empty() && H5Dwrite(D->get(), Type.get(), H5S_ALL, H5S_ALL,
                             H5P_DEFAULT, Ptrs.data()) < 0)
    return lastError(Name + ": cannot write");
  return Error::success();
}

namespace {
/// Checks a variable-length string dataset of Count elements, and the
/// global heap collections it refers to, before HDF5 converts its strings
/// (capture/GlobalHeap.h): HDF5 1.10 trusts the heap's sizes. r3 writes
/// these datasets contiguous; one with nothing stored reads as null
/// strings, which refer to no heap.
Error checkStringStorage(hid_t Dataset, uint64_t Count) {
  haddr_t Offset = H5Dget_offset(Dataset);
  if (Offset == HADDR_UNDEF) {
    // Chunked and never written. Not compact: HDF5 1.10 copies a compact
    // dataset's elements from a buffer of the size its layout message says,
    // and a damaged one (0 bytes) crashed r3 inside H5Dread.
    Handle Props(H5Dget_create_plist(Dataset), H5Pclose);
    if (Props.valid() && H5Pget_layout(Props.get()) == H5D_CHUNKED &&
        H5Dget_storage_size(Dataset) == 0)
      return Error::success();
    return Error::make("expected variable-length strings stored contiguously "
                       "in the file, as r3 writes them");
  }
  return withFileBytes(Dataset, [&](uint64_t FileSize, const ReadAt &Read) {
    return checkVlenStrings(Offset, Count, FileSize, Read);
  });
}
} // namespace

Expected<std::vector<std::string>> readStringDataset(hid_t Loc,
                                                     const std::string &Name) {
  auto D = openDataset(Loc, Name);
  if (!D)
    return D.takeError();
  Handle FileType(H5Dget_type(D->get()), H5Tclose);
  if (H5Tget_class(FileType.get()) != H5T_STRING ||
      H5Tis_variable_str(FileType.get()) <= 0)
    return Error::make(Name + ": expected variable-length strings");
  Handle Type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(Type.get(), H5T_VARIABLE);
  Handle Space(H5Dget_space(D->get()), H5Sclose);
  size_t N = 0;
  R3_TRY(moveInto(smallCount(D->get(), Space.get(), Name), N));
  std::vector<char *> Ptrs(N);
  if (Ptrs.empty())
    return std::vector<std::string>();
  if (Error E = checkHeader(D->get()))
    return std::move(E).context(Name);
  if (Error E = checkStringStorage(D->get(), N))
    return std::move(E).context(Name);
  if (H5Dread(D->get(), Type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
              Ptrs.data()) < 0)
    return lastError(Name);
  // A damaged or unfinished file reads an element it never stored as a
  // null string (HDF5's fill value).
  bool Missing = std::find(Ptrs.begin(), Ptrs.end(), nullptr) != Ptrs.end();
  std::vector<std::string> Out;
  if (!Missing)
    Out.assign(Ptrs.begin(), Ptrs.end());
  H5Dvlen_reclaim(Type.get(), Space.get(), H5P_DEFAULT, Ptrs.data());
  if (Missing)
    return Error::make(Name + ": a string element is missing (null)");
  return Out;
}

Error writeSmallBytes(hid_t Loc, const std::string &Name,
                      std::span<const uint8_t> V) {
  auto D = createSimple(Loc, Name, H5T_NATIVE_UINT8, V.size());
  if (!D)
    return D.takeError();
  if (!V.empty() && H5Dwrite(D->get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL,
                             H5P_DEFAULT, V.data()) < 0)
    return lastError(Name + ": cannot write");
  return Error::success();
}

Expected<std::vector<uint8_t>> readSmallBytes(hid_t Loc,
                                              const std::string &Name) {
  auto D = openDataset(Loc, Name);
  if (!D)
    return D.takeError();
  auto Size = byteDatasetSize(D->get());
  if (!Size)
    return Size.takeError().context(Name);
  if (*Size > fileBytes(D->get()))
    return makeError(Name, ": ", *Size, " bytes in a file of ",
                     fileBytes(D->get()), " bytes (a damaged dataspace)");
  if (Error E = checkStored(D->get(), *Size))
    return std::move(E).context(Name);
  std::vector<uint8_t> V(*Size);
  if (!V.empty() && H5Dread(D->get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL,
                            H5P_DEFAULT, V.data()) < 0)
    return lastError(Name);
  return V;
}

uint64_t chunkBytesFor(uint64_t Size) {
  constexpr uint64_t Max = 4ull << 20;
  return std::max<uint64_t>(1, std::min(Size, Max));
}

Expected<Handle> createByteDataset(hid_t Loc, const std::string &Name,
                                   uint64_t Size, Compression C) {
  hsize_t Dims = Size, Chunk = chunkBytesFor(Size);
  Handle Space(H5Screate_simple(1, &Dims, nullptr), H5Sclose);
  Handle Props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(Props.get(), 1, &Chunk);
  if (C == Compression::Deflate) {
    H5Pset_shuffle(Props.get());
    H5Pset_deflate(Props.get(), 1);
  }
  H5Pset_fletcher32(Props.get());
  // Chunks are written whole and read whole, so HDF5's chunk cache only costs
  // copies: turn it off.
  Handle Access(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
  H5Pset_chunk_cache(Access.get(), 0, 0, 1.0);
  hid_t Id = H5Dcreate2(Loc, Name.c_str(), H5T_NATIVE_UINT8, Space.get(),
                        H5P_DEFAULT, Props.get(), Access.get());
  if (Id < 0)
    return lastError(Name + ": cannot create dataset");
  return Handle(Id, H5Dclose);
}

namespace {
Error transferBytes(hid_t Dataset, uint64_t Offset, void *Data, uint64_t Count,
                    bool Write) {
  if (Count == 0)
    return Error::success();
  Handle FileSpace(H5Dget_space(Dataset), H5Sclose);
  hsize_t Start = Offset, N = Count;
  if (H5Sselect_hyperslab(FileSpace.get(), H5S_SELECT_SET, &Start, nullptr, &N,
                          nullptr) < 0)
    return lastError("cannot select bytes");
  Handle MemSpace(H5Screate_simple(1, &N, nullptr), H5Sclose);
  herr_t Rc = Write ? H5Dwrite(Dataset, H5T_NATIVE_UINT8, MemSpace.get(),
                               FileSpace.get(), H5P_DEFAULT, Data)
                    : H5Dread(Dataset, H5T_NATIVE_UINT8, MemSpace.get(),
                              FileSpace.get(), H5P_DEFAULT, Data);
  if (Rc < 0)
    return lastError(Write ? "cannot write" : "cannot read");
  return Error::success();
}
} // namespace

Error writeRawChunk(hid_t Dataset, uint64_t Offset,
                    std::span<const uint8_t> Stored) {
  hsize_t Start = Offset;
  if (H5Dwrite_chunk(Dataset, H5P_DEFAULT, /*every filter applied*/ 0, &Start,
                     Stored.size(), Stored.data()) < 0)
    return lastError("cannot write chunk");
  return Error::success();
}

Error writeBytes(hid_t Dataset, uint64_t Offset,
                 std::span<const uint8_t> Bytes) {
  return transferBytes(Dataset, Offset, const_cast<uint8_t *>(Bytes.data()),
                       Bytes.size(), true);
}

Error readBytes(hid_t Dataset, uint64_t Offset, std::span<uint8_t> Out) {
  return transferBytes(Dataset, Offset, Out.data(), Out.size(), false);
}

Error checkStored(hid_t Dataset, uint64_t Elements) {
  Handle Props(H5Dget_create_plist(Dataset), H5Pclose);
  Handle Type(H5Dget_type(Dataset), H5Tclose);
  if (!Props.valid() || !Type.valid())
    return lastError("cannot read its creation properties");
  uint64_t Element = H5Tget_size(Type.get());
  if (Element == 0)
    return Error::make("elements of 0 bytes (a damaged datatype)");
  if (H5Pget_layout(Props.get()) != H5D_CHUNKED) {
    hsize_t Stored = H5Dget_storage_size(Dataset);
    if (Stored / Element < Elements)
      return makeError(Stored, " bytes stored of its ", Elements,
                       " elements of ", Element,
                       " bytes (a damaged or unfinished file)");
    return Error::success();
  }
  hsize_t Chunk = 0;
  if (H5Pget_chunk(Props.get(), 1, &Chunk) != 1 || Chunk == 0)
    return Error::make("expected a one-dimensional chunked dataset");
  hsize_t Stored = 0;
  Handle Space(H5Dget_space(Dataset), H5Sclose);
  if (H5Dget_num_chunks(Dataset, Space.get(), &Stored) < 0)
    return lastError("cannot count its chunks");
  uint64_t Expected = Elements / Chunk + (Elements % Chunk != 0);
  uint64_t ChunkBytes = Chunk * Element;
  if (Stored != Expected)
    return makeError(Stored, " of its ", Expected, " chunks of ", ChunkBytes,
                     " bytes stored (a damaged or unfinished file)");
  // Each chunk's stored size, which HDF5 1.10 trusts: Fletcher-32 checks
  // all but the last 4 bytes of what is stored, so a damaged size under 4
  // made it checksum gigabytes past its buffer (SEGV). Without compression
  // a chunk is stored whole (the checksum after it).
  int ChecksumAt = -1, DeflateAt = -1; // places in the filter pipeline
  for (int I = 0, N = H5Pget_nfilters(Props.get()); I < N; ++I) {
    size_t Values = 0;
    H5Z_filter_t Id = H5Pget_filter2(Props.get(), static_cast<unsigned>(I),
                                     nullptr, &Values, nullptr, 0, nullptr,
                                     nullptr);
    if (Id == H5Z_FILTER_FLETCHER32)
      ChecksumAt = I;
    else if (Id == H5Z_FILTER_DEFLATE)
      DeflateAt = I;
  }
  H5Eclear2(H5E_DEFAULT);
  // A chunk's filter mask has bit I set where filter I was skipped for it.
  auto Applied = [](int At, unsigned Mask) {
    return At >= 0 && !((Mask >> At) & 1);
  };
  uint64_t FileSize = fileBytes(Dataset);
  for (uint64_t K = 0; K < Expected; ++K) {
    hsize_t Offset = K * Chunk, Bytes = 0;
    unsigned Mask = 0;
    haddr_t Addr = HADDR_UNDEF;
    if (H5Dget_chunk_info_by_coord(Dataset, &Offset, &Mask, &Addr, &Bytes) <
            0 ||
        Addr == HADDR_UNDEF)
      return makeError("chunk ", K, " (at element ", Offset,
                       ") is not stored (a damaged or unfinished file)");
    bool Whole = !Applied(DeflateAt, Mask);
    uint64_t Suffix = Applied(ChecksumAt, Mask) ? 4 : 0;
    if (Bytes < Suffix + 1 || (Whole && Bytes != ChunkBytes + Suffix) ||
        Addr > FileSize || Bytes > FileSize - Addr)
      return makeError("chunk ", K, " claims ", Bytes, " bytes at offset ",
                       Addr, " (a damaged chunk index: ",
                       Whole ? std::to_string(ChunkBytes + Suffix)
                             : "compressed, at least " +
                                   std::to_string(Suffix + 1),
                       " bytes expected in a file of ", FileSize, ")");
  }
  return Error::success();
}

Expected<uint64_t> byteDatasetSize(hid_t Dataset) {
  Handle Type(H5Dget_type(Dataset), H5Tclose);
  if (H5Tget_class(Type.get()) != H5T_INTEGER || H5Tget_size(Type.get()) != 1)
    return Error::make("expected a dataset of bytes");
  Handle Space(H5Dget_space(Dataset), H5Sclose);
  if (H5Sget_simple_extent_ndims(Space.get()) != 1)
    return Error::make("expected a one-dimensional dataset");
  return static_cast<uint64_t>(elementCount(Space.get()));
}

} // namespace r3::h5
