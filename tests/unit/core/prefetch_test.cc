// Weight prefetch placement (compiler/passes/prefetch.h), without a GPU.
#include <gtest/gtest.h>

#include "compiler/emit/bundle_plan.h"
#include "compiler/passes/prefetch.h"

namespace vkqc {
namespace {

PlanDispatch D(uint32_t layer, std::vector<PlanSlice> s) {
  PlanDispatch d;
  d.layer = layer;
  d.buffers = std::move(s);
  return d;
}
PlanSlice Arena(uint64_t off, uint64_t size, bool written) { return {SliceKind::Arena, 0, off, size, written}; }
PlanSlice W(uint64_t off, uint64_t size) { return {SliceKind::Weights, 0, off, size, false}; }

constexpr uint64_t kMiB = 1u << 20;

// A decode-like chain: a norm (small weights), three GEMVs reading its output (q/k/v: weights next
// to each other), a kernel reading theirs, and a GEMV with weights far away.
std::vector<PlanDispatch> Chain() {
  return {D(0, {Arena(0, 64, false), W(0, 8192), Arena(1024, 64, true)}),                 // norm
          D(1, {Arena(1024, 64, false), W(16384, 2 * kMiB), Arena(2048, 64, true)}),      // q
          D(2, {Arena(1024, 64, false), W(16384 + 2 * kMiB, kMiB), Arena(3072, 64, true)}),  // k
          D(3, {Arena(1024, 64, false), W(16384 + 3 * kMiB, kMiB), Arena(4096, 64, true)}),  // v
          D(4, {Arena(2048, 64, false), Arena(3072, 64, false), Arena(4096, 64, false), Arena(5120, 64, true)}),
          D(5, {Arena(5120, 64, false), W(64 * kMiB, 3 * kMiB), Arena(0, 64, true)})};
}

TEST(Prefetch, OneRangePerIntervalBeforeItsBarrier) {
  std::vector<PlanCommand> cmds = InsertBarriers(Chain());
  ASSERT_EQ(cmds.size(), 9u);  // norm | q k v | attention | o
  const std::vector<PrefetchSite> sites = PlanPrefetches(cmds, 64 * kMiB, 256, 80 * kMiB);
  ASSERT_EQ(sites.size(), 2u);  // the attention's interval reads no weights
  EXPECT_EQ(sites[0].barrier, 1u);
  EXPECT_EQ(sites[0].layer, 0u);
  ASSERT_EQ(sites[0].ranges.size(), 1u);  // q, k and v merged
  EXPECT_EQ(sites[0].ranges[0].offset, 16384u);
  EXPECT_EQ(sites[0].ranges[0].size, 4 * kMiB);
  EXPECT_EQ(sites[0].for_layers, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(sites[1].layer, 4u);
  ASSERT_EQ(sites[1].ranges.size(), 1u);
  EXPECT_EQ(sites[1].ranges[0].offset, 64 * kMiB);

  std::vector<bool> is_prefetch;
  InsertPrefetches(cmds, sites, 7, 65535, 2, 256, &is_prefetch);
  ASSERT_EQ(cmds.size(), 11u);
  ASSERT_EQ(is_prefetch.size(), cmds.size());
  EXPECT_TRUE(is_prefetch[1]);
  EXPECT_TRUE(cmds[2].is_barrier);
  EXPECT_EQ(cmds[1].dispatch.pipeline, 7u);
  EXPECT_EQ(cmds[1].dispatch.layer, 0u);
  EXPECT_EQ(cmds[1].dispatch.group_count[0], 4 * kMiB / (kPrefetchLocal * kPrefetchUnroll * 16));
  EXPECT_EQ(cmds[1].dispatch.buffers[1].kind, SliceKind::State);
  EXPECT_EQ(cmds[1].dispatch.buffers[1].index, 2u);
  // The prefetches add no barrier: the same commands without them need the same barriers.
  std::vector<PlanDispatch> with;
  for (const PlanCommand& c : cmds)
    if (!c.is_barrier) with.push_back(c.dispatch);
  std::vector<PlanCommand> again = InsertBarriers(with);
  ASSERT_EQ(again.size(), cmds.size());
  for (size_t i = 0; i < cmds.size(); ++i) EXPECT_EQ(again[i].is_barrier, cmds[i].is_barrier) << i;
}

TEST(Prefetch, BudgetGapsAndSmallSlices) {
  std::vector<PlanCommand> cmds = InsertBarriers(Chain());
  // 3 MiB: the q/k/v range (4 MiB) does not fit; o_proj's 3 does.
  std::vector<PrefetchSite> sites = PlanPrefetches(cmds, 3 * kMiB, 256, 80 * kMiB);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].ranges[0].offset, 64 * kMiB);
  EXPECT_TRUE(PlanPrefetches(cmds, 0, 256, 80 * kMiB).empty());

  // Two GEMVs in one interval with weights far apart: two ranges, two sink slots, no barrier.
  std::vector<PlanDispatch> far = {D(0, {Arena(0, 64, true)}),
                                   D(1, {Arena(0, 64, false), W(0, kMiB), Arena(64, 64, true)}),
                                   D(2, {Arena(0, 64, false), W(32 * kMiB, kMiB), Arena(128, 64, true)})};
  cmds = InsertBarriers(far);
  sites = PlanPrefetches(cmds, 64 * kMiB, 256, 80 * kMiB);
  ASSERT_EQ(sites.size(), 1u);
  ASSERT_EQ(sites[0].ranges.size(), 2u);
  std::vector<bool> is_prefetch;
  InsertPrefetches(cmds, sites, 0, 65535, 0, 256, &is_prefetch);
  EXPECT_EQ(cmds[2].dispatch.buffers[1].offset, 256u);
  int barriers = 0;
  for (const PlanCommand& c : cmds) barriers += c.is_barrier;
  EXPECT_EQ(barriers, 1);
  EXPECT_EQ(sites[0].for_layers, (std::vector<uint32_t>{1, 2}));
  // A budget for the first range only: the site names only the layer whose weights it loads.
  cmds = InsertBarriers(far);
  sites = PlanPrefetches(cmds, kMiB, 256, 80 * kMiB);
  ASSERT_EQ(sites.size(), 1u);
  ASSERT_EQ(sites[0].ranges.size(), 1u);
  EXPECT_EQ(sites[0].ranges[0].offset, 0u);
  EXPECT_EQ(sites[0].for_layers, (std::vector<uint32_t>{1}));

  // Weight bindings under kPrefetchMinSlice (a norm's weight) are not prefetched.
  std::vector<PlanDispatch> small = {D(0, {Arena(0, 64, true)}),
                                     D(1, {Arena(0, 64, false), W(0, 8192), Arena(64, 64, true)})};
  EXPECT_TRUE(PlanPrefetches(InsertBarriers(small), 64 * kMiB, 256, 80 * kMiB).empty());
}

}  // namespace
}  // namespace vkqc
