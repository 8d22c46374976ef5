// Fixed-address mappings for the host replay server. MAP_FIXED_NOREPLACE
// (Linux 4.17) fails with EEXIST instead of silently replacing a mapping;
// kernels older than that take the address as a hint, which is detected by
// the address returned. Inside the reservation, MAP_FIXED is safe: r3 owns
// every page it replaces.
#include "replay/host/RegionMap.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace r3 {

namespace {
uint64_t pageSize() {
  static const uint64_t P = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return P;
}

std::string hex(uint64_t V) {
  char Buf[24];
  std::snprintf(Buf, sizeof(Buf), "0x%" PRIx64, V);
  return Buf;
}

std::string rangeText(const PageRange &R) {
  return hex(R.Begin) + "-" + hex(R.End);
}

/// The first span that overlaps R, for an error message.
const MappedSpan *spanIn(std::span<const MappedSpan> Spans,
                         const PageRange &R) {
  for (const MappedSpan &S : Spans)
    if (S.Size && S.Base < R.End && S.Base + S.Size > R.Begin)
      return &S;
  return nullptr;
}

Error reserveRange(const PageRange &R, std::span<const MappedSpan> Spans) {
  void *Want = reinterpret_cast<void *>(R.Begin);
  void *Got = ::mmap(
      Want, R.End - R.Begin, PROT_NONE,
      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  int Saved = errno;
  if (Got != MAP_FAILED && Got != Want)
    ::munmap(Got, R.End - R.Begin);
  if (Got == Want)
    return Error::success();
  const MappedSpan *S = spanIn(Spans, R);
  std::string Who = S ? S->Label : "a region";
  if (Got != MAP_FAILED || Saved == EEXIST)
    return makeError("cannot map ", Who, " at its recorded address: the range ",
                     rangeText(R), " is already in use in the replay server");
  return makeError("cannot map ", Who, " at its recorded address: mmap of ",
                   rangeText(R), ": ", std::strerror(Saved));
}
} // namespace

std::vector<PageRange> pageRanges(std::span<const MappedSpan> Spans) {
  const uint64_t P = pageSize();
  std::vector<PageRange> Pages;
  for (const MappedSpan &S : Spans) {
    if (!S.Size)
      continue;
    uint64_t End = S.Base + S.Size;
    if (End < S.Base) // wraps: let mmap refuse the top page
      End = UINT64_MAX;
    uint64_t Up = End > UINT64_MAX - (P - 1) ? (UINT64_MAX & ~(P - 1))
                                             : (End + P - 1) & ~(P - 1);
    Pages.push_back({S.Base & ~(P - 1), Up});
  }
  std::sort(
      Pages.begin(), Pages.end(),
      [](const PageRange &A, const PageRange &B) { return A.Begin < B.Begin; });
  std::vector<PageRange> Merged;
  for (const PageRange &R : Pages) {
    if (!Merged.empty() && R.Begin <= Merged.back().End)
      Merged.back().End = std::max(Merged.back().End, R.End);
    else
      Merged.push_back(R);
  }
  return Merged;
}

std::vector<ByteRange> slackRanges(std::span<const MappedSpan> Spans) {
  std::vector<ByteRange> Covered;
  for (const MappedSpan &S : Spans)
    if (S.Size)
      Covered.push_back(
          {S.Base, S.Base + S.Size < S.Base ? UINT64_MAX : S.Base + S.Size});
  std::sort(Covered.begin(), Covered.end(),
            [](const ByteRange &A, const ByteRange &B) {
              return A.Begin < B.Begin;
            });
  std::vector<ByteRange> Slack;
  size_t Next = 0;
  for (const PageRange &P : pageRanges(Spans)) {
    uint64_t Cursor = P.Begin;
    for (; Next < Covered.size() && Covered[Next].Begin < P.End; ++Next) {
      if (Covered[Next].Begin > Cursor)
        Slack.push_back({Cursor, Covered[Next].Begin});
      Cursor = std::max(Cursor, Covered[Next].End);
    }
    if (Cursor < P.End)
      Slack.push_back({Cursor, P.End});
  }
  return Slack;
}

Expected<std::unique_ptr<AddressReservation>>
AddressReservation::reserve(std::span<const MappedSpan> Spans) {
  std::unique_ptr<AddressReservation> A(new AddressReservation());
  for (const PageRange &R : pageRanges(Spans)) {
    R3_TRY(reserveRange(R, Spans));
    A->Reserved.push_back(R);
  }
  return A;
}

AddressReservation::~AddressReservation() {
  for (const PageRange &R : Reserved)
    ::munmap(reinterpret_cast<void *>(R.Begin), R.End - R.Begin);
}

Error AddressReservation::commit(std::span<const MappedSpan> Spans) {
  for (const PageRange &R : pageRanges(Spans)) {
    bool Inside = std::any_of(Reserved.begin(), Reserved.end(),
                              [&](const PageRange &Res) {
                                return Res.Begin <= R.Begin && R.End <= Res.End;
                              });
    if (!Inside)
      return makeError("the range ", rangeText(R),
                       " is outside the replay server's reservation");
    void *Got = ::mmap(reinterpret_cast<void *>(R.Begin), R.End - R.Begin,
                       PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (Got == MAP_FAILED) {
      const MappedSpan *S = spanIn(Spans, R);
      return errnoError("cannot map " + (S ? S->Label : rangeText(R)));
    }
    Committed.push_back(R);
  }
  return Error::success();
}

void AddressReservation::decommitAll() {
  for (const PageRange &R : Committed)
    ::mmap(reinterpret_cast<void *>(R.Begin), R.End - R.Begin, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  Committed.clear();
}

} // namespace r3
