// Myers' diff in linear space, and the unified format.
//
// The edit graph of texts A (N lines) and B (M lines) has a diagonal edge
// wherever A[x] == B[y]; a shortest edit script is a path from (0,0) to (N,M)
// with the fewest horizontal (delete) and vertical (insert) edges, D of them.
// Myers' greedy algorithm finds the furthest-reaching path on each diagonal
// for D = 0, 1, ...; running it from both corners at once, the two searches
// meet on a "middle snake" that a shortest path crosses, and recursing on the
// two halves around it finds the whole script in O((N+M) D) time and O(N+M)
// space. Common prefixes and suffixes are taken off first, which is most of
// the work for the small edits a kernel rewrite makes.
//
// E. W. Myers, "An O(ND) difference algorithm and its variations",
// Algorithmica 1 (1986) 251-266, section 4b; the compact form of the middle
// snake follows Robert Elder's exposition of it ("Myers diff algorithm:
// linear space", 2017).
#include "support/Diff.h"

#include <algorithm>
#include <cstdio>

namespace r3 {

namespace {
using Lines = std::vector<std::string_view>;

/// The middle snake: the diagonal from (X, Y) to (U, V), in the coordinates
/// of the subproblem.
struct Snake {
  long X, Y, U, V;
};

class Differ {
public:
  Differ(const Lines &A, const Lines &B) : A(A), B(B) {}
  void run(size_t A0, size_t A1, size_t B0, size_t B1);
  std::vector<DiffOp> Ops;

private:
  Snake middleSnake(size_t A0, long N, size_t B0, long M) const;
  void keep(size_t A0, size_t B0, size_t N) {
    for (size_t I = 0; I < N; ++I)
      Ops.push_back({DiffKind::Equal, A0 + I, B0 + I});
  }
  const Lines &A, &B;
};

void Differ::run(size_t A0, size_t A1, size_t B0, size_t B1) {
  size_t Pre = 0, Suf = 0;
  while (A0 + Pre < A1 && B0 + Pre < B1 && A[A0 + Pre] == B[B0 + Pre])
    ++Pre;
  keep(A0, B0, Pre);
  A0 += Pre;
  B0 += Pre;
  while (A1 > A0 + Suf && B1 > B0 + Suf && A[A1 - Suf - 1] == B[B1 - Suf - 1])
    ++Suf;
  A1 -= Suf;
  B1 -= Suf;
  if (A0 == A1) {
    for (size_t J = B0; J < B1; ++J)
      Ops.push_back({DiffKind::Insert, A0, J});
  } else if (B0 == B1) {
    for (size_t I = A0; I < A1; ++I)
      Ops.push_back({DiffKind::Delete, I, B0});
  } else {
    // Both sides are non-empty and differ at both ends, so D >= 2 and each
    // half around the snake has fewer edits than the whole.
    Snake S = middleSnake(A0, long(A1 - A0), B0, long(B1 - B0));
    run(A0, A0 + S.X, B0, B0 + S.Y);
    keep(A0 + S.X, B0 + S.Y, size_t(S.U - S.X));
    run(A0 + S.U, A1, B0 + S.V, B1);
  }
  keep(A1, B1, Suf);
}

Snake Differ::middleSnake(size_t A0, long N, size_t B0, long M) const {
  const long L = N + M, Z = 2 * std::min(N, M) + 2, W = N - M;
  // Forward and backward furthest x per diagonal, indexed modulo Z.
  std::vector<long> Fwd(size_t(Z), 0), Bwd(size_t(Z), 0);
  auto At = [Z](std::vector<long> &V, long K) -> long & {
    return V[size_t(((K % Z) + Z) % Z)];
  };
  for (long H = 0; H <= L / 2 + (L % 2 != 0); ++H) {
    for (int Forward = 1; Forward >= 0; --Forward) {
      std::vector<long> &C = Forward ? Fwd : Bwd, &D = Forward ? Bwd : Fwd;
      long Lo = -(H - 2 * std::max(0L, H - M)),
           Hi = H - 2 * std::max(0L, H - N);
      for (long K = Lo; K <= Hi; K += 2) {
        long X = (K == -H || (K != H && At(C, K - 1) < At(C, K + 1)))
                     ? At(C, K + 1)
                     : At(C, K - 1) + 1;
        long Y = X - K, S = X, T = Y;
        // Backward, the search runs over both texts reversed.
        auto Same = [&](long I, long J) {
          return Forward ? A[A0 + I] == B[B0 + J]
                         : A[A0 + N - 1 - I] == B[B0 + M - 1 - J];
        };
        while (X < N && Y < M && Same(X, Y))
          ++X, ++Y;
        At(C, K) = X;
        long Other = W - K; // this diagonal in the other search's frame
        if (L % 2 == Forward && Other >= -(H - Forward) &&
            Other <= H - Forward && X + At(D, Other) >= N)
          return Forward ? Snake{S, T, X, Y}
                         : Snake{N - X, M - Y, N - S, M - T};
      }
    }
  }
  return {0, 0, 0, 0}; // unreachable: the searches always meet
}

/// Ops[Start, End) as one hunk.
void appendHunk(std::string &Out, const std::vector<DiffOp> &Ops, size_t Start,
                size_t End, const Lines &A, const Lines &B) {
  size_t OldCount = 0, NewCount = 0;
  for (size_t I = Start; I < End; ++I) {
    OldCount += Ops[I].Kind != DiffKind::Insert;
    NewCount += Ops[I].Kind != DiffKind::Delete;
  }
  // A range of no lines starts at the line before it (0 at the top).
  size_t OldStart = Ops[Start].Old + (OldCount > 0);
  size_t NewStart = Ops[Start].New + (NewCount > 0);
  char Header[96];
  std::snprintf(Header, sizeof Header, "@@ -%zu,%zu +%zu,%zu @@\n", OldStart,
                OldCount, NewStart, NewCount);
  Out += Header;
  for (size_t I = Start; I < End; ++I) {
    const DiffOp &Op = Ops[I];
    bool FromOld = Op.Kind == DiffKind::Delete;
    std::string_view Line = FromOld ? A[Op.Old] : B[Op.New];
    Out += Op.Kind == DiffKind::Equal ? ' ' : FromOld ? '-' : '+';
    Out += Line;
    if (Line.empty() || Line.back() != '\n')
      Out += "\n\\ No newline at end of file\n";
  }
}

size_t nextChange(const std::vector<DiffOp> &Ops, size_t From) {
  while (From < Ops.size() && Ops[From].Kind == DiffKind::Equal)
    ++From;
  return From;
}
/// Within each run of changes, deletions before insertions (as diff(1)
/// prints them): the same script, easier to read.
void groupChanges(std::vector<DiffOp> &Ops) {
  for (size_t I = 0; I < Ops.size();) {
    if (Ops[I].Kind == DiffKind::Equal) {
      ++I;
      continue;
    }
    size_t End = I, Old = Ops[I].Old, New = Ops[I].New, Deletes = 0;
    for (; End < Ops.size() && Ops[End].Kind != DiffKind::Equal; ++End)
      Deletes += Ops[End].Kind == DiffKind::Delete;
    // The run deletes Old.. and inserts New.., in that order.
    for (size_t K = 0; I < End; ++I, ++K) {
      bool Delete = K < Deletes;
      Ops[I] = {Delete ? DiffKind::Delete : DiffKind::Insert,
                Delete ? Old + K : Old + Deletes,
                Delete ? New : New + (K - Deletes)};
    }
  }
}
} // namespace

std::vector<std::string_view> splitLines(std::string_view Text) {
  std::vector<std::string_view> Out;
  while (!Text.empty()) {
    size_t End = Text.find('\n');
    End = End == std::string_view::npos ? Text.size() : End + 1;
    Out.push_back(Text.substr(0, End));
    Text.remove_prefix(End);
  }
  return Out;
}

std::vector<DiffOp> diffLines(const Lines &A, const Lines &B) {
  Differ D(A, B);
  D.run(0, A.size(), 0, B.size());
  groupChanges(D.Ops);
  return std::move(D.Ops);
}

std::string unifiedDiff(std::string_view Old, std::string_view New,
                        std::string_view OldName, std::string_view NewName,
                        unsigned Context) {
  Lines A = splitLines(Old), B = splitLines(New);
  std::vector<DiffOp> Ops = diffLines(A, B);
  size_t Change = nextChange(Ops, 0);
  if (Change == Ops.size())
    return "";
  std::string Out =
      "--- " + std::string(OldName) + "\n+++ " + std::string(NewName) + "\n";
  while (Change < Ops.size()) {
    size_t Start = Change > Context ? Change - Context : 0;
    // Extend over changes closer than two contexts: they share the hunk.
    size_t Last = Change, Next;
    while ((Next = nextChange(Ops, Last + 1)) < Ops.size() &&
           Next - Last - 1 <= 2 * size_t(Context))
      Last = Next;
    size_t End = std::min(Ops.size(), Last + 1 + Context);
    appendHunk(Out, Ops, Start, End, A, B);
    Change = Next;
  }
  return Out;
}

} // namespace r3
