// IEEE binary16 <-> binary32 without _Float16 (which clang 14 lacks on x86, and the sanitizer
// build uses clang): widening is exact; narrowing rounds to nearest, ties to even, as a C++
// conversion to _Float16 does (finite values from 65520 on become infinity, subnormals round like
// any other value, NaN stays a quiet NaN with its payload's top bits). Header-only: the compiler,
// the CPU reference, the CLI and the tests share it.
#pragma once

#include <bit>
#include <cstdint>

namespace vkqc {

constexpr float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu, bits = 0;
  if (exp == 0 && mant == 0) {
    bits = sign;
  } else if (exp == 0) {  // subnormal: normalize
    exp = 127 - 15 + 1;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

constexpr uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return uint16_t(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));  // NaN, quiet
  if (ax >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // >= 65520 (and infinity): infinity
  if (ax >= 0x38800000u) {  // a normal half (>= 2^-14): rebias, round the 13 dropped bits
    const uint32_t v = ax - (112u << 23);
    return uint16_t(sign | ((v + 0xFFFu + ((v >> 13) & 1u)) >> 13));  // a carry moves the exponent up
  }
  if (ax < 0x33000000u) return uint16_t(sign);  // below 2^-25 (half the smallest subnormal): zero
  // A subnormal half: the value in units of 2^-24, rounded (a round up to 0x400 is the smallest normal).
  const uint32_t e = ax >> 23, m = (ax & 0x7FFFFFu) | 0x800000u, shift = 126u - e;  // 14..24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
  return uint16_t(sign | q);
}

constexpr float RoundToHalf(float v) { return HalfToFloat(FloatToHalf(v)); }

}  // namespace vkqc
