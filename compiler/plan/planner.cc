#include "compiler/plan/planner.h"

#include <algorithm>
#include <numeric>

namespace vkqc {

bool Conflicts(const ArenaRequest& a, uint64_t a_off, const ArenaRequest& b, uint64_t b_off) {
  const bool time = a.first <= b.last && b.first <= a.last;
  const bool space = a_off < b_off + b.size && b_off < a_off + a.size;
  return time && space;
}

ArenaPlan PlanArena(const std::vector<ArenaRequest>& reqs, uint64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(reqs.size(), 0);
  std::vector<size_t> order(reqs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return reqs[a].size > reqs[b].size; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    // Candidate offsets: 0 and the aligned end of every placed, time-overlapping buffer.
    std::vector<uint64_t> cands{0};
    for (size_t j : placed) {
      if (reqs[i].first <= reqs[j].last && reqs[j].first <= reqs[i].last) {
        const uint64_t end = plan.offsets[j] + reqs[j].size;
        cands.push_back((end + alignment - 1) / alignment * alignment);
      }
    }
    std::sort(cands.begin(), cands.end());
    for (uint64_t off : cands) {
      bool ok = true;
      for (size_t j : placed) {
        if (Conflicts(reqs[i], off, reqs[j], plan.offsets[j])) {
          ok = false;
          break;
        }
      }
      if (ok) {
        plan.offsets[i] = off;
        break;
      }
    }
    placed.push_back(i);
    plan.size = std::max(plan.size, plan.offsets[i] + reqs[i].size);
  }
  return plan;
}

}  // namespace vkqc
