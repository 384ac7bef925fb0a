// Weight prefetch (`vkqc compile --prefetch-max-bytes B`): in programs of a few rows, the
// weights each barrier interval's dispatches read are loaded into the GPU's last-level cache by a
// prefetch dispatch (shaders/prefetch.comp) placed in the interval before, beside its dispatches.
// A decode step's intervals alternate between a GEMV streaming its weights and kernels that keep
// few of the GPU's cores busy for several microseconds (a norm's one-workgroup row kernel, the
// decode attention); the next GEMV's weight reads then start during those instead of after the
// barrier. The prefetch binds only weights (read) and a slot of its own in the compiler-owned
// sink state `vkqc.sink`, so it adds no barrier; results are bit-for-bit the same with or without.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/emit/bundle_plan.h"

namespace vkqc {

constexpr const char* kSinkStateName = "vkqc.sink";
// Prefetch dispatches per interval at most (weight ranges further apart than kPrefetchGap are
// prefetched separately); each has a sink slot of its own.
constexpr uint32_t kPrefetchMaxRanges = 4;
constexpr uint64_t kPrefetchGap = 1u << 20;
// Weight bindings smaller than this (norm weights, biases, scales of small layers) are not worth
// a prefetch on their own.
constexpr uint64_t kPrefetchMinSlice = 64u << 10;
// Programs of more rows than this take no prefetch (their GEMMs reuse each weight for many rows).
constexpr uint32_t kPrefetchMaxTokens = 16;

struct PrefetchRange {
  uint64_t offset = 0, size = 0;  // in the weight segment, offset aligned, size a multiple of 16
};

struct PrefetchSite {
  size_t barrier = 0;  // command index of the barrier it goes in front of
  uint32_t layer = 0;  // the layer of the dispatch before it (its time is measured with it)
  std::vector<PrefetchRange> ranges;  // one prefetch dispatch each
  std::vector<uint32_t> for_layers;   // the layers of the next interval whose weights these are
};

// Where prefetches go in a program's commands (InsertBarriers' output): before each barrier whose
// next interval reads weight bindings of at least kPrefetchMinSlice bytes, their ranges (merged
// within kPrefetchGap, aligned down to `align`), while the interval's total stays within
// `max_bytes` (ranges beyond it are left out). `weights_size`: the weight segment's size.
std::vector<PrefetchSite> PlanPrefetches(const std::vector<PlanCommand>& commands, uint64_t max_bytes,
                                         uint32_t align, uint64_t weights_size);

// The prefetch shader's workgroup and its 16-byte loads per invocation (all in flight at once):
// a range of B bytes takes B / 16 KiB workgroups (a 2 MiB range 128, a 20 MiB one 1280).
constexpr uint32_t kPrefetchLocal = 256;
constexpr uint32_t kPrefetchUnroll = 4;
constexpr uint32_t kPrefetchMagic = 0x9E3779B9u;
// Sink slots: one per prefetch of an interval, `slot_bytes` apart (the binding offset alignment).
inline uint64_t SinkStateBytes(uint32_t slot_bytes) { return uint64_t(kPrefetchMaxRanges) * slot_bytes; }

// Inserts the prefetch dispatches of `sites` (pipeline `pipeline`, workgroups up to `max_groups`
// along x, the sink state's index `sink_state`) into `commands`; `is_prefetch` marks the commands
// inserted.
void InsertPrefetches(std::vector<PlanCommand>& commands, const std::vector<PrefetchSite>& sites, uint32_t pipeline,
                      uint32_t max_groups, uint32_t sink_state, uint32_t slot_bytes, std::vector<bool>* is_prefetch);

}  // namespace vkqc
