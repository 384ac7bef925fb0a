// Selection for int8 convolutions (DESIGN 5): pure function of (geometry, groups, profile,
// options). Golden-tested per built-in profile in tests/unit/core/select_test.cc.
#include <sstream>

#include "compiler/kernels/conv/conv.h"

namespace vkqc::conv {

const char* ConvAlgoName(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::Pointwise: return "pointwise";
    case ConvAlgo::Im2col: return "im2col";
    case ConvAlgo::Direct: return "direct";
    case ConvAlgo::Depthwise: return "depthwise";
  }
  return "?";
}

ConvChoice SelectConv(const ConvGeometry& g, int64_t cout, int64_t groups, const TargetProfile& p,
                      const ConvSelectOptions& o) {
  ConvChoice c;
  if (groups > 1 && groups == g.c && groups == cout) {
    c.algo = ConvAlgo::Depthwise;
    c.reason = "depthwise: direct kernel, int32 accumulation per channel";
    return c;
  }
  if (groups != 1) {
    c.algo = ConvAlgo::Direct;
    c.reason = "groups=" + std::to_string(groups) + ": direct kernel, int32 accumulation (grouped im2col is not "
               "implemented)";
    return c;
  }
  if (g.pointwise()) {
    c.algo = ConvAlgo::Pointwise;
    c.reason = "1x1 stride 1: the input rows are the GEMM rows; ";
    return c;
  }
  if (o.force) {
    c.algo = *o.force == ConvAlgo::Direct ? ConvAlgo::Direct : ConvAlgo::Im2col;
    c.reason = std::string("convolution algorithm forced to ") + ConvAlgoName(c.algo) +
               (c.algo == ConvAlgo::Direct ? ": direct kernel, int32 accumulation" : "; ");
    return c;
  }
  const uint64_t pixels = uint64_t(g.oh) * uint64_t(g.ow);
  const uint32_t min_c = p.conv_im2col_min_channels, max_px = p.conv_im2col_max_pixels;
  if (min_c == 0 && max_px == 0) {
    c.algo = ConvAlgo::Im2col;
    c.reason = "im2col into packed int8 rows, then GEMM (target '" + p.name + "' always prefers im2col); ";
    return c;
  }
  std::ostringstream why;
  why << "target '" << p.name << "' uses im2col when Cin >= " << min_c << " or OH*OW <= " << max_px << "; Cin="
      << g.c << ", OH*OW=" << pixels;
  if ((min_c != 0 && uint64_t(g.c) >= min_c) || (max_px != 0 && pixels <= max_px)) {
    c.algo = ConvAlgo::Im2col;
    c.reason = why.str() + ": im2col into packed int8 rows, then GEMM; ";
  } else {
    c.algo = ConvAlgo::Direct;
    c.reason = why.str() + ": direct kernel, int32 accumulation";
  }
  return c;
}

RowsChoice SelectConvRows(int64_t m, int64_t k, int64_t n, const TargetProfile& p, const ConvSelectOptions& o) {
  RowsChoice c;
  const uint64_t macs = uint64_t(m) * uint64_t(k) * uint64_t(n);
  std::ostringstream why;
  if (o.rows) {
    c.use = *o.rows;
    why << "GEMM kernel forced to " << (c.use ? "the rows kernel" : "the linear family's");
  } else {
    c.use = macs <= kRowsMaxMacs;
    why << "M*K*N = " << macs << (c.use ? " <= " : " > ") << kRowsMaxMacs << " multiply-adds";
  }
  if (!c.use) {
    c.reason = why.str() + ": the linear family's GEMM; ";
    return c;
  }
  // Lanes per output word: at most 2 units of 16 K values each, up to 32 lanes (a power of 2 dividing the
  // workgroup), while the grid stays within kRowsMaxInvocations. One on CPU devices, where the
  // lanes' shared-memory reduction and its barrier cost more than the shorter K loop saves
  // (lavapipe: the MobileNetV2-shaped CNN's 14x14 project layer 1.24 -> 1.92 ms with 8 lanes).
  const bool cpu = HasQuirk(p, "cpu_device");
  const uint32_t wg = Workgroup(p);
  const uint64_t units = (uint64_t(k) + 15) / 16, outputs = uint64_t(m) * uint64_t((n + 3) / 4);
  while (!cpu && c.lanes < 32 && wg % (c.lanes * 2) == 0 && (units + c.lanes - 1) / c.lanes > 2 &&
         outputs * c.lanes * 2 <= kRowsMaxInvocations)
    c.lanes *= 2;
  // One lane over many output words (the large-map layers): 4 rows per invocation, each weight
  // unit loaded serving all four (H100, bench/RESULTS.md 2026-11-26: MobileNetV2's 112x112 expand
  // 11.2 -> 7.1 us, its stem 10.9 -> 9.6, the 56x56 expands 8.4 -> 6.5 / 7.0; its 112x112
  // project, 50176 words, 5.1 -> 5.9, so not below kRowsManyOutputs).
  if (c.lanes == 1 && outputs >= kRowsManyOutputs) c.rows_per_invocation = 4;
  why << ": the rows kernel, " << c.lanes << " lane(s) per 4 output channels, up to " << (units + c.lanes - 1) / c.lanes
      << " units of 16 K values each" << (cpu ? " (a CPU device: one lane)" : "");
  if (c.rows_per_invocation > 1) why << ", " << c.rows_per_invocation << " rows per invocation";
  c.reason = why.str();
  return c;
}

GatherInput SelectGather(const ConvGeometry& g, int64_t n, const RowsChoice& rows, const TargetProfile& p) {
  GatherInput c;
  c.geometry = g;
  if (!rows.use || g.pointwise() || g.k() > kGatherMaxK) return c;
  c.use = true;
  // Output words per invocation: all of a row's on CPU devices (one gather per row); one on GPUs,
  // where the gather is cheap and the invocation's serial chain of dot products is not (H100,
  // bench/RESULTS.md 2026-11-26 session 3: MobileNetV2's stem 10.4 us at one word, 13.6 / 14.0 /
  // 15.9 at 2 / 4 / 8).
  c.words = HasQuirk(p, "cpu_device") ? uint32_t((n + 3) / 4) : 1;
  std::ostringstream why;
  why << "; the rows gathered from the input by the kernel (K = " << g.k() << " <= " << kGatherMaxK << "), "
      << c.words << " output word(s) per invocation";
  c.reason = why.str();
  return c;
}

PoolInput SelectPool(int64_t pixels, int64_t k, int64_t n, const TargetProfile& p) {
  PoolInput c;
  c.pixels = pixels;
  // GPUs: one output word per workgroup, lanes splitting K with at least 4 units of 16 values
  // each (up to 32), pixel slots the rest of the workgroup (H100, MobileNetV2's last pointwise
  // layer, 49 pixels, K 320: 4 lanes 7.7 us, 2 / 8 lanes 8.1 / 8.2, 2 words of one lane 7.9 or of
  // 2 lanes 10.5; with the pool dispatch it replaces, 7.5 + 4.4). CPU devices: one lane, slots for
  // the image's pixels up to the workgroup (a power of 2), output words the rest.
  const uint32_t wg = Workgroup(p);
  const uint64_t units = (uint64_t(k) + 15) / 16, words = (uint64_t(n) + 3) / 4;
  if (!HasQuirk(p, "cpu_device")) {
    while (c.lanes < 32 && c.lanes * 2 <= wg && units >= uint64_t(c.lanes) * 8) c.lanes *= 2;
  } else {
    uint32_t slots = 1;
    while (slots < wg && slots < uint64_t(pixels)) slots *= 2;
    c.words = uint32_t(std::min<uint64_t>(wg / slots, words));
  }
  c.slots = wg / (c.lanes * c.words);
  c.use = true;
  std::ostringstream why;
  why << "; computes the global average pool that reads it: a workgroup per image and " << c.words
      << " output word(s), " << c.slots << " pixel slot(s) x " << c.lanes << " lane(s), "
      << (uint64_t(pixels) + c.slots - 1) / c.slots << " round(s)";
  c.reason = why.str();
  return c;
}

DwpwChoice SelectDwpw(int64_t k, int64_t n, const TargetProfile& p, uint32_t all_words_lane_units) {
  DwpwChoice c;
  if (HasQuirk(p, "cpu_device")) {
    c.reason = "a CPU device";
    return c;
  }
  // Lanes: at most kDwpwLaneUnits units of K each, up to 16 (32 lanes halve the output words a
  // workgroup takes and so double the slices that recompute the depthwise outputs); then as many
  // output words as the workgroup holds (a slice of them where they do not all fit), then pixels.
  // With all_words_lane_units: every output word in the workgroup, lanes only while they still fit,
  // at most that many units of K each.
  const uint32_t wg = Workgroup(p);
  const uint64_t words = (uint64_t(n) + 3) / 4, units = (uint64_t(k) + 15) / 16;
  c.workgroup = wg;
  if (all_words_lane_units) {
    while (c.lanes < 16 && c.lanes * 2 * words <= wg && (units + c.lanes - 1) / c.lanes > kDwpwLaneUnits) c.lanes *= 2;
    if (words * c.lanes > wg || (units + c.lanes - 1) / c.lanes > all_words_lane_units) {
      c.reason = "every output word in a workgroup would take more than " + std::to_string(all_words_lane_units) +
                 " units of K per lane";
      return c;
    }
  } else {
    while (c.lanes < 16 && c.lanes * 2 <= wg && (units + c.lanes - 1) / c.lanes > kDwpwLaneUnits) c.lanes *= 2;
  }
  c.words = uint32_t(std::min<uint64_t>(words, wg / c.lanes));
  c.pixels = uint32_t(wg / (uint64_t(c.words) * c.lanes));
  if ((uint64_t(c.pixels) * units + (c.lanes > 1 ? wg : 0)) * 16 > p.max_compute_shared_memory_size) {
    c.reason = "the shared memory";
    return c;
  }
  c.use = true;
  std::ostringstream why;
  why << c.pixels << " pixel(s) x " << c.words << " of " << words
      << " output words per workgroup, the pixels' depthwise outputs once per workgroup in shared memory, " << c.lanes
      << " lane(s) per 4 output channels, up to " << (units + c.lanes - 1) / c.lanes << " units of 16 K values each";
  c.reason = why.str();
  return c;
}

bool CanChain(int64_t k, int64_t n, const DwpwChoice& dw, int64_t chain_n, const TargetProfile& p, std::string* why) {
  const uint64_t words = (uint64_t(n) + 3) / 4, units = (uint64_t(k) + 15) / 16;
  if (dw.words < words) {
    *why = "its workgroups take a slice of the output words";
    return false;
  }
  const uint64_t eunits = (uint64_t(n) + 15) / 16, ewords = (uint64_t(chain_n) + 3) / 4;
  const uint64_t per_invocation = (uint64_t(dw.pixels) * ewords + dw.workgroup - 1) / dw.workgroup * eunits;
  if (per_invocation > kChainUnits) {
    *why = std::to_string(per_invocation) + " units of its K per invocation (more than " + std::to_string(kChainUnits) + ")";
    return false;
  }
  const uint64_t shared = (uint64_t(dw.pixels) * (units + eunits) + (dw.lanes > 1 ? dw.workgroup : 1)) * 16;
  if (shared > p.max_compute_shared_memory_size) {
    *why = "the shared memory";
    return false;
  }
  return true;
}

}  // namespace vkqc::conv
