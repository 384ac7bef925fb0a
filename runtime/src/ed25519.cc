// SHA-512 and Ed25519 (see ed25519.h). Field elements mod p = 2^255 - 19 are 16 signed 64-bit
// limbs of 16 bits (value = sum l[i] * 2^(16 i)): products of two limbs and their sums fit int64
// without a 128-bit type. Points are extended twisted-Edwards coordinates (X:Y:Z:T), x = X/Z,
// y = Y/Z, x y = T/Z, with the unified addition law of Hisil-Wong-Carter-Dawson (a = -1), which is
// complete on this curve and also doubles. Scalars mod L are reduced bit by bit on 32-bit limbs.
// Constants (d, 2d, sqrt(-1), the base point's y, L, SHA-512's K and H) were computed from their
// definitions with exact integer arithmetic.
#include "ed25519.h"

#include <array>
#include <cstring>

namespace vkqc::crypto {
namespace {

// ---------------------------------------------------------------- SHA-512
constexpr uint64_t kK[80] = {
    0x428a2f98d728ae22ull, 0x7137449123ef65cdull, 0xb5c0fbcfec4d3b2full, 0xe9b5dba58189dbbcull,
    0x3956c25bf348b538ull, 0x59f111f1b605d019ull, 0x923f82a4af194f9bull, 0xab1c5ed5da6d8118ull,
    0xd807aa98a3030242ull, 0x12835b0145706fbeull, 0x243185be4ee4b28cull, 0x550c7dc3d5ffb4e2ull,
    0x72be5d74f27b896full, 0x80deb1fe3b1696b1ull, 0x9bdc06a725c71235ull, 0xc19bf174cf692694ull,
    0xe49b69c19ef14ad2ull, 0xefbe4786384f25e3ull, 0x0fc19dc68b8cd5b5ull, 0x240ca1cc77ac9c65ull,
    0x2de92c6f592b0275ull, 0x4a7484aa6ea6e483ull, 0x5cb0a9dcbd41fbd4ull, 0x76f988da831153b5ull,
    0x983e5152ee66dfabull, 0xa831c66d2db43210ull, 0xb00327c898fb213full, 0xbf597fc7beef0ee4ull,
    0xc6e00bf33da88fc2ull, 0xd5a79147930aa725ull, 0x06ca6351e003826full, 0x142929670a0e6e70ull,
    0x27b70a8546d22ffcull, 0x2e1b21385c26c926ull, 0x4d2c6dfc5ac42aedull, 0x53380d139d95b3dfull,
    0x650a73548baf63deull, 0x766a0abb3c77b2a8ull, 0x81c2c92e47edaee6ull, 0x92722c851482353bull,
    0xa2bfe8a14cf10364ull, 0xa81a664bbc423001ull, 0xc24b8b70d0f89791ull, 0xc76c51a30654be30ull,
    0xd192e819d6ef5218ull, 0xd69906245565a910ull, 0xf40e35855771202aull, 0x106aa07032bbd1b8ull,
    0x19a4c116b8d2d0c8ull, 0x1e376c085141ab53ull, 0x2748774cdf8eeb99ull, 0x34b0bcb5e19b48a8ull,
    0x391c0cb3c5c95a63ull, 0x4ed8aa4ae3418acbull, 0x5b9cca4f7763e373ull, 0x682e6ff3d6b2b8a3ull,
    0x748f82ee5defb2fcull, 0x78a5636f43172f60ull, 0x84c87814a1f0ab72ull, 0x8cc702081a6439ecull,
    0x90befffa23631e28ull, 0xa4506cebde82bde9ull, 0xbef9a3f7b2c67915ull, 0xc67178f2e372532bull,
    0xca273eceea26619cull, 0xd186b8c721c0c207ull, 0xeada7dd6cde0eb1eull, 0xf57d4f7fee6ed178ull,
    0x06f067aa72176fbaull, 0x0a637dc5a2c898a6ull, 0x113f9804bef90daeull, 0x1b710b35131c471bull,
    0x28db77f523047d84ull, 0x32caab7b40c72493ull, 0x3c9ebe0a15c9bebcull, 0x431d67c49c100d4cull,
    0x4cc5d4becb3e42b6ull, 0x597f299cfc657e2aull, 0x5fcb6fab3ad6faecull, 0x6c44198c4a475817ull};

inline uint64_t Rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

// ---------------------------------------------------------------- GF(2^255 - 19)
using Fe = std::array<int64_t, 16>;

constexpr Fe kZero = {};
constexpr Fe kOne = {1};
constexpr Fe kD = {0x78a3, 0x1359, 0x4dca, 0x75eb, 0xd8ab, 0x4141, 0x0a4d, 0x0070,
                   0xe898, 0x7779, 0x4079, 0x8cc7, 0xfe73, 0x2b6f, 0x6cee, 0x5203};
constexpr Fe kD2 = {0xf159, 0x26b2, 0x9b94, 0xebd6, 0xb156, 0x8283, 0x149a, 0x00e0,
                    0xd130, 0xeef3, 0x80f2, 0x198e, 0xfce7, 0x56df, 0xd9dc, 0x2406};
constexpr Fe kSqrtM1 = {0xa0b0, 0x4a0e, 0x1b27, 0xc4ee, 0xe478, 0xad2f, 0x1806, 0x2f43,
                        0xd7a7, 0x3dfb, 0x0099, 0x2b4d, 0xdf0b, 0x4fc1, 0x2480, 0x2b83};

// Limbs to [0, 2^16) (the top one to [0, 2^15)), folding what lies at or above 2^255 back in
// times 19; the value stays congruent mod p. `passes` bounds how far the carries reach.
void Fold(Fe& o, int passes) {
  for (int pass = 0; pass < passes; ++pass) {
    for (int i = 0; i < 15; ++i) {
      const int64_t c = o[i] >> 16;  // arithmetic shift: floor division, also for negative limbs
      o[i] -= c * 65536;
      o[i + 1] += c;
    }
    const int64_t c = o[15] >> 15;
    o[15] -= c * 32768;
    o[0] += 19 * c;
  }
}

Fe Add(const Fe& a, const Fe& b) {
  Fe o;
  for (int i = 0; i < 16; ++i) o[i] = a[i] + b[i];
  return o;
}
Fe Sub(const Fe& a, const Fe& b) {
  Fe o;
  for (int i = 0; i < 16; ++i) o[i] = a[i] - b[i];
  return o;
}
Fe Mul(const Fe& a, const Fe& b) {
  int64_t t[31] = {};
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) t[i + j] += a[i] * b[j];
  for (int i = 0; i < 15; ++i) t[i] += 38 * t[i + 16];  // 2^256 = 38 (mod p)
  Fe o;
  for (int i = 0; i < 16; ++i) o[i] = t[i];
  Fold(o, 2);
  return o;
}
Fe Sq(const Fe& a) { return Mul(a, a); }

// The canonical 32 little-endian bytes (value in [0, p)).
void Pack(const Fe& a, uint8_t out[32]) {
  Fe t = a;
  Fold(t, 4);  // now 0 <= t < 2^255
  Fe m = t;    // t - p
  m[0] -= 0xffed;
  for (int i = 1; i < 15; ++i) m[i] -= 0xffff;
  m[15] -= 0x7fff;
  for (int i = 0; i < 15; ++i) {
    const int64_t c = m[i] >> 16;
    m[i] -= c * 65536;
    m[i + 1] += c;
  }
  const Fe& r = m[15] >= 0 ? m : t;
  for (int i = 0; i < 16; ++i) {
    out[2 * i] = uint8_t(r[i] & 0xff);
    out[2 * i + 1] = uint8_t((r[i] >> 8) & 0xff);
  }
}
Fe Unpack(const uint8_t in[32]) {  // bit 255 ignored
  Fe o;
  for (int i = 0; i < 16; ++i) o[i] = int64_t(in[2 * i]) | (int64_t(in[2 * i + 1]) << 8);
  o[15] &= 0x7fff;
  return o;
}
bool Equal(const Fe& a, const Fe& b) {
  uint8_t x[32], y[32];
  Pack(a, x);
  Pack(b, y);
  return std::memcmp(x, y, 32) == 0;
}
int Parity(const Fe& a) {
  uint8_t x[32];
  Pack(a, x);
  return x[0] & 1;
}
// a^(2^255 - 21) = 1/a: the exponent's bits 254..0 are all set except bits 4 and 2.
Fe Invert(const Fe& a) {
  Fe c = kOne;
  for (int bit = 254; bit >= 0; --bit) {
    c = Sq(c);
    if (bit != 4 && bit != 2) c = Mul(c, a);
  }
  return c;
}
// a^((p - 5) / 8) = a^(2^252 - 3): bits 251..0 set except bit 1.
Fe Pow2523(const Fe& a) {
  Fe c = kOne;
  for (int bit = 251; bit >= 0; --bit) {
    c = Sq(c);
    if (bit != 1) c = Mul(c, a);
  }
  return c;
}

// ---------------------------------------------------------------- points
struct Ge {
  Fe x, y, z, t;
};
const Ge kIdentity = {kZero, kOne, kOne, kZero};

Ge PointAdd(const Ge& p, const Ge& q) {
  const Fe a = Mul(Sub(p.y, p.x), Sub(q.y, q.x));
  const Fe b = Mul(Add(p.y, p.x), Add(q.y, q.x));
  const Fe c = Mul(Mul(p.t, q.t), kD2);
  const Fe d = Mul(p.z, Add(q.z, q.z));
  const Fe e = Sub(b, a), f = Sub(d, c), g = Add(d, c), h = Add(b, a);
  return {Mul(e, f), Mul(g, h), Mul(f, g), Mul(e, h)};
}

void CondSwap(Ge& p, Ge& q, int64_t bit) {  // bit in {0, 1}: no branch on it
  const int64_t mask = -bit;
  Fe* ps[4] = {&p.x, &p.y, &p.z, &p.t};
  Fe* qs[4] = {&q.x, &q.y, &q.z, &q.t};
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 16; ++i) {
      const int64_t t = mask & ((*ps[k])[i] ^ (*qs[k])[i]);
      (*ps[k])[i] ^= t;
      (*qs[k])[i] ^= t;
    }
}

// [s]p for a 256-bit little-endian scalar: a Montgomery ladder (r0 + p = r1 throughout).
Ge ScalarMul(const Ge& p, const uint8_t s[32]) {
  Ge r0 = kIdentity, r1 = p;
  for (int i = 255; i >= 0; --i) {
    const int64_t bit = (s[i / 8] >> (i % 8)) & 1;
    CondSwap(r0, r1, bit);
    r1 = PointAdd(r0, r1);
    r0 = PointAdd(r0, r0);
    CondSwap(r0, r1, bit);
  }
  return r0;
}

void Encode(const Ge& p, uint8_t out[32]) {
  const Fe zi = Invert(p.z);
  const Fe x = Mul(p.x, zi), y = Mul(p.y, zi);
  Pack(y, out);
  out[31] = uint8_t(out[31] ^ (Parity(x) << 7));
}

// RFC 8032 5.1.3; false for a y >= p, an x that does not exist, or -0.
bool Decode(const uint8_t in[32], Ge* out) {
  const Fe y = Unpack(in);
  uint8_t canon[32];
  Pack(y, canon);
  canon[31] = uint8_t(canon[31] | (in[31] & 0x80));
  if (std::memcmp(canon, in, 32) != 0) return false;
  const int sign = in[31] >> 7;
  const Fe y2 = Sq(y);
  const Fe u = Sub(y2, kOne), v = Add(Mul(y2, kD), kOne);
  const Fe v3 = Mul(Sq(v), v);
  const Fe v7 = Mul(Sq(v3), v);
  Fe x = Mul(Mul(u, v3), Pow2523(Mul(u, v7)));
  const Fe vx2 = Mul(v, Sq(x));
  if (!Equal(vx2, u)) {
    if (!Equal(vx2, Sub(kZero, u))) return false;
    x = Mul(x, kSqrtM1);
  }
  if (Equal(x, kZero) && sign) return false;
  if (Parity(x) != sign) x = Sub(kZero, x);
  *out = {x, y, kOne, Mul(x, y)};
  return true;
}

Ge BasePoint() {
  uint8_t b[32];
  std::memset(b, 0x66, 32);
  b[0] = 0x58;  // y = 4/5, x even
  Ge g;
  Decode(b, &g);
  return g;
}

// ---------------------------------------------------------------- scalars mod L
constexpr uint32_t kL[8] = {0x5cf5d3ed, 0x5812631a, 0xa2f79cd6, 0x14def9de, 0, 0, 0, 0x10000000};

// x mod L for an n-byte little-endian x, one bit at a time: r = 2r + bit, minus L when r >= L.
void ReduceModL(const uint8_t* x, size_t n, uint8_t out[32]) {
  uint32_t r[9] = {};
  for (size_t bi = n * 8; bi-- > 0;) {
    uint32_t carry = (x[bi / 8] >> (bi % 8)) & 1;
    for (int i = 0; i < 9; ++i) {
      const uint32_t next = r[i] >> 31;
      r[i] = (r[i] << 1) | carry;
      carry = next;
    }
    bool ge = r[8] != 0;  // r < 2L < 2^254 here, so r[8] == 0; kept general
    if (!ge) {
      ge = true;  // equal counts as >=
      for (int i = 7; i >= 0; --i)
        if (r[i] != kL[i]) {
          ge = r[i] > kL[i];
          break;
        }
    }
    if (ge) {
      int64_t borrow = 0;
      for (int i = 0; i < 9; ++i) {
        int64_t d = int64_t(r[i]) - (i < 8 ? kL[i] : 0) - borrow;
        borrow = d < 0;
        r[i] = uint32_t(d + (borrow << 32));
      }
    }
  }
  for (int i = 0; i < 32; ++i) out[i] = uint8_t(r[i / 4] >> (8 * (i % 4)));
}

bool LessThanL(const uint8_t s[32]) {
  for (int i = 7; i >= 0; --i) {
    uint32_t w = 0;
    for (int k = 3; k >= 0; --k) w = (w << 8) | s[4 * i + k];
    if (w != kL[i]) return w < kL[i];
  }
  return false;
}

// (r + k a) mod L for 32-byte little-endian r, k, a.
void MulAddModL(const uint8_t r[32], const uint8_t k[32], const uint8_t a[32], uint8_t out[32]) {
  uint32_t kw[8], aw[8];
  for (int i = 0; i < 8; ++i) {
    kw[i] = aw[i] = 0;
    for (int b = 3; b >= 0; --b) {
      kw[i] = (kw[i] << 8) | k[4 * i + b];
      aw[i] = (aw[i] << 8) | a[4 * i + b];
    }
  }
  uint64_t acc[17] = {};  // 512-bit product + r, 32 bits per word
  for (int i = 0; i < 8; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < 8; ++j) {
      const uint64_t t = acc[i + j] + uint64_t(kw[i]) * aw[j] + carry;
      acc[i + j] = t & 0xffffffffu;
      carry = t >> 32;
    }
    acc[i + 8] += carry;
  }
  uint64_t carry = 0;
  for (int i = 0; i < 17; ++i) {
    uint64_t add = 0;
    if (i < 8)
      for (int b = 3; b >= 0; --b) add = (add << 8) | r[4 * i + b];
    const uint64_t t = acc[i] + add + carry;
    acc[i] = t & 0xffffffffu;
    carry = t >> 32;
  }
  uint8_t bytes[68];
  for (int i = 0; i < 68; ++i) bytes[i] = uint8_t(acc[i / 4] >> (8 * (i % 4)));
  ReduceModL(bytes, sizeof bytes, out);
}

void HashSeed(const uint8_t seed[32], uint8_t scalar[32], uint8_t prefix[32]) {
  uint8_t h[64];
  Sha512 sha;
  sha.Update(seed, 32);
  sha.Final(h);
  std::memcpy(scalar, h, 32);
  scalar[0] &= 248;
  scalar[31] &= 127;
  scalar[31] |= 64;
  std::memcpy(prefix, h + 32, 32);
}

}  // namespace

// ---------------------------------------------------------------- SHA-512
Sha512::Sha512()
    : h_{0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull, 0xa54ff53a5f1d36f1ull,
         0x510e527fade682d1ull, 0x9b05688c2b3e6c1full, 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull},
      buf_{} {}

void Sha512::Block(const uint8_t* p) {
  uint64_t w[80];
  for (int t = 0; t < 16; ++t) {
    w[t] = 0;
    for (int b = 0; b < 8; ++b) w[t] = (w[t] << 8) | p[8 * t + b];
  }
  for (int t = 16; t < 80; ++t) {
    const uint64_t s0 = Rotr(w[t - 15], 1) ^ Rotr(w[t - 15], 8) ^ (w[t - 15] >> 7);
    const uint64_t s1 = Rotr(w[t - 2], 19) ^ Rotr(w[t - 2], 61) ^ (w[t - 2] >> 6);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint64_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int t = 0; t < 80; ++t) {
    const uint64_t t1 = h + (Rotr(e, 14) ^ Rotr(e, 18) ^ Rotr(e, 41)) + ((e & f) ^ (~e & g)) + kK[t] + w[t];
    const uint64_t t2 = (Rotr(a, 28) ^ Rotr(a, 34) ^ Rotr(a, 39)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d;
  h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
}

void Sha512::Update(const void* data, size_t size) {
  if (size == 0) return;  // data may be null (an empty message): memcpy must not see it
  const auto* p = static_cast<const uint8_t*>(data);
  bytes_ += size;
  if (fill_) {
    const size_t take = size < 128 - fill_ ? size : 128 - fill_;
    std::memcpy(buf_ + fill_, p, take);
    fill_ += take;
    p += take;
    size -= take;
    if (fill_ < 128) return;
    Block(buf_);
    fill_ = 0;
  }
  for (; size >= 128; p += 128, size -= 128) Block(p);
  std::memcpy(buf_, p, size);
  fill_ = size;
}

void Sha512::Final(uint8_t out[64]) {
  const uint64_t bits_hi = bytes_ >> 61, bits_lo = bytes_ << 3;
  buf_[fill_++] = 0x80;
  if (fill_ > 112) {
    std::memset(buf_ + fill_, 0, 128 - fill_);
    Block(buf_);
    fill_ = 0;
  }
  std::memset(buf_ + fill_, 0, 112 - fill_);
  for (int b = 0; b < 8; ++b) {
    buf_[112 + b] = uint8_t(bits_hi >> (56 - 8 * b));
    buf_[120 + b] = uint8_t(bits_lo >> (56 - 8 * b));
  }
  Block(buf_);
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 8; ++b) out[8 * i + b] = uint8_t(h_[i] >> (56 - 8 * b));
}

// ---------------------------------------------------------------- Ed25519
void Ed25519PublicKey(const uint8_t seed[32], uint8_t public_key[32]) {
  uint8_t a[32], prefix[32];
  HashSeed(seed, a, prefix);
  Encode(ScalarMul(BasePoint(), a), public_key);
}

void Ed25519Sign(const uint8_t seed[32], const uint8_t* msg, size_t size, uint8_t signature[64]) {
  uint8_t a[32], prefix[32], pub[32], h[64], r[32], k[32];
  HashSeed(seed, a, prefix);
  const Ge base = BasePoint();
  Encode(ScalarMul(base, a), pub);
  Sha512 s1;
  s1.Update(prefix, 32);
  s1.Update(msg, size);
  s1.Final(h);
  ReduceModL(h, 64, r);
  Encode(ScalarMul(base, r), signature);  // R
  Sha512 s2;
  s2.Update(signature, 32);
  s2.Update(pub, 32);
  s2.Update(msg, size);
  s2.Final(h);
  ReduceModL(h, 64, k);
  MulAddModL(r, k, a, signature + 32);  // S = r + k a mod L
}

bool Ed25519Verify(const uint8_t public_key[32], const uint8_t* msg, size_t size, const uint8_t signature[64]) {
  if (!LessThanL(signature + 32)) return false;
  Ge a;
  if (!Decode(public_key, &a)) return false;
  uint8_t h[64], k[32], check[32];
  Sha512 sha;
  sha.Update(signature, 32);
  sha.Update(public_key, 32);
  sha.Update(msg, size);
  sha.Final(h);
  ReduceModL(h, 64, k);
  const Ge neg_a = {Sub(kZero, a.x), a.y, a.z, Sub(kZero, a.t)};
  Encode(PointAdd(ScalarMul(BasePoint(), signature + 32), ScalarMul(neg_a, k)), check);
  return std::memcmp(check, signature, 32) == 0;
}

}  // namespace vkqc::crypto
