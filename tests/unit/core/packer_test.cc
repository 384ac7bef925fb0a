#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {
namespace {

TEST(Packer, PackedK4IsPaddedToTheWordAlignment) {
  EXPECT_EQ(PackedK4(1), kKWordAlign);
  EXPECT_EQ(PackedK4(4 * kKWordAlign), kKWordAlign);
  EXPECT_EQ(PackedK4(4 * kKWordAlign + 1), 2 * kKWordAlign);
  EXPECT_EQ(PackedK4(2048), 512u);
  EXPECT_EQ(PackedK4(1000) % 4, 0u);  // GEMV reads uvec4
}

TEST(Packer, RoundTripOddShapesWithZeroPaddingAndSums) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-128, 127);
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {13, 36}, {7, 1000}, {3, 33}}) {
    std::vector<int8_t> w(size_t(n * k));
    for (auto& v : w) v = int8_t(d(rng));
    std::vector<float> scales(static_cast<size_t>(n)), bias(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      scales[i] = 0.01f * float(i + 1);
      bias[i] = -float(i);
    }
    PackedLinear p = PackQ8csw(w.data(), n, k, scales.data(), bias.data());
    const uint32_t k4p = PackedK4(k);
    ASSERT_EQ(p.weights.size(), size_t(n) * k4p * 4);
    EXPECT_EQ(UnpackQ8csw(p.weights, n, k), w);
    for (int64_t r = 0; r < n; ++r) {
      for (uint32_t c = uint32_t(k); c < k4p * 4; ++c) EXPECT_EQ(p.weights[size_t(r) * k4p * 4 + c], 0) << "padding";
      int32_t sum = 0;
      for (int64_t c = 0; c < k; ++c) sum += w[r * k + c];
      float s, b;
      int32_t ws;
      std::memcpy(&s, &p.channel_params[r * 16 + 0], 4);
      std::memcpy(&ws, &p.channel_params[r * 16 + 4], 4);
      std::memcpy(&b, &p.channel_params[r * 16 + 8], 4);
      EXPECT_EQ(s, scales[r]);
      EXPECT_EQ(ws, sum);
      EXPECT_EQ(b, bias[r]);
    }
  }
}

TEST(Packer, NoBiasPacksZero) {
  const int8_t w[4] = {1, 2, 3, 4};
  const float s[1] = {1.0f};
  PackedLinear p = PackQ8csw(w, 1, 4, s, nullptr);
  float b;
  std::memcpy(&b, &p.channel_params[8], 4);
  EXPECT_EQ(b, 0.0f);
}

}  // namespace
}  // namespace vkqc::linear
