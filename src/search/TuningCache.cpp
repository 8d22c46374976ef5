// Reading Kernel Tuner's cache files (gzip'd or plain JSON) into a search
// space with an outcome per point. The files are large (the RTX 3090 GEMM
// cache is 16 MB of JSON for 18k entries, most of it the 32 individual times
// of each entry), so the JSON is read with a SAX handler that builds the
// document except the cache's entries, which become flat lists of their
// scalar fields (the parameter values, the mean time); what is nested inside
// an entry is dropped. Every mistake is reported with the file's name, and
// the entry and parameter it concerns.
#include "search/TuningCache.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <map>
#include <cerrno>

namespace r3::search {

namespace {
using nlohmann::json;

/// The bytes of Path, inflated when it is gzip'd: zlib's gz* functions tell
/// gzip from anything else by the magic bytes and read other files as they
/// are.
Expected<std::string> readBytes(const std::string &Path) {
  errno = 0;
  gzFile F = gzopen(Path.c_str(), "rb");
  if (!F)
    return errnoError("cannot open tuning cache '" + Path + "'");
  gzbuffer(F, 1 << 17);
  std::string Bytes;
  std::vector<char> Buf(1 << 17);
  int N;
  while ((N = gzread(F, Buf.data(), static_cast<unsigned>(Buf.size()))) > 0)
    Bytes.append(Buf.data(), static_cast<size_t>(N));
  int Rc = Z_OK;
  std::string Why = gzerror(F, &Rc);
  // zlib's messages start with the path ("cut.gz: unexpected end of file").
  if (Why.starts_with(Path + ": "))
    Why.erase(0, Path.size() + 2);
  int Errno = errno;
  gzclose(F);
  if (Rc == Z_ERRNO) {
    errno = Errno;
    return errnoError("cannot read tuning cache '" + Path + "'");
  }
  if (Rc != Z_OK || N < 0)
    return makeError(Path, ": not a valid gzip file (", Why, ")");
  return Bytes;
}

/// A cache entry as read: its key and its scalar fields in the order of the
/// file (nested values, such as the individual times, are dropped).
struct RawEntry {
  std::string Key;
  std::vector<std::pair<std::string, json>> Fields;

  /// The field called Name (the last one, as JSON readers do), or null.
  const json *field(std::string_view Name) const {
    for (auto It = Fields.rbegin(); It != Fields.rend(); ++It)
      if (It->first == Name)
        return &It->second;
    return nullptr;
  }
};

/// A cache file: the document without the cache's entries (the "cache"
/// object keeps only entries that are not objects, which are errors), and
/// the entries.
struct CacheDocument {
  json Root;
  std::vector<RawEntry> Entries;
};

/// SAX handler building a CacheDocument: a DOM with a stack of open
/// containers, except that each object directly inside "cache" becomes a
/// flat RawEntry, far cheaper than 18k JSON objects.
class CacheSax final : public json::json_sax_t {
public:
  CacheDocument Doc;
  std::string ErrorText;

  bool null() override { return put(nullptr); }
  bool boolean(bool V) override { return put(V); }
  bool number_integer(json::number_integer_t V) override { return put(V); }
  bool number_unsigned(json::number_unsigned_t V) override { return put(V); }
  bool number_float(json::number_float_t V, const json::string_t &) override {
    return put(V);
  }
  bool string(json::string_t &V) override { return put(std::move(V)); }
  bool binary(json::binary_t &) override { return put(nullptr); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(json::string_t &K) override {
    if (InEntry && Nested)
      return true;
    if (!InEntry && Stack.size() == 1)
      TopKey = K;
    Key = std::move(K);
    return true;
  }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &E) override {
    // Without nlohmann's "[json.exception.parse_error.101] " prefix.
    ErrorText = E.what();
    size_t End = ErrorText.find("] ");
    if (ErrorText.starts_with("[json.") && End != std::string::npos)
      ErrorText.erase(0, End + 2);
    return false;
  }

private:
  /// Whether an object opened now is a cache entry: the root and the cache
  /// object are open.
  bool entryStarts(const json &V) const {
    return V.is_object() && Stack.size() == 2 && TopKey == "cache" &&
           Stack.back()->is_object();
  }

  json *insert(json V) {
    if (Stack.empty()) {
      Doc.Root = std::move(V);
      return &Doc.Root;
    }
    json &Parent = *Stack.back();
    if (Parent.is_array()) {
      Parent.push_back(std::move(V));
      return &Parent.back();
    }
    json &Slot = Parent[Key];
    Slot = std::move(V);
    return &Slot;
  }
  bool put(json V) {
    if (!InEntry)
      insert(std::move(V));
    else if (!Nested)
      Entry.Fields.emplace_back(std::move(Key), std::move(V));
    return true;
  }
  bool open(json V) {
    if (InEntry) {
      ++Nested;
    } else if (entryStarts(V)) {
      InEntry = true;
      Entry = RawEntry{std::move(Key), {}};
    } else {
      Stack.push_back(insert(std::move(V)));
    }
    return true;
  }
  bool close() {
    if (!InEntry) {
      Stack.pop_back();
    } else if (Nested) {
      --Nested;
    } else {
      Doc.Entries.push_back(std::move(Entry));
      InEntry = false;
    }
    return true;
  }

  std::vector<json *> Stack;
  std::string Key, TopKey;
  bool InEntry = false;
  RawEntry Entry;
  unsigned Nested = 0; ///< depth inside a container within an entry
};

Expected<CacheDocument> parseJson(const std::string &Text) {
  CacheSax Sax;
  if (!json::sax_parse(Text, &Sax))
    return makeError("not gzip'd or plain JSON (", Sax.ErrorText, ")");
  return std::move(Sax.Doc);
}

/// A domain value as text: strings as they are, numbers and the rest as JSON
/// writes them ("16", "0.5", "true").
std::string valueText(const json &V) {
  return V.is_string() ? V.get<std::string>() : V.dump();
}

/// One parameter, with the index of each of its values.
struct ParamIndex {
  Param P;
  bool Numeric = false;
  std::map<double, uint32_t> ByNumber;
  std::map<std::string, uint32_t> ByText;

  std::optional<uint32_t> find(const json &V) const {
    if (Numeric) {
      if (!V.is_number())
        return std::nullopt;
      auto It = ByNumber.find(V.get<double>());
      return It == ByNumber.end() ? std::nullopt
                                  : std::optional<uint32_t>(It->second);
    }
    auto It = ByText.find(valueText(V));
    return It == ByText.end() ? std::nullopt
                              : std::optional<uint32_t>(It->second);
  }

  std::string domainText() const {
    std::string Out;
    for (size_t I = 0; I < P.Values.size(); ++I) {
      if (I == 8) {
        Out += ", ... (" + std::to_string(P.Values.size()) + " values)";
        break;
      }
      Out += (I ? ", " : "") + P.Values[I];
    }
    return Out;
  }
};

/// A numeric domain, sorted ascending with its duplicates removed.
void numericDomain(const json &Domain, ParamIndex &Out) {
  std::vector<std::pair<double, std::string>> Vs;
  for (const json &V : Domain)
    Vs.emplace_back(V.get<double>(), V.dump());
  std::sort(Vs.begin(), Vs.end(),
            [](const auto &A, const auto &B) { return A.first < B.first; });
  for (auto &[Number, Text] : Vs) {
    if (!Out.P.Numbers.empty() && Out.P.Numbers.back() == Number)
      continue;
    Out.ByNumber[Number] = static_cast<uint32_t>(Out.P.Values.size());
    Out.P.Numbers.push_back(Number);
    Out.P.Values.push_back(std::move(Text));
  }
}

Expected<ParamIndex> paramIndex(const std::string &Name, const json &Params) {
  auto It = Params.find(Name);
  if (It == Params.end())
    return makeError("'tune_params' has no domain for parameter '", Name, "'");
  if (!It->is_array() || It->empty())
    return makeError("'tune_params' entry '", Name,
                     "' must be a non-empty list of values");
  ParamIndex Out;
  Out.P.Name = Name;
  Out.P.Kind = ParamKind::Ordinal;
  Out.Numeric = std::all_of(It->begin(), It->end(),
                            [](const json &V) { return V.is_number(); });
  if (Out.Numeric) {
    numericDomain(*It, Out);
    return Out;
  }
  for (const json &V : *It) {
    std::string Text = valueText(V);
    if (Out.ByText.emplace(Text, Out.P.Values.size()).second)
      Out.P.Values.push_back(std::move(Text));
  }
  return Out;
}

Expected<std::vector<ParamIndex>> readParams(const json &Doc) {
  const json &Keys = Doc["tune_params_keys"];
  const json &Params = Doc["tune_params"];
  if (!Keys.is_array() || Keys.empty())
    return makeError("'tune_params_keys' must be a non-empty list of names");
  if (!Params.is_object())
    return makeError("'tune_params' must be an object");
  std::vector<ParamIndex> Out;
  for (const json &K : Keys) {
    if (!K.is_string())
      return makeError("'tune_params_keys' must hold names, got ", K.dump());
    auto P = paramIndex(K.get<std::string>(), Params);
    if (!P)
      return P.takeError();
    Out.push_back(std::move(*P));
  }
  return Out;
}

Expected<CacheEntry> readOutcome(const RawEntry &Entry) {
  const json *T = Entry.field("time");
  if (!T)
    return makeError("missing 'time'");
  CacheEntry Out;
  if (T->is_number())
    Out.TimeMs = T->get<double>();
  else if (T->is_string() && !T->get<std::string>().empty())
    Out.Failure = T->get<std::string>();
  else
    return makeError("'time' must be a number of ms or a failure such as "
                     "\"CompileFailedConfig\", got ",
                     T->dump());
  return Out;
}

Expected<Point> readPoint(const RawEntry &Entry,
                          const std::vector<ParamIndex> &Params) {
  Point P;
  for (const ParamIndex &I : Params) {
    const json *V = Entry.field(I.P.Name);
    if (!V)
      return makeError("missing parameter '", I.P.Name, "'");
    std::optional<uint32_t> Index = I.find(*V);
    if (!Index)
      return makeError(I.P.Name, " = ", valueText(*V),
                       " is not in the parameter's domain (", I.domainText(),
                       ")");
    P.Values.push_back({*Index});
  }
  return P;
}

Error readEntries(const CacheDocument &Doc,
                  const std::vector<ParamIndex> &Params, TuningCache &C) {
  const json &Cache = Doc.Root["cache"];
  if (!Cache.is_object())
    return makeError("'cache' must be an object");
  // The SAX handler left in the cache object only entries that are not
  // objects.
  if (!Cache.empty())
    return makeError("cache entry '", Cache.begin().key(),
                     "': must be an object");
  if (Doc.Entries.empty())
    return makeError("the cache has no entries");
  for (const RawEntry &Raw : Doc.Entries) {
    std::string Where = "cache entry '" + Raw.Key + "'";
    auto P = readPoint(Raw, Params);
    if (!P)
      return P.takeError().context(Where);
    auto E = readOutcome(Raw);
    if (!E)
      return E.takeError().context(Where);
    C.SearchSpace.Allowed.push_back(std::move(*P));
    C.Entries.push_back(std::move(*E));
  }
  return Error::success();
}

Error findOptimum(TuningCache &C) {
  bool Found = false;
  for (size_t I = 0; I < C.Entries.size(); ++I) {
    const std::optional<double> &T = C.Entries[I].TimeMs;
    if (T && (!Found || *T < C.OptimumMs)) {
      C.OptimumMs = *T;
      C.OptimumIndex = I;
      Found = true;
    }
  }
  if (!Found)
    return makeError("every entry of the cache failed: there is no time to "
                     "optimize");
  return Error::success();
}

std::string optionalText(const json &Doc, const char *Key) {
  auto It = Doc.find(Key);
  return It != Doc.end() && It->is_string() ? It->get<std::string>() : "";
}

Error buildCache(const CacheDocument &CacheDoc, TuningCache &C) {
  const json &Doc = CacheDoc.Root;
  if (!Doc.is_object())
    return makeError("not a tuning cache (the JSON is not an object)");
  for (const char *Key : {"tune_params_keys", "tune_params", "cache"})
    if (!Doc.contains(Key))
      return makeError("not a tuning cache: missing key '", Key, "'");
  auto Params = readParams(Doc);
  if (!Params)
    return Params.takeError();
  for (const ParamIndex &P : *Params)
    C.SearchSpace.Params.push_back(P.P);
  R3_TRY(readEntries(CacheDoc, *Params, C));
  if (std::optional<size_t> Twice = C.SearchSpace.Allowed.firstRepeat())
    return makeError("cache entry '", CacheDoc.Entries[*Twice].Key,
                     "': the same configuration as an earlier entry");
  R3_TRY(findOptimum(C));
  C.DeviceName = optionalText(Doc, "device_name");
  C.KernelName = optionalText(Doc, "kernel_name");
  return Error::success();
}

} // namespace

const CacheEntry *TuningCache::lookup(const Point &P) const {
  std::optional<size_t> I = SearchSpace.Allowed.indexOf(P);
  return I ? &Entries[*I] : nullptr;
}

size_t TuningCache::failures() const {
  return std::count_if(Entries.begin(), Entries.end(),
                       [](const CacheEntry &E) { return !E.TimeMs; });
}

double TuningCache::combinations() const {
  double N = 1;
  for (const Param &P : SearchSpace.Params)
    N *= static_cast<double>(P.Values.size());
  return N;
}

Expected<TuningCache> parseTuningCache(const std::string &Text,
                                       const std::string &Path) {
  auto Doc = parseJson(Text);
  if (!Doc)
    return Doc.takeError().context(Path);
  TuningCache C;
  C.Path = Path;
  if (Error E = buildCache(*Doc, C))
    return std::move(E).context(Path);
  return C;
}

Expected<TuningCache> loadTuningCache(const std::string &Path) {
  auto Bytes = readBytes(Path);
  if (!Bytes)
    return Bytes.takeError();
  return parseTuningCache(*Bytes, Path);
}

} // namespace r3::search
