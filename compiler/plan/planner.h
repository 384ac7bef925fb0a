// Activation memory planner: places buffers with known lifetimes into one arena so that no two
// buffers live at the same time overlap. Lifetimes are inclusive step ranges (a step is a
// dispatch index). Greedy by decreasing size, lowest fitting offset (as TFLite's arena planner).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkqc {

struct ArenaRequest {
  std::string name;
  uint64_t size = 0;   // bytes, > 0
  uint32_t first = 0;  // first step that touches it
  uint32_t last = 0;   // last step that touches it (>= first)
};

struct ArenaPlan {
  std::vector<uint64_t> offsets;  // per request, multiples of the alignment
  uint64_t size = 0;              // arena bytes needed (max offset + size)
};

ArenaPlan PlanArena(const std::vector<ArenaRequest>& requests, uint64_t alignment);

// True when two requests are live at a common step and their placed ranges overlap.
bool Conflicts(const ArenaRequest& a, uint64_t a_off, const ArenaRequest& b, uint64_t b_off);

}  // namespace vkqc
