// SHA-256 as FIPS 180-4 specifies it (see Sha256.h for why it is here).
#include "support/Sha256.h"

#include <cstring>

namespace r3 {

namespace {

constexpr uint32_t RoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::array<uint32_t, 8> InitialHash = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

uint32_t rotr(uint32_t X, unsigned N) { return (X >> N) | (X << (32 - N)); }

uint32_t bigEndian32(const uint8_t *P) {
  return uint32_t(P[0]) << 24 | uint32_t(P[1]) << 16 | uint32_t(P[2]) << 8 |
         uint32_t(P[3]);
}

/// The message schedule of one 64-byte block.
std::array<uint32_t, 64> schedule(const uint8_t *P) {
  std::array<uint32_t, 64> W;
  for (int T = 0; T < 16; ++T)
    W[T] = bigEndian32(P + 4 * T);
  for (int T = 16; T < 64; ++T) {
    uint32_t S0 = rotr(W[T - 15], 7) ^ rotr(W[T - 15], 18) ^ (W[T - 15] >> 3);
    uint32_t S1 = rotr(W[T - 2], 17) ^ rotr(W[T - 2], 19) ^ (W[T - 2] >> 10);
    W[T] = W[T - 16] + S0 + W[T - 7] + S1;
  }
  return W;
}

} // namespace

Sha256::Sha256() : H(InitialHash) {}

void Sha256::block(const uint8_t *P) {
  std::array<uint32_t, 64> W = schedule(P);
  uint32_t A = H[0], B = H[1], C = H[2], D = H[3], E = H[4], F = H[5], G = H[6],
           Hh = H[7];
  for (int T = 0; T < 64; ++T) {
    uint32_t S1 = rotr(E, 6) ^ rotr(E, 11) ^ rotr(E, 25);
    uint32_t Ch = (E & F) ^ (~E & G);
    uint32_t T1 = Hh + S1 + Ch + RoundConstants[T] + W[T];
    uint32_t S0 = rotr(A, 2) ^ rotr(A, 13) ^ rotr(A, 22);
    uint32_t Maj = (A & B) ^ (A & C) ^ (B & C);
    uint32_t T2 = S0 + Maj;
    Hh = G;
    G = F;
    F = E;
    E = D + T1;
    D = C;
    C = B;
    B = A;
    A = T1 + T2;
  }
  const uint32_t Add[8] = {A, B, C, D, E, F, G, Hh};
  for (int I = 0; I < 8; ++I)
    H[I] += Add[I];
}

void Sha256::update(std::string_view Bytes) {
  const auto *P = reinterpret_cast<const uint8_t *>(Bytes.data());
  size_t N = Bytes.size();
  Length += N;
  while (N > 0) {
    size_t Take = std::min(N, Buffer.size() - Buffered);
    std::memcpy(Buffer.data() + Buffered, P, Take);
    Buffered += Take;
    P += Take;
    N -= Take;
    if (Buffered == Buffer.size()) {
      block(Buffer.data());
      Buffered = 0;
    }
  }
}

std::string Sha256::hexDigest() {
  uint64_t Bits = Length * 8;
  uint8_t Pad[72] = {0x80};
  size_t PadLength = (Buffered < 56 ? 56 : 120) - Buffered;
  for (int I = 0; I < 8; ++I)
    Pad[PadLength + I] = static_cast<uint8_t>(Bits >> (56 - 8 * I));
  update(std::string_view(reinterpret_cast<const char *>(Pad), PadLength + 8));
  static const char Hex[] = "0123456789abcdef";
  std::string Out;
  for (uint32_t Word : H)
    for (int Shift = 28; Shift >= 0; Shift -= 4)
      Out += Hex[(Word >> Shift) & 15];
  return Out;
}

std::string sha256Hex(std::string_view Text) {
  Sha256 S;
  S.update(Text);
  return S.hexDigest();
}

} // namespace r3
