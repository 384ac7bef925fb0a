// Goldens of the decoder kernels' pure choices: attention's split rule (rows x heads x splits
// reaches kTargetWorkgroups, chunks of 64-key multiples, never more splits than 64-key blocks),
// the rope table (double-precision angles rounded to f32; Llama-3 scaling), and row fusion.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/graph/ir.h"
#include "compiler/kernels/attention/lower.h"

namespace vkqc {
namespace {

TEST(AttentionSelect, SplitsDecodeRowsPrefill) {
  struct Case {
    int64_t rows, heads, cache;
    uint32_t splits, chunk;
  } cases[] = {
      {1, 32, 2048, 32, 64},   // 1b decode: 32 heads x 32 splits = 1024 workgroups
      {1, 8, 256, 4, 64},      // tiny decode: capped by the 4 blocks of the cache
      {16, 8, 256, 4, 64},     // 128 pairs: 8 wanted, 4 blocks
      {16, 32, 2048, 2, 1024}, // 512 pairs: 2 splits of 1024 positions
      {128, 32, 2048, 1, 2048},
      {512, 32, 2048, 1, 2048},
      {1, 4, 61, 1, 64},       // a cache shorter than one block
      {3, 8, 300, 5, 64},
  };
  for (const Case& c : cases) {
    const attention::AttentionChoice a = attention::SelectAttention(c.rows, c.heads, c.cache);
    EXPECT_EQ(a.splits, c.splits) << c.rows << " " << c.heads << " " << c.cache;
    EXPECT_EQ(a.chunk, c.chunk) << c.rows << " " << c.heads << " " << c.cache;
    EXPECT_EQ(a.chunk % 64, 0u);
    EXPECT_GE(uint64_t(a.splits) * a.chunk, uint64_t(c.cache));
    EXPECT_FALSE(a.reason.empty());
  }
}

TEST(RopeTable, DoublePrecisionAnglesAndLlama3Scaling) {
  ir::RopeAttrs a;
  a.head_dim = 64;
  a.theta = 500000.0f;
  a.max_positions = 2048;
  const std::vector<float> plain = ir::RopeTable(a);
  ASSERT_EQ(plain.size(), 2048u * 32 * 2);
  // Position 0: cos 1, sin 0 everywhere; p = 1000, i = 3: the double-precision angle.
  EXPECT_EQ(plain[0], 1.0f);
  EXPECT_EQ(plain[1], 0.0f);
  const double f3 = std::pow(500000.0, -6.0 / 64.0);
  EXPECT_EQ(plain[(1000 * 32 + 3) * 2], float(std::cos(1000.0 * f3)));
  EXPECT_EQ(plain[(1000 * 32 + 3) * 2 + 1], float(std::sin(1000.0 * f3)));
  a.llama3 = true;
  a.factor = 32.0f;
  const std::vector<float> scaled = ir::RopeTable(a);
  // High frequencies (short wavelengths) are kept; the lowest one is divided by the factor.
  EXPECT_EQ(scaled[(1000 * 32 + 0) * 2], plain[(1000 * 32 + 0) * 2]);
  const double f31 = std::pow(500000.0, -62.0 / 64.0) / 32.0;
  EXPECT_EQ(scaled[(1000 * 32 + 31) * 2 + 1], float(std::sin(1000.0 * f31)));
  EXPECT_NE(scaled[(1000 * 32 + 31) * 2 + 1], plain[(1000 * 32 + 31) * 2 + 1]);
}

}  // namespace
}  // namespace vkqc
