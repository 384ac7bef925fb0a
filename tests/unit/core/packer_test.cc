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
  EXPECT_EQ(PackedK8(8), 4u);
  EXPECT_EQ(PackedK8(2048), 256u);
  EXPECT_EQ(PackedK8(40), 8u);
  EXPECT_EQ(2 * PackedK8(40), PackedK4(40));  // one int4 word pairs with two activation words
}

float F(const PackedLinear& p, uint32_t word) {
  float v;
  std::memcpy(&v, p.region.data() + size_t(word) * 4, 4);
  return v;
}
int32_t I(const PackedLinear& p, uint32_t word) {
  int32_t v;
  std::memcpy(&v, p.region.data() + size_t(word) * 4, 4);
  return v;
}

TEST(Packer, Q8RoundTripOddShapesWithZeroPaddingAndSums) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-128, 127);
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {13, 36}, {7, 1000}, {3, 33}}) {
    std::vector<uint8_t> w(size_t(n * k));
    for (auto& v : w) v = uint8_t(int8_t(d(rng)));
    std::vector<float> scales(static_cast<size_t>(n)), bias(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      scales[i] = 0.01f * float(i + 1);
      bias[i] = -float(i);
    }
    PackedLinear p = PackLinear(ir::Scheme::Q8CSW, w.data(), n, k, 0, scales.data(), nullptr, bias.data());
    EXPECT_EQ(p.kw, PackedK4(k));
    const auto back = UnpackLinear(ir::Scheme::Q8CSW, p, n, k, 0);
    for (int64_t i = 0; i < n * k; ++i) ASSERT_EQ(back[i], int8_t(w[i]));
    for (int64_t r = 0; r < n; ++r) {
      for (uint32_t c = uint32_t(k); c < p.kw * 4; ++c) EXPECT_EQ(p.region[size_t(r) * p.kw * 4 + c], 0) << "padding";
      int32_t sum = 0;
      for (int64_t c = 0; c < k; ++c) sum += int8_t(w[r * k + c]);
      EXPECT_EQ(F(p, p.scale_off + r), scales[r]);
      EXPECT_EQ(I(p, p.wsum_off + r), sum);
      EXPECT_EQ(F(p, p.bias_off + r), bias[r]);
    }
  }
}

// int4: the IR holds two values per byte, low nibble first.
std::vector<uint8_t> PackNibbles(const std::vector<int>& v) {
  std::vector<uint8_t> out((v.size() + 1) / 2, 0);
  for (size_t i = 0; i < v.size(); ++i) out[i / 2] |= uint8_t((v[i] & 0xF) << (4 * (i % 2)));
  return out;
}

TEST(Packer, Int4RoundTripSymmetricAndAsymmetric) {
  std::mt19937 rng(9);
  for (auto [n, k, gs] : {std::tuple<int64_t, int64_t, int64_t>{3, 64, 32}, {5, 40, 8}, {2, 256, 128}, {7, 48, 16}}) {
    const int64_t groups = k / gs;
    std::vector<float> scales(size_t(n * groups));
    for (auto& s : scales) s = 0.001f * float(rng() % 100 + 1);
    // q4gsw: q in [-8, 7]
    std::vector<int> q(size_t(n * k));
    for (auto& v : q) v = int(rng() % 16) - 8;
    PackedLinear s = PackLinear(ir::Scheme::Q4GSW, PackNibbles(q).data(), n, k, gs, scales.data(), nullptr, nullptr);
    EXPECT_EQ(s.kw, PackedK8(k));
    auto back = UnpackLinear(ir::Scheme::Q4GSW, s, n, k, gs);
    for (int64_t i = 0; i < n * k; ++i) ASSERT_EQ(back[i], q[i]) << i;
    // The +8 bias: nibble of k=0 of row 0 is q+8 in the low nibble of byte 0.
    EXPECT_EQ(s.region[0] & 0xF, (q[0] + 8) & 0xF);
    // k=4 sits in the high nibble of byte 0 (lines up with the second activation word).
    if (k >= 8) {
      EXPECT_EQ(s.region[0] >> 4, (q[4] + 8) & 0xF);
    }
    for (int64_t i = 0; i < n * groups; ++i) EXPECT_EQ(F(s, s.scale_off + uint32_t(i)), scales[i]);
    // q4gaw: q in [0, 15], zero point per group
    std::vector<int> u(size_t(n * k));
    for (auto& v : u) v = int(rng() % 16);
    std::vector<int32_t> zps(size_t(n * groups));
    for (auto& z : zps) z = int32_t(rng() % 16);
    PackedLinear a = PackLinear(ir::Scheme::Q4GAW, PackNibbles(u).data(), n, k, gs, scales.data(), zps.data(), nullptr);
    back = UnpackLinear(ir::Scheme::Q4GAW, a, n, k, gs);
    for (int64_t i = 0; i < n * k; ++i) ASSERT_EQ(back[i], u[i] - zps[(i / k) * groups + (i % k) / gs]) << i;
    for (int64_t i = 0; i < n * groups; ++i) EXPECT_EQ(a.region[size_t(a.zp_off) * 4 + size_t(i)], zps[i]);
    // Padding words decode to zero bytes.
    for (int64_t r = 0; r < n; ++r)
      for (uint32_t c = uint32_t(k / 8) * 4; c < a.kw * 4; ++c) EXPECT_EQ(a.region[size_t(r) * a.kw * 4 + c], 0);
  }
}

TEST(Packer, NoBiasPacksZero) {
  const uint8_t w[4] = {1, 2, 3, 4};
  const float s[1] = {1.0f};
  PackedLinear p = PackLinear(ir::Scheme::Q8CSW, w, 1, 4, 0, s, nullptr, nullptr);
  EXPECT_EQ(F(p, p.bias_off), 0.0f);
}

}  // namespace
}  // namespace vkqc::linear
