#include <gtest/gtest.h>

#include <cmath>

#include "reference/reference.h"

namespace vkqc::ref {
namespace {

TEST(QuantMath, RoundEvenTiesGoToEven) {
  EXPECT_EQ(RoundEven(0.5f), 0.0f);
  EXPECT_EQ(RoundEven(1.5f), 2.0f);
  EXPECT_EQ(RoundEven(2.5f), 2.0f);
  EXPECT_EQ(RoundEven(-0.5f), 0.0f);
  EXPECT_EQ(RoundEven(-1.5f), -2.0f);
  EXPECT_EQ(RoundEven(-2.5f), -2.0f);
  EXPECT_EQ(RoundEven(2.4999998f), 2.0f);
  EXPECT_EQ(RoundEven(2.5000002f), 3.0f);
}

TEST(QuantMath, QuantizeUsesInverseScaleAndClamps) {
  const float scale = 0.1f, inv = 1.0f / scale;
  EXPECT_EQ(QuantizeInt8(0.25f, 1.0f / 0.5f, 0), 0);  // 0.5 -> 0 (tie to even)
  EXPECT_EQ(QuantizeInt8(0.75f, 1.0f / 0.5f, 0), 2);  // 1.5 -> 2
  EXPECT_EQ(QuantizeInt8(1.0f, inv, 3), 13);
  EXPECT_EQ(QuantizeInt8(100.0f, inv, 0), 127);
  EXPECT_EQ(QuantizeInt8(-100.0f, inv, 0), -128);
  EXPECT_EQ(QuantizeInt8(-12.7f, inv, -1), -128);
  EXPECT_EQ(QuantizeInt8(0.0f, inv, -128), -128);
}

TEST(QuantMath, IntegerLinearMatchesHandComputation) {
  // x = [1.0, -0.5, 0.26], s_x = 0.1, zp = 2 -> xq = [12, -3, 5] (2.6 -> 3 + 2); minus zp = [10, -5, 3]
  const float x[3] = {1.0f, -0.5f, 0.26f};
  const int8_t w[6] = {1, 2, 3, -4, 5, -6};
  const float ws[2] = {0.5f, 0.25f};
  const float b[2] = {1.0f, -1.0f};
  LinearArgs a;
  a.x = x;
  a.m = 1;
  a.k = 3;
  a.n = 2;
  a.w = w;
  a.w_scales = ws;
  a.bias = b;
  float y[2];
  LinearInteger(a, 0.1f, 2, y);
  // acc0 = 10*1 - 5*2 + 3*3 = 9; acc1 = -40 - 25 - 18 = -83
  EXPECT_FLOAT_EQ(y[0], 9.0f * (0.1f * 0.5f) + 1.0f);
  EXPECT_FLOAT_EQ(y[1], -83.0f * (0.1f * 0.25f) - 1.0f);
  a.relu = true;
  LinearInteger(a, 0.1f, 2, y);
  EXPECT_EQ(y[1], 0.0f);
}

TEST(QuantMath, WeightOnlyLinearAndMagnitude) {
  const float x[2] = {2.0f, -1.0f};
  const int8_t w[2] = {3, 4};
  const float ws[1] = {0.5f};
  LinearArgs a;
  a.x = x;
  a.m = 1;
  a.k = 2;
  a.n = 1;
  a.w = w;
  a.w_scales = ws;
  float y, mag;
  LinearWeightOnly(a, &y, &mag);
  EXPECT_FLOAT_EQ(y, 2.0f * 1.5f - 1.0f * 2.0f);
  EXPECT_FLOAT_EQ(mag, 3.0f + 2.0f);
}

}  // namespace
}  // namespace vkqc::ref
