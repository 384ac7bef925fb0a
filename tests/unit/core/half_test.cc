// compiler/common/half.h: the fp16 conversions the compiler, the CPU reference and the CLI share.
#include "compiler/common/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace vkqc {
namespace {

// Independent widening: sign * mantissa * 2^exponent through ldexp.
double RefHalf(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : s * std::numeric_limits<double>::infinity();
  if (e == 0) return s * std::ldexp(double(m), -24);
  return s * std::ldexp(double(1024 + m), e - 25);
}

bool IsNanHalf(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }

TEST(Half, WideningIsExactForEveryBitPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = HalfToFloat(uint16_t(h));
    const double want = RefHalf(uint16_t(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
    } else {
      EXPECT_EQ(double(f), want) << std::hex << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;  // -0 stays -0
    }
  }
}

TEST(Half, NarrowingRoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t back = FloatToHalf(HalfToFloat(uint16_t(h)));
    if (IsNanHalf(uint16_t(h))) {
      EXPECT_TRUE(IsNanHalf(back)) << std::hex << h;
      EXPECT_EQ(back & 0x200, 0x200) << std::hex << h;  // quiet
    } else {
      EXPECT_EQ(back, h) << std::hex << h;
    }
  }
}

// Between every two neighbouring finite halves: the midpoint goes to the even one, the floats just
// beside it to the nearer one; both signs.
TEST(Half, NarrowingRoundsToNearestTiesToEven) {
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const float a = HalfToFloat(uint16_t(h)), b = HalfToFloat(uint16_t(h + 1));
    const float mid = float((double(a) + double(b)) / 2.0);  // 12 significant bits: exact
    ASSERT_EQ(double(mid), (double(a) + double(b)) / 2.0);
    const uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
    for (const float s : {1.0f, -1.0f}) {
      const uint16_t sign = s < 0 ? 0x8000 : 0;
      EXPECT_EQ(FloatToHalf(s * mid), even | sign) << std::hex << h;
      EXPECT_EQ(FloatToHalf(s * std::nextafter(mid, 0.0f)), h | sign) << std::hex << h;
      EXPECT_EQ(FloatToHalf(s * std::nextafter(mid, 1e9f)), (h + 1) | sign) << std::hex << h;
    }
  }
  // The top: 65520 is halfway to the next power of two, which is infinity.
  EXPECT_EQ(FloatToHalf(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-1e30f), 0xFC00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
  // The bottom: 2^-25 is halfway between zero and the smallest subnormal.
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(FloatToHalf(-std::ldexp(1.0f, -30)), 0x8000);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_TRUE(IsNanHalf(FloatToHalf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(RoundToHalf(1.00048828125f), 1.0f);       // halfway, to even
  EXPECT_EQ(RoundToHalf(1.00146484375f), 1.001953125f);  // halfway, to even (up)
}

#ifdef __FLT16_MAX__
// Where the compiler has _Float16 (gcc on x86-64: the main build), against its conversion on
// random float bit patterns of every exponent.
TEST(Half, NarrowingMatchesTheCompilersFloat16) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000000; ++i) {
    const float f = std::bit_cast<float>(uint32_t(rng()));
    const uint16_t want = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
    const uint16_t got = FloatToHalf(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(IsNanHalf(got)) << f;
    } else {
      ASSERT_EQ(got, want) << std::hexfloat << f;
    }
  }
}
#endif

}  // namespace
}  // namespace vkqc
