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

// The decode kernel's blocks, chunks and refusals (built-in profiles: nvidia-hopper 48 KiB of
// shared memory and unbounded storage buffers, android-baseline-2022 16 KiB and 4).
TEST(AttentionSelect, DecodeKernelBlocksChunksAndRefusals) {
  auto hopper = LoadProfile("nvidia-hopper");
  auto phone = LoadProfile("android-baseline-2022");
  ASSERT_TRUE(hopper.ok() && phone.ok());
  struct Case {
    int64_t heads, kv_heads, head_dim, cache;
    bool rope;
    const TargetProfile* p;
    uint32_t bk, chunk, splits;
    const char* why;  // the refusal (bk 0)
  } cases[] = {
      {32, 8, 64, 2048, true, &*hopper, 64, 64, 32, ""},     // 1b: 32 chunks of one block
      {32, 8, 64, 8192, true, &*hopper, 64, 128, 64, ""},    // capped at 64 chunks of two blocks
      {32, 8, 128, 130, false, &*hopper, 64, 64, 3, ""},
      {32, 1, 128, 300, false, &*hopper, 16, 16, 19, ""},   // ratio 32, head_dim 128: 64 or 32 keys do not fit
      {8, 2, 4, 40, false, &*hopper, 64, 64, 1, ""},         // head_dim 4: 2 invocations per key, 2 dims each
      {8, 2, 2, 40, false, &*hopper, 128, 128, 1, ""},       // head_dim 2 and 6: one invocation per key
      {8, 2, 6, 300, false, &*hopper, 128, 128, 3, ""},
      {8, 2, 64, 9000, true, &*hopper, 64, 192, 47, ""},     // 47 chunks of 3 blocks
      {2, 1, 256, 300, false, &*hopper, 32, 32, 10, ""},
      {32, 1, 256, 300, false, &*hopper, 0, 0, 0, "no block of 64, 32, 16 or 128 keys fits (shared memory 49152 B)"},
      {8, 2, 7, 40, false, &*hopper, 0, 0, 0, "head_dim 7 (the decode kernel takes even ones up to 256)"},
      {64, 1, 64, 100, false, &*hopper, 0, 0, 0, "64 query heads per KV head (the decode kernel takes up to 32)"},
      {8, 2, 258, 100, false, &*hopper, 0, 0, 0, "head_dim 258 (the decode kernel takes even ones up to 256)"},
      {8, 2, 64, 100, false, &*phone, 0, 0, 0, "binds 8 storage buffers, the target allows 4 per stage"},
  };
  for (const Case& c : cases) {
    const auto d = attention::SelectDecodeAttention(c.heads, c.kv_heads, c.head_dim, c.cache, c.rope, *c.p);
    const std::string what = std::to_string(c.heads) + "/" + std::to_string(c.kv_heads) + " D " +
                             std::to_string(c.head_dim) + " S " + std::to_string(c.cache);
    EXPECT_EQ(d.bk, c.bk) << what << ": " << d.why;
    EXPECT_EQ(d.chunk, c.chunk) << what;
    EXPECT_EQ(d.splits, c.splits) << what;
    if (d.bk) {
      EXPECT_LE(d.shared, c.p->max_compute_shared_memory_size) << what;
      EXPECT_GE(uint64_t(d.splits) * d.chunk, uint64_t(c.cache)) << what;
      EXPECT_LE(d.splits, attention::kDecodeMaxSplits) << what;
      EXPECT_EQ(d.storage_buffers, c.rope ? 11u : 8u);
    } else {
      EXPECT_NE(d.why.find(c.why), std::string::npos) << what << ": " << d.why;
    }
  }
  // The values' rows are padded where that fits, never at the price of a smaller block: ratio 32
  // with head_dim 64 on a 32 KiB profile keeps 16-key blocks, unpadded (4 bytes too many padded).
  auto lvp = LoadProfile("lavapipe");
  ASSERT_TRUE(lvp.ok());
  const auto hop = attention::SelectDecodeAttention(32, 8, 64, 2048, true, *hopper);
  EXPECT_TRUE(hop.pad);
  EXPECT_EQ(hop.shared, attention::AttentionDecodeShared(4, 64, 64, true));
  // Chunks: one block each up to 64 on GPU targets; at most 4 on CPU devices (cpu_device), unless
  // the caller gives the most (CompileOptions::decode_attention_max_splits).
  EXPECT_EQ(hop.splits, 32u);
  EXPECT_EQ(hop.chunk, 64u);
  const auto cpu = attention::SelectDecodeAttention(32, 8, 64, 2048, true, *lvp);
  EXPECT_EQ(cpu.splits, attention::kDecodeCpuMaxSplits);
  EXPECT_EQ(cpu.chunk, 512u);
  const auto cpu64 = attention::SelectDecodeAttention(32, 8, 64, 2048, true, *lvp, 1, 0, attention::kDecodeMaxSplits);
  EXPECT_EQ(cpu64.splits, 32u);
  const auto cpu1 = attention::SelectDecodeAttention(32, 8, 64, 2048, true, *lvp, 1, 0, 1);
  EXPECT_EQ(cpu1.splits, 1u);
  EXPECT_EQ(cpu1.chunk, 2048u);
  const auto tight = attention::SelectDecodeAttention(32, 1, 64, 200, true, *lvp);
  EXPECT_EQ(tight.bk, 16u);
  EXPECT_FALSE(tight.pad);
  EXPECT_GT(attention::AttentionDecodeShared(32, 64, 16, true), lvp->max_compute_shared_memory_size);
  // f16 caches are decoded by unpackHalf2x16 on GPU targets, by integer arithmetic where the
  // target has the quirk cpu_device (lavapipe's built-in; `vkqc probe` sets it for CPU devices).
  EXPECT_TRUE(hop.f16_unpack);
  auto a16 = LoadProfile("android-16");
  ASSERT_TRUE(a16.ok());
  const auto phone16 = attention::SelectDecodeAttention(8, 2, 64, 300, true, *a16);
  EXPECT_GT(phone16.bk, 0u) << phone16.why;
  EXPECT_TRUE(phone16.f16_unpack);
  EXPECT_FALSE(tight.f16_unpack);
}

// Several rows (batched / speculative decoding): rows per workgroup the most with G x rows <= 4
// but at most 4 groups, or forced; shared memory grows with the group's queries and the program's new rows; refusals.
TEST(AttentionSelect, DecodeKernelRowGroups) {
  auto hopper = LoadProfile("nvidia-hopper");
  auto lvp = LoadProfile("lavapipe");
  ASSERT_TRUE(hopper.ok() && lvp.ok());
  struct Case {
    int64_t heads, kv_heads, rows;
    uint32_t forced, group_rows, groups, bk;
  } cases[] = {
      {32, 8, 2, 0, 1, 2, 64}, {32, 8, 4, 0, 1, 4, 64},  // G = 4: a row per workgroup up to 4 groups,
      {32, 8, 8, 0, 2, 4, 64}, {32, 8, 5, 0, 2, 3, 64},  // then 4 groups (or fewer) of more rows
      {16, 2, 4, 0, 1, 4, 64}, {16, 2, 8, 0, 2, 4, 64},  // G = 8
      {8, 8, 8, 0, 4, 2, 64}, {8, 8, 3, 0, 3, 1, 64},    // G = 1: groups of 4 rows
      {32, 8, 8, 8, 8, 1, 32},  // forced: 32 queries, blocks of 32 keys on 48 KiB
      {32, 8, 8, 3, 3, 3, 64},  // forced: 3 + 3 + 2
      {32, 8, 2, 8, 2, 1, 64},  // forced beyond the rows: the rows
  };
  for (const Case& c : cases) {
    const auto d = attention::SelectDecodeAttention(c.heads, c.kv_heads, 64, 2048, true, *hopper, c.rows, c.forced);
    const std::string what = std::to_string(c.heads) + "/" + std::to_string(c.kv_heads) + " rows " +
                             std::to_string(c.rows) + " forced " + std::to_string(c.forced);
    EXPECT_EQ(d.bk, c.bk) << what << ": " << d.why;
    EXPECT_EQ(d.group_rows, c.group_rows) << what;
    EXPECT_EQ(d.groups, c.groups) << what;
    const uint32_t g = uint32_t(c.heads / c.kv_heads);
    EXPECT_EQ(d.shared, attention::AttentionDecodeShared(g, 64, d.bk, d.pad, d.group_rows, uint32_t(c.rows))) << what;
    EXPECT_LE(d.shared, hopper->max_compute_shared_memory_size) << what;
  }
  // 32 queries in a workgroup do not fit lavapipe's 32 KiB: not taken, and the reason says so.
  const auto tight = attention::SelectDecodeAttention(32, 8, 64, 2048, true, *lvp, 8, 8);
  EXPECT_EQ(tight.bk, 0u);
  EXPECT_NE(tight.why.find("and 8 of its 8 rows per workgroup: no block of 64, 32, 16 or 128 keys fits"),
            std::string::npos)
      << tight.why;
  const auto many = attention::SelectDecodeAttention(32, 8, 64, 2048, true, *hopper, 9);
  EXPECT_EQ(many.bk, 0u);
  EXPECT_NE(many.why.find("9 rows (the decode kernel takes up to 8)"), std::string::npos) << many.why;
  const auto wide = attention::SelectDecodeAttention(16, 2, 64, 2048, true, *hopper, 8, 8);
  EXPECT_EQ(wide.bk, 0u);
  EXPECT_NE(wide.why.find("8 rows per workgroup x 8 query heads per KV head (the decode kernel takes up to 32 "
                          "queries per workgroup)"),
            std::string::npos)
      << wide.why;
}

// 16-byte cache loads where an invocation's words of a key (head_dim / (2 x 128 / bk)) are whole
// vectors: 4 words for f16 caches, 2 for f32.
TEST(AttentionSelect, DecodeKernelVectorLoads) {
  EXPECT_TRUE(attention::DecodeVecLoads(64, 64, true));    // 16 words of 32 dims: 4 loads
  EXPECT_TRUE(attention::DecodeVecLoads(64, 32, true));    // 8 words
  EXPECT_TRUE(attention::DecodeVecLoads(64, 16, true));    // 4 words
  EXPECT_TRUE(attention::DecodeVecLoads(128, 64, false));  // f32: 32 words, 2 per load
  EXPECT_TRUE(attention::DecodeVecLoads(80, 64, true));    // 20 words, rows of 40
  EXPECT_FALSE(attention::DecodeVecLoads(72, 64, true));   // 18 words
  EXPECT_TRUE(attention::DecodeVecLoads(72, 64, false));   // f32: 18 words, rows of 36
  EXPECT_FALSE(attention::DecodeVecLoads(6, 128, true));   // 3 words
  EXPECT_FALSE(attention::DecodeVecLoads(2, 128, false));  // 1 word
}

// The PV step by key slices: head_dim / 2 words divide the workgroup of 128 into at least 2
// slices that divide the block, at most 8 queries, the slices' sums within the values' rows.
TEST(AttentionSelect, DecodeKernelPvSlices) {
  EXPECT_EQ(attention::DecodePvSlices(64, 64, 4, true), 4u);    // the 1b example: 16 keys a slice
  EXPECT_EQ(attention::DecodePvSlices(64, 32, 4, true), 4u);    // android-16's blocks of 32
  EXPECT_EQ(attention::DecodePvSlices(128, 64, 2, false), 2u);  // head_dim 128: 2 slices
  EXPECT_EQ(attention::DecodePvSlices(64, 64, 8, true), 4u);    // 8 queries (2 rows x 4 heads)
  EXPECT_EQ(attention::DecodePvSlices(64, 64, 16, true), 0u);   // 16 queries
  EXPECT_EQ(attention::DecodePvSlices(64, 16, 8, true), 0u);    // 4 x 8 x 32 > 16 x 33
  EXPECT_EQ(attention::DecodePvSlices(256, 64, 1, true), 0u);   // one slice of 128 words
  EXPECT_EQ(attention::DecodePvSlices(96, 64, 3, true), 0u);    // 48 words do not divide 128
  EXPECT_EQ(attention::DecodePvSlices(6, 128, 2, true), 0u);    // 3 words
  EXPECT_EQ(attention::DecodePvSlices(4, 64, 2, true), 0u);     // 64 slices: 64 x 2 x 2 > 64 x 3
  EXPECT_EQ(attention::DecodePvSlices(4, 64, 1, true), 64u);    // 64 x 1 x 2 <= 64 x 3
  EXPECT_EQ(attention::DecodePvSlices(2, 128, 1, false), 128u);  // head_dim 2: one key a slice
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
