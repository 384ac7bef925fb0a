#include "weight_parts.h"

#include <algorithm>

namespace vkqc::rt {

bool PlanWeightParts(std::vector<std::pair<uint64_t, uint64_t>> slices, uint64_t segment, uint64_t limit,
                     std::vector<WeightPart>* parts, std::string* why) {
  parts->clear();
  if (segment == 0) return true;
  if (segment <= limit) {
    parts->push_back({0, segment});
    return true;
  }
  std::sort(slices.begin(), slices.end());
  std::vector<WeightPart> merged;  // the bound bytes, overlapping slices as one
  for (const auto& [off, size] : slices) {
    if (size == 0) continue;
    if (!merged.empty() && off < merged.back().end) merged.back().end = std::max(merged.back().end, off + size);
    else merged.push_back({off, off + size});
  }
  for (const WeightPart& m : merged) {
    if (m.end - m.begin > limit) {
      *why = "weights [" + std::to_string(m.begin) + ", " + std::to_string(m.end) + ") of the bundle are bound as one range of " +
             std::to_string(m.end - m.begin) + " bytes, more than one buffer may hold on this device (" +
             std::to_string(limit) + " bytes: maxMemoryAllocationSize, maxBufferSize or the load options' max_weight_buffer_bytes)";
      return false;
    }
    if (!parts->empty() && m.end - parts->back().begin <= limit) parts->back().end = m.end;
    else parts->push_back(m);
  }
  return true;
}

size_t WeightPartOf(const std::vector<WeightPart>& parts, uint64_t offset) {
  auto it = std::upper_bound(parts.begin(), parts.end(), offset,
                             [](uint64_t o, const WeightPart& p) { return o < p.begin; });
  const size_t i = it == parts.begin() ? 0 : size_t(it - parts.begin()) - 1;
  return i;
}

}  // namespace vkqc::rt
