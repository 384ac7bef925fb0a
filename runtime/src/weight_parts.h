// The weight segment in device buffers. One buffer holds the whole segment where it fits one
// allocation (maxMemoryAllocationSize, maxBufferSize, or the app's vkqc_model_options bound);
// a larger segment (a model of several GiB, a phone's smaller allocations) is held in parts, each
// a buffer of its own holding whole bindings: every dispatch's weight slice lies in one part and
// is bound there at its offset from the part's start. Pure code, tested without a device.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vkqc::rt {

struct WeightPart {
  uint64_t begin = 0, end = 0;  // bytes of the weight segment
};

// `slices`: every [offset, offset + size) the bundle's dispatches bind of the segment (any order,
// overlapping allowed). Fills `parts` (ascending, disjoint): [0, segment) where segment <= limit;
// else the bound slices merged where they overlap, grouped greedily into parts of at most `limit`
// bytes, each starting at a slice's offset (so the bundle's binding alignment holds inside it).
// Bytes no dispatch binds are in no part. False, with `why`, where one merged slice alone
// exceeds `limit`.
bool PlanWeightParts(std::vector<std::pair<uint64_t, uint64_t>> slices, uint64_t segment, uint64_t limit,
                     std::vector<WeightPart>* parts, std::string* why);

// The part holding a slice that starts at `offset` (one of the slices PlanWeightParts was given).
size_t WeightPartOf(const std::vector<WeightPart>& parts, uint64_t offset);

}  // namespace vkqc::rt
