// The runtime's plan of the weight segment in buffers (runtime/src/weight_parts.h), without a device.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/src/weight_parts.h"

namespace vkqc::rt {
namespace {

using Slices = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(WeightParts, OneBufferWhereTheSegmentFits) {
  std::vector<WeightPart> parts;
  std::string why;
  ASSERT_TRUE(PlanWeightParts({{0, 256}, {512, 1000}}, 4096, 4096, &parts, &why));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].begin, 0u);
  EXPECT_EQ(parts[0].end, 4096u) << "the whole segment, bound or not";
  ASSERT_TRUE(PlanWeightParts({}, 0, 16, &parts, &why));
  EXPECT_TRUE(parts.empty());
}

TEST(WeightParts, PartsOfWholeBindingsWithinTheLimit) {
  // Slices in any order, one repeated (two programs bind it), two overlapping (a prefetch range
  // over two layers' weights): [0,1000) [1024,1536)+[1280,2048) [2048,2560) [3072,4000).
  const Slices s = {{3072, 928}, {0, 1000}, {1280, 768}, {1024, 512}, {2048, 512}, {0, 1000}, {1024, 512}};
  std::vector<WeightPart> parts;
  std::string why;
  ASSERT_TRUE(PlanWeightParts(s, 4096, 2048, &parts, &why)) << why;
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].begin, 0u);
  EXPECT_EQ(parts[0].end, 2048u);  // [0,1000) and the merged [1024,2048): 2048 bytes
  EXPECT_EQ(parts[1].begin, 2048u);
  EXPECT_EQ(parts[1].end, 4000u);  // [2048,2560) and [3072,4000); the unbound tail is left out
  for (const auto& [off, size] : s) {
    const size_t i = WeightPartOf(parts, off);
    EXPECT_GE(off, parts[i].begin);
    EXPECT_LE(off + size, parts[i].end) << "slice at " << off << " lies in one part";
  }
  // Each merged range alone where no two fit together.
  ASSERT_TRUE(PlanWeightParts(s, 4096, 1100, &parts, &why)) << why;
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[1].begin, 1024u);
  EXPECT_EQ(parts[1].end, 2048u);
}

TEST(WeightParts, RefusedWhereOneBoundRangeExceedsTheLimit) {
  std::vector<WeightPart> parts;
  std::string why;
  EXPECT_FALSE(PlanWeightParts({{0, 256}, {256, 3000}, {1024, 3000}}, 8192, 2048, &parts, &why));
  EXPECT_NE(why.find("weights [256, 4024) of the bundle are bound as one range of 3768 bytes, more than one buffer "
                     "may hold on this device (2048 bytes"),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace vkqc::rt
