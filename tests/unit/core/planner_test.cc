#include <gtest/gtest.h>

#include <random>

#include "compiler/plan/planner.h"

namespace vkqc {
namespace {

void CheckPlan(const std::vector<ArenaRequest>& reqs, const ArenaPlan& plan, uint64_t align) {
  ASSERT_EQ(plan.offsets.size(), reqs.size());
  uint64_t peak = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % align, 0u);
    peak = std::max(peak, plan.offsets[i] + reqs[i].size);
    for (size_t j = i + 1; j < reqs.size(); ++j)
      EXPECT_FALSE(Conflicts(reqs[i], plan.offsets[i], reqs[j], plan.offsets[j]))
          << reqs[i].name << " overlaps " << reqs[j].name;
  }
  EXPECT_EQ(plan.size, peak) << "the plan's size is its peak";
  // Never worse than giving every buffer its own aligned slot.
  uint64_t naive = 0;
  for (const auto& r : reqs) naive += (r.size + align - 1) / align * align;
  EXPECT_LE(plan.size, naive);
}

TEST(Planner, ChainReusesMemory) {
  // a -> b -> c -> d: a and c never live together, so they may share.
  std::vector<ArenaRequest> reqs = {{"a", 1000, 0, 1}, {"b", 1000, 1, 2}, {"c", 1000, 2, 3}, {"d", 1000, 3, 4}};
  ArenaPlan plan = PlanArena(reqs, 256);
  CheckPlan(reqs, plan, 256);
  EXPECT_EQ(plan.size, 1024u + 1000u);  // two aligned slots suffice
}

TEST(Planner, OverlappingLifetimesGetDisjointRanges) {
  std::vector<ArenaRequest> reqs = {{"a", 100, 0, 5}, {"b", 300, 2, 3}, {"c", 50, 3, 9}};
  ArenaPlan plan = PlanArena(reqs, 64);
  CheckPlan(reqs, plan, 64);
}

TEST(Planner, RandomLifetimesNeverOverlap) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ArenaRequest> reqs;
    const int n = 1 + int(rng() % 30);
    for (int i = 0; i < n; ++i) {
      const uint32_t a = rng() % 40, b = a + rng() % 10;
      reqs.push_back({std::string("t").append(std::to_string(i)), 1 + rng() % 5000, a, b});
    }
    CheckPlan(reqs, PlanArena(reqs, 256), 256);
  }
}

}  // namespace
}  // namespace vkqc
