#include "compiler/passes/prefetch.h"

#include <algorithm>
#include <cstring>

namespace vkqc {

std::vector<PrefetchSite> PlanPrefetches(const std::vector<PlanCommand>& commands, uint64_t max_bytes,
                                         uint32_t align, uint64_t weights_size) {
  std::vector<PrefetchSite> sites;
  if (max_bytes == 0 || align == 0) return sites;
  for (size_t b = 0; b < commands.size(); ++b) {
    if (!commands[b].is_barrier || b == 0 || commands[b - 1].is_barrier) continue;
    // The next interval's weight bindings [begin, end), each with the layer reading it; merged
    // within kPrefetchGap, each merged span keeping the layers of its bindings.
    struct Span {
      uint64_t begin = 0, end = 0;
      std::vector<uint32_t> layers;
    };
    std::vector<Span> slices;
    for (size_t c = b + 1; c < commands.size() && !commands[c].is_barrier; ++c)
      for (const PlanSlice& s : commands[c].dispatch.buffers)
        if (s.kind == SliceKind::Weights && !s.written && s.size >= kPrefetchMinSlice)
          slices.push_back({s.offset, s.offset + s.size, {commands[c].dispatch.layer}});
    if (slices.empty()) continue;
    std::sort(slices.begin(), slices.end(), [](const Span& x, const Span& y) { return x.begin < y.begin; });
    std::vector<Span> merged;
    for (Span& s : slices) {
      if (!merged.empty() && s.begin <= merged.back().end + kPrefetchGap) {
        Span& m = merged.back();
        m.end = std::max(m.end, s.end);
        for (uint32_t l : s.layers)
          if (std::find(m.layers.begin(), m.layers.end(), l) == m.layers.end()) m.layers.push_back(l);
      } else {
        merged.push_back(std::move(s));
      }
    }
    PrefetchSite site;
    site.barrier = b;
    site.layer = commands[b - 1].dispatch.layer;
    uint64_t total = 0;
    for (const Span& m : merged) {
      if (site.ranges.size() == kPrefetchMaxRanges) break;
      const uint64_t begin = m.begin / align * align;
      const uint64_t end = std::min<uint64_t>((m.end + 15) / 16 * 16, weights_size / 16 * 16);
      if (end <= begin) continue;
      if (total + (end - begin) > max_bytes) break;
      total += end - begin;
      site.ranges.push_back({begin, end - begin});
      // Only the layers of the ranges kept: the ones whose weights this site really loads.
      for (uint32_t l : m.layers)
        if (std::find(site.for_layers.begin(), site.for_layers.end(), l) == site.for_layers.end())
          site.for_layers.push_back(l);
    }
    std::sort(site.for_layers.begin(), site.for_layers.end());
    if (!site.ranges.empty()) sites.push_back(std::move(site));
  }
  return sites;
}

void InsertPrefetches(std::vector<PlanCommand>& commands, const std::vector<PrefetchSite>& sites, uint32_t pipeline,
                      uint32_t max_groups, uint32_t sink_state, uint32_t slot_bytes, std::vector<bool>* is_prefetch) {
  std::vector<PlanCommand> out;
  is_prefetch->clear();
  size_t next = 0;
  for (size_t c = 0; c < commands.size(); ++c) {
    if (next < sites.size() && sites[next].barrier == c) {
      for (size_t r = 0; r < sites[next].ranges.size(); ++r) {
        const PrefetchRange& range = sites[next].ranges[r];
        PlanCommand p;
        p.dispatch.pipeline = pipeline;
        p.dispatch.buffers = {{SliceKind::Weights, 0, range.offset, range.size, false},
                              {SliceKind::State, sink_state, uint64_t(r) * slot_bytes, 16, true}};
        const uint64_t per_group = uint64_t(kPrefetchLocal) * kPrefetchUnroll * 16;
        p.dispatch.group_count[0] =
            uint32_t(std::clamp<uint64_t>((range.size + per_group - 1) / per_group, 1, std::max<uint32_t>(max_groups, 1)));
        const uint32_t push[2] = {uint32_t(range.size / 16), kPrefetchMagic};
        p.dispatch.push.resize(sizeof push);
        std::memcpy(p.dispatch.push.data(), push, sizeof push);
        p.dispatch.layer = sites[next].layer;
        out.push_back(std::move(p));
        is_prefetch->push_back(true);
      }
      ++next;
    }
    out.push_back(std::move(commands[c]));
    is_prefetch->push_back(false);
  }
  commands = std::move(out);
}

}  // namespace vkqc
