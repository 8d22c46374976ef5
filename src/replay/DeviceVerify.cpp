// Verification where the memory is (DeviceVerify.h). One batch of scans
// counts every region's mismatches; only a region that fails costs more: a
// scan from just past each described unit finds the next one, until the
// report holds as many descriptions as the host verifier keeps.
#include "replay/DeviceVerify.h"

namespace r3 {

std::vector<scan::Op> scansOf(const ScanRegion &R, const VerifySettings &S) {
  scan::Op Whole;
  Whole.Expected = R.ExpectedAt;
  Whole.Actual = R.ActualAt;
  Whole.RuleKind = static_cast<uint32_t>(S.Tolerance);
  Whole.Value = S.Value;
  if (R.Role == RegionRole::Unchanged || S.Type == ElementType::Bytes) {
    Whole.UnitKind = scan::Byte;
    Whole.Units = R.Size;
    return {Whole};
  }
  Whole.UnitKind = S.Type == ElementType::F32 ? scan::F32 : scan::F64;
  uint32_t Bytes = scan::unitBytes(Whole.UnitKind);
  Whole.Units = R.Size / Bytes;
  std::vector<scan::Op> Ops = {Whole};
  if (R.Size % Bytes) { // the tail, bitwise, indexed as bytes of the region
    scan::Op Tail = Whole;
    Tail.UnitKind = scan::Byte;
    Tail.From = Whole.Units * Bytes;
    Tail.Units = R.Size;
    Ops.push_back(Tail);
  }
  return Ops;
}

Expected<VerifyReport> verifyOnDevice(const std::vector<ScanRegion> &Regions,
                                      const VerifySettings &S, ScanDevice &D) {
  std::vector<scan::Op> Ops;
  std::vector<std::pair<size_t, size_t>> OpsOf; // [first, end) per region
  for (const ScanRegion &R : Regions) {
    size_t First = Ops.size();
    if (R.ExpectedAt && R.Size)
      for (const scan::Op &O : scansOf(R, S))
        Ops.push_back(O);
    OpsOf.emplace_back(First, Ops.size());
  }
  std::vector<scan::Result> Found;
  if (!Ops.empty())
    R3_TRY(moveInto(D.scan(Ops), Found));
  Verifier V(S);
  std::vector<uint8_t> Actual;
  for (size_t I = 0; I < Regions.size(); ++I) {
    const ScanRegion &R = Regions[I];
    if (!R.Size)
      continue;
    if (!R.ExpectedAt) {
      Actual.resize(R.Size);
      R3_TRY(D.read(R.ActualAt, Actual));
      V.checkRegion({R.Label, R.Expected, Actual, R.Role});
      continue;
    }
    auto [Begin, End] = OpsOf[I];
    uint64_t Count = 0;
    for (size_t K = Begin; K < End; ++K)
      Count += Found[K].Count;
    V.countRegion(Count);
    for (size_t K = Begin; K < End && V.describing(); ++K) {
      scan::Result Res = Found[K];
      uint32_t Bytes = scan::unitBytes(Ops[K].UnitKind);
      for (uint64_t Left = Res.Count;
           Left && Res.First != scan::NoUnit && V.describing();) {
        uint64_t At = Res.First * Bytes;
        if (At + Bytes > R.Expected.size())
          return makeError(R.Label, ": the scan found unit ", Res.First,
                           " past the region's ", R.Expected.size(), " bytes");
        uint8_t Got[8];
        R3_TRY(D.read(R.ActualAt + At, std::span<uint8_t>(Got, Bytes)));
        V.describeUnit(R.Label, R.Role, Ops[K].UnitKind, Res.First,
                       R.Expected.subspan(At, Bytes),
                       std::span<const uint8_t>(Got, Bytes));
        if (--Left == 0 || !V.describing())
          break;
        scan::Op Next = Ops[K];
        Next.From = Res.First + 1;
        std::vector<scan::Result> After;
        R3_TRY(moveInto(D.scan({Next}), After));
        Res = After.at(0);
      }
    }
  }
  return V.report();
}

} // namespace r3
