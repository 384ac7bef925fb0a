// Selection rules for the linear family (DESIGN 5). Pure function of (shape, profile, options).
#include <algorithm>
#include <sstream>

#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {
namespace {

// Largest K for which int32 accumulation of (xq - zp_x) * wq cannot overflow (DESIGN 4).
constexpr int64_t kMaxExactK = 65793;
// Fewer cooperative-matrix workgroups than this leave a large GPU idle (the H100 has 132
// multiprocessors): measured, 64 blocks of 128x128 lose to 64x64 blocks, 112 win; see PlanCoopMat.
constexpr uint64_t kMinCmBlocks = 96;
// Split K (PlanCoopMat): slices until this many workgroups, at most kMaxKSplit of them, for
// batches of at most kSplitKMaxM rows.
constexpr uint64_t kSplitKBlocks = 256;
constexpr uint32_t kMaxKSplit = 8;
constexpr int64_t kSplitKMaxM = 64;
constexpr uint64_t kF16SplitKInvocations = 65536;  // fp16 operands: slices until this many invocations
// 32x32 cooperative-matrix blocks for wide grouped layers up to this many rows (PlanCoopMat).
constexpr int64_t kSmallBlocksMaxM = 32;
// 16x64 blocks of at least kMinCmBlocks (wide layers, up to 16 rows): K slices of about this many
// values. H100 dq8ca x q4gsw, M = 9 / 16, us (bench/RESULTS.md 2026-11-27 session 5): 4096x14336 g32
// (224 blocks) 32x32 blocks 47.3 / 54.0, 16x64 with 2 slices 43.1 / 45.3 (4: 48.4 / 51.1), g128
// 40.7 / 43.4 -> 40.1 / 43.1; 8192x28672 g32 (448 blocks) one slice 144.2 / 145.6, 2: 150.5 /
// 153.2, 4: 132.6 / 136.8.
constexpr int64_t kRowTileSliceK = 2048;
constexpr uint64_t kInt8SmallBatchBlocks = 128;  // q8csw on the int8 path: 32x32 blocks below this many

uint32_t FloorPow2(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}


// The profile's cooperative-matrix shape with operands `ab`, accumulator and result `acc` and
// K = k, preferring 16 x 16 outputs, then 16 x 8; null when it lists none.
const CoopMatShape* FindCoopMatShape(const TargetProfile& p, const std::string& ab, const std::string& acc,
                                     uint32_t k) {
  for (uint32_t n : {16u, 8u})
    for (const auto& cs : p.coopmat_shapes)
      if (cs.m == 16 && cs.n == n && cs.k == k && cs.a_type == ab && cs.b_type == ab && cs.c_type == acc &&
          cs.result_type == acc)
        return &cs;
  return nullptr;
}

// Plans the cooperative-matrix GEMM (shaders/linear_coopmat.comp) of this layer on `p` into c's
// cm_* fields; returns why it cannot run it ("" = it can). Does not look at the options that
// decide whether it should.
std::string PlanCoopMat(const LinearShape& s, const TargetProfile& p, const SelectOptions& o, LinearChoice& c) {
  if (s.conv) return "convolutions use the tiled GEMM";
  // VK_KHR_cooperative_matrix where the target has it (the kernel is written against the NV GLSL
  // extension, the only one Debian 12's glslang compiles, and its module translated: shaderlib's
  // coopmat_khr.h); the sidecar's coopmat_shapes are the KHR list. Otherwise VK_NV_cooperative_matrix.
  const bool khr = p.cooperative_matrix && p.HasExtension("VK_KHR_cooperative_matrix") && !o.cm_nv;
  if (!khr && !p.HasExtension("VK_NV_cooperative_matrix"))
    return "'" + p.name + "' lacks VK_KHR_cooperative_matrix" +
           (o.cm_nv ? std::string(" use (NV forced) and VK_NV_cooperative_matrix") : " and VK_NV_cooperative_matrix");
  if (HasQuirk(p, "coopmat_unreliable")) return "'" + p.name + "' has the quirk coopmat_unreliable";
  const bool int8 = s.Quantized();
  // NVIDIA's driver lists no integer types for VK_NV_cooperative_matrix (fp16 only; its integer
  // shapes are KHR-only). On the H100 NV int8 kernels computed exact results but the validation
  // layer rejects the matrix types, so they are off-spec there: NV int8 needs the sidecar quirk
  // nv_coopmat_int8 (a device whose NV list has sint8 -> sint32).
  if (int8 && !khr && !HasQuirk(p, "nv_coopmat_int8"))
    return "'" + p.name + "' has no VK_KHR_cooperative_matrix" + (o.cm_nv ? std::string(" use (NV forced)") : "") +
           ", and NVIDIA lists no int8 types for VK_NV_cooperative_matrix (sidecar quirk nv_coopmat_int8 declares a "
           "device that does)";
  if (int8 && !p.shader_int8) return "'" + p.name + "' lacks shaderInt8 (int8 matrix operands)";
  if (!int8 && !p.shader_float16) return "'" + p.name + "' lacks shaderFloat16 (fp16 matrix operands)";
  const CoopMatShape* cs = int8 ? FindCoopMatShape(p, "sint8", "sint32", 32) : FindCoopMatShape(p, "float16", "float32", 16);
  if (!cs)
    return std::string("'") + p.name + "' lists no " +
           (int8 ? "sint8 x sint8 -> sint32 16x16x32 or 16x8x32" : "float16 x float16 -> float32 16x16x16 or 16x8x16") +
           " cooperative-matrix shape";
  if (int8 && s.k > kMaxExactK)
    return "K=" + std::to_string(s.k) + " exceeds the exact int32 range";
  if (int8 && s.weights == ir::Scheme::Q4GMW)
    return "q4gmw's per-group minimum needs each row's activation sum per group, which the int8 cooperative-matrix "
           "kernel does not compute (the tiled GEMM does)";
  // (At most 256: the kernel's per-group fold is exact for int32 group sums up to 2^22 = 256 * 128 * 128.)
  if (int8 && s.Grouped() && (s.group_size % 32 != 0 || s.group_size > 256))
    return std::string(s.Int4() ? "int4" : "int8") + " group size " + std::to_string(s.group_size) +
           " is not a multiple of 32 up to 256 (int32 accumulation per group)";
  const uint32_t sg = p.tuned_subgroup_size ? p.tuned_subgroup_size : p.subgroup_size;
  if (sg == 0) return "'" + p.name + "' does not state its subgroup size";
  if ((p.min_subgroup_size && sg < p.min_subgroup_size) || (p.max_subgroup_size && sg > p.max_subgroup_size))
    return "subgroup size " + std::to_string(sg) + " is outside the target's range";
  c.accum = Accum::CoopMat;
  c.algo = Algo::Gemm;
  c.cm_int8 = int8;
  c.cm_khr = khr;
  c.cm_m = cs->m;
  c.cm_n = cs->n;
  c.cm_k = cs->k;
  c.cm_sg = sg;
  // Pinning guarantees the subgroup layout the tiles assume; otherwise the default size is it.
  c.cm_pin_subgroup = p.subgroup_size_control && p.required_subgroup_size_compute && p.compute_full_subgroups;
  if (!c.cm_pin_subgroup && p.subgroup_size != sg)
    return "subgroup size " + std::to_string(sg) + " cannot be pinned on '" + p.name + "'";
  // Defaults from bench/coopmat_sweep.sh on the H100 (4096x14336; bench/RESULTS.md):
  // int8 operands: 2x4 subgroups of 4x2 tiles, 32 words (128 int8) of K per step: 331 TOPS at
  // M=512, 281 at M=128 (16 words: 222, 196); int4 weights too (groups of 128: 849 vs 930 us,
  // session 4). fp16 operands: 4x4 subgroups of 2x2 tiles with two operand buffers (below; one
  // buffer: 4x4 of 2x4, a 128x256 block, 109 TFLOPS at M=512, 4x4 of 2x2: 88; 2x4 of 4x2: 58).
  // Blocks of 128x256 for int8 were slower (191 us against 183).
  // Grouped weights on the int8 path (int4, q8gsw; issue 15, H100 4096x14336 M=512): 4x4
  // subgroups of 2x2 tiles, 32 words: groups of 32 388 us = 155 TOPS, 128: 316 us (2x4 of 4x2:
  // 460 / 392; each MulAdd's per-group fold keeps 2x2 tiles' registers cheaper).
  // From M = 256 on, grouped weights take 8x2 subgroups (a 256x64 block): each workgroup unpacks
  // and folds half the weight columns per step for twice the rows (H100, M = 512, groups of 32:
  // 4096x14336 391.8 -> 365.8 us = 164 TOPS, 8192x28672 1310 -> 1272; groups of 128: 318.3 ->
  // 298.6, 1081 -> 1032; 2026-11-26 session 4). int8 weights keep 2x4 (189.5 vs 180.5 us), fp16
  // operands 4x4 (652 vs 498 us). Below M = 256 the block's rows would be padding: 4x4 stays.
  const bool grouped8 = int8 && s.Grouped();
  const bool tall = grouped8 && s.m >= 256 && !o.cm_wm && !o.cm_wn && !o.cm_tm && !o.cm_tn;
  c.cm_wm = o.cm_wm ? o.cm_wm : int8 && !grouped8 ? 2 : tall ? 8 : 4;
  c.cm_wn = o.cm_wn ? o.cm_wn : tall ? 2 : 4;
  // fp16 operands with int8 weights (q8csw, q8gsw) from M = 256 on: 4x4 subgroups of 4x2 tiles (a
  // 256x128 block, one operand buffer): each workgroup dequantizes its weight block for twice the
  // rows (H100, M = 512 / 256, 4096x14336 q8csw: 539.9 -> 481.2 us, 282.9 -> 235.2; 8192x28672
  // 1909.5 -> 1888.7; bench/RESULTS.md 2026-11-27 session 2). Not for int4 weights: 8192x28672
  // q4gsw 1601.7 -> 1745.4 at M = 512.
  const bool f16_tall = !int8 && !s.Int4() && s.m >= 256 && !o.cm_wm && !o.cm_wn && !o.cm_tm && !o.cm_tn;
  const uint32_t tm_max = (int8 && !grouped8) || f16_tall ? 4 : 2;
  c.cm_tm = o.cm_tm ? o.cm_tm : std::min(tm_max, s.m <= 32 ? 1u : s.m <= 64 ? 2u : 4u);  // small M: short blocks
  c.cm_tn = o.cm_tn ? o.cm_tn : 32 / c.cm_n;  // 32 columns per subgroup
  c.cm_bkw = o.cm_bkw ? o.cm_bkw : int8 ? 32 : 16;  // 128 / 64 bytes of K per step
  const uint32_t lkw = c.cm_k / (int8 ? 4 : 2);                   // shared words per MulAdd
  if (c.cm_bkw % 4 || c.cm_bkw % lkw || lkw % 4)
    return "K step of " + std::to_string(c.cm_bkw) + " words does not fit the " + std::to_string(c.cm_k) +
           "-deep matrix shape";
  // Small grids, grouped weights on the int8 path (H100, dq8ca x q4gsw g32, bench/RESULTS.md
  // 2026-11-25 "small grids"): each workgroup's K loop is latency-bound, so a 128x128 block that
  // leaves fewer than kMinCmBlocks workgroups loses to 64x64 blocks (16 subgroups of one tile
  // each): K x N 2048x512 M=128 (4 blocks) 51.1 -> 28.5 us, 2048x2048 M=512 (64) 51.9 -> 40.9,
  // 8192x2048 M=512 (64) 182.7 -> 137.5, 14336x4096 M=128 (32) 313.8 -> 150.0; with 112 blocks
  // (4096x14336 M=128: 107.3 vs 132.3) and more (2048x8192 M=512, 256: 103.4 vs 136.3) the large
  // block stays ahead.
  // Batches of up to 32 rows of wide layers take 32x32 blocks (4 subgroups of one tile) where the
  // columns alone give kSplitKBlocks of them: 4096x14336 M = 16 / 32 72.7 / 68.9 -> 52.4 / 55.5
  // us, 8192x28672 M = 16 268 -> 210 (bench/RESULTS.md 2026-11-26 session 4); at M = 64 they lost
  // (99.0 -> 105.7, 379 -> 413). Narrower layers (14336x4096: 128 column blocks, 129.8 us at
  // M = 16, each workgroup's K loop 112 steps) take the rules below, K slices included.
  const auto blocks_of = [&](uint32_t bm, uint32_t bn) {
    return uint64_t((s.m + bm - 1) / bm) * uint64_t((s.n + bn - 1) / bn);
  };
  // From 33 to 64 rows, 64x64 blocks (4x4 subgroups of one tile) instead of 128x128 half padding:
  // M = 48 / 64 4096x14336 95.0 / 99.5 -> 70.0 / 73.5 us, 8192x28672 340.5 / 377.7 -> 236.7 /
  // 241.1 (64x128: 76.5 / 78.5, 269.7 / 271.2; 2x4 subgroups of 2x1 tiles: 72.4 / 75.2).
  const bool no_tile = !o.cm_wm && !o.cm_wn && !o.cm_tm && !o.cm_tn;
  // Batches of up to one matrix row tile (16 rows) of the narrower layers take 16x64 blocks (1x4
  // subgroups of one tile: no padding rows), K split by the rule below. H100 dq8ca x q4gsw g32,
  // M = 9 / 16, us (bench/RESULTS.md 2026-11-27 session 3), 64x64 blocks -> 16x64: 14336x4096
  // (64 blocks, 4 slices) 68.2 / 69.9 -> 57.7 / 59.3, 8192x2048 (32 blocks, 8 slices) 27.8 /
  // 27.8 -> 22.1 / 22.7, 4096x4096 27.4 / 27.7 -> 21.7 / 22.1, 2048x2048 16.6 / 16.6 -> 14.4 /
  // 14.6; the 1b example's 16-token step 1891.5 -> 1842.3. Wide layers of K < 4096 keep 32x32
  // blocks; those of K >= 4096 take 16x64 blocks with K slices of kRowTileSliceK (4096x14336 at
  // M = 16: 32x32 54.0 us, 16x64 unsplit 52.8 in session 3, with 2 slices 45.3; session 5). These
  // blocks take 16 words (64 K values) per step, and so do wide layers of K >= 8192 up to 16 rows:
  // M = 16, 32 words -> 16:
  // 8192x28672 (448 blocks, no K slices; 32x32 blocks of 32 words: 208.2) 236.3 -> 144.9, M = 9
  // 144.8 (200.0); 14336x4096 60.7 -> 55.6; the split layers within 0.5 us (8192x2048 22.0 /
  // 22.5, 2048x2048 14.8 / 14.8, 4096x4096 21.8 / 22.1).
  // fp16 operands up to one matrix row tile (16 rows) take 32x32 blocks too, instead of 128x128
  // of which 7/8 of the rows are padding. H100, M = 8 / 16, us (bench/RESULTS.md 2026-11-27
  // session 3): float x q4gsw 4096x14336 84.7 / 91.4 -> 72.1 / 76.2, 14336x4096 293.1 / 300.7 ->
  // 191.2 / 202.2; float x q8csw 4096x14336 M = 16 115.9 -> 94.1 (16x64 blocks: 88.5-134.8;
  // 64x64: 99.8-125.8).
  const bool short_rows = no_tile && s.m <= int64_t(c.cm_m);
  bool row_tile = false;  // 16x64 blocks (below: all kMaxKSplit K slices where the blocks are few)
  const bool wide_small = grouped8 && no_tile && s.m <= kSmallBlocksMaxM &&
                          blocks_of(s.m, 2 * c.cm_n) >= kSplitKBlocks && !(short_rows && s.k >= 4096);
  const auto one_tile_each = [&](uint32_t wm, uint32_t wn) {  // WM x WN subgroups of one tile
    c.cm_wm = wm;
    c.cm_wn = wn;
    c.cm_tm = c.cm_tn = 1;
  };
  if (wide_small || (!int8 && short_rows)) {
    one_tile_each(2, 2);
  } else if (grouped8 && short_rows) {
    one_tile_each(1, 4);
    if (!o.cm_bkw) c.cm_bkw = 16;
    row_tile = true;
  } else if (grouped8 && no_tile && s.m > kSmallBlocksMaxM && s.m <= kSplitKMaxM) {
    one_tile_each(4, 4);
  } else if (int8 && !grouped8 && no_tile) {
    // int8 weights on the int8 path (q8csw; 2x4 subgroups of 4x2 tiles by default): batches of up
    // to 32 rows take 32x32 blocks where the default leaves fewer than kInt8SmallBatchBlocks
    // workgroups, larger ones 64x64 and then 32x32 blocks while it leaves fewer than
    // kMinCmBlocks. H100 dq8ca x q8csw, us (bench/RESULTS.md 2026-11-27 session 5), M = 16 / 32 /
    // 64 / 128 / 512, default -> chosen: 8192x2048 (16 blocks at M <= 128) 44.4 / 44.9 / 57.3 /
    // 80.7 / 90.6 -> 28.4 (the GEMV) / 32.4 / 32.5 / 34.1 / 83.9; 14336x4096 (32) 100.2 / 101.2 /
    // 106.9 / 127.6 -> 70.1 (GEMV) / 86.8 / 88.5 / 97.4; 2048x2048 19.3 / 19.5 / 24.4 / 34.0 /
    // 34.4 -> 15.9 / 15.2 / 15.1 / 15.9 / 27.0; 2048x512 at 128 / 512 33.5 / 34.5 -> 15.2 / 16.7;
    // 4096x14336 (112 blocks) at M = 8 / 16 / 32 43.8 / 44.7 / 45.6 -> 40.5 / 40.9 / 42.0, from 64
    // rows the default kept (M = 64 / 128: 49.3 / 58.1; 32x32: 62.9 / 93.5; 64x64: 46.4 / 79.0);
    // 8192x28672 (224 blocks) lost with 32x32 at M = 8-32 (110.3-112.3 -> 125.2-129.3): default.
    const uint64_t blocks = blocks_of(c.CmBlockM(), c.CmBlockN());
    if (s.m <= kSmallBlocksMaxM ? blocks < kInt8SmallBatchBlocks : blocks < kMinCmBlocks) {
      const uint32_t w = s.m > kSmallBlocksMaxM && blocks_of(64, 64) >= kMinCmBlocks ? 4 : 2;
      one_tile_each(w, w);
    }
  } else if (grouped8 && !o.cm_tm && !o.cm_tn) {
    const uint64_t blocks = blocks_of(c.CmBlockM(), c.CmBlockN());
    if (blocks < kMinCmBlocks) {
      c.cm_tm = c.cm_tn = 1;
      if (!o.cm_wm) c.cm_wm = 4;  // the 64x64 block measured (also where the tall block gave too few)
      if (!o.cm_wn) c.cm_wn = 4;
    }
  }
  // Two shared operand buffers (one barrier per step) for fp16 operands: 4x4 subgroups of 2x2
  // tiles, 16 words, 120.6 TFLOPS at M = 512 (4096x14336 q4gsw; one buffer: 92.8; the previous
  // default, 2x4 tiles of one buffer: 112.3). Not for int8 operands, where they lost (groups of 32:
  // 471.9 vs 439.4 us at 16 words, against 391.7 for one buffer of 32 words; bench/RESULTS.md
  // 2026-11-26 session 3).
  // Chunk slots of the group scales: one step's (and its group's), twice with two buffers (two
  // steps' chunks live at once).
  uint32_t slots = 0;
  if (int8 && s.Grouped()) {
    const uint32_t cps = c.cm_bkw / 8, gc = uint32_t(s.group_size) / 32;  // 32-value chunks
    slots = (gc % cps == 0 || cps % gc == 0) ? std::max(gc, cps) : gc + cps;
  }
  auto set_stages = [&](uint32_t stages) {
    c.cm_stages = stages;
    c.cm_nslot = slots * stages;
  };
  set_stages(o.cm_stages ? o.cm_stages : int8 || f16_tall ? 1 : 2);
  if (c.cm_stages != 1 && c.cm_stages != 2) return "shared operand buffers must be 1 or 2";
  // Fit the target: one operand buffer, then the square block, then fewer tiles per subgroup, then
  // fewer subgroups.
  const uint32_t inv = std::min(p.max_compute_work_group_invocations, p.max_compute_work_group_size[0]);
  while (c.SharedMemoryBytes() > p.max_compute_shared_memory_size || c.Invocations() > inv) {
    if (c.cm_stages > 1) set_stages(1);
    else if (tall && c.cm_wm == 8 && c.cm_wn == 2) c.cm_wm = c.cm_wn = 4;  // the 128x128 block first
    else if (c.cm_tm > 1) c.cm_tm /= 2;
    else if (c.cm_tn > 1) c.cm_tn /= 2;
    else if (c.cm_wn > 1) c.cm_wn /= 2;
    else if (c.cm_wm > 1) c.cm_wm /= 2;
    else return "no cooperative-matrix tile fits the target's shared memory / invocation limits";
  }
  if (uint64_t((s.m + c.CmBlockM() - 1) / c.CmBlockM()) > p.max_compute_work_group_count[0] ||
      uint64_t((s.n + c.CmBlockN() - 1) / c.CmBlockN()) > p.max_compute_work_group_count[1])
    return "too many workgroups for the target's workgroup count limits";
  // Split K where even the small blocks leave fewer than kMinCmBlocks workgroups (grouped weights
  // on the int8 path): each workgroup's K loop is latency-bound, so K slices of whole steps and
  // groups run side by side (up to kSplitKBlocks workgroups, at most kMaxKSplit slices) and a
  // second dispatch adds their partial outputs.
  c.cm_ksplit = 1;
  c.cm_kslice = 0;
  // Partial outputs add up on grouped int8-path weights (each slice folds its own groups and
  // zero-point term) and on fp16 operands (fp32 sums of exact products); not on q8csw's int32 path.
  if (o.cm_ksplit > 1 && int8 && !grouped8)
    return "split K needs grouped weights on the int8 path (int4, q8gsw with quantized activations) or fp16 "
           "operands (--allow-fp16)";
  // Grouped int8-path layers of K < 8192 split only up to 64 rows: at the 1b example's prefill
  // (M = 512) its 2048x512 layers ran faster apart (23.9 -> 17.7 us) but the step took 10.10 ->
  // 10.62 ms, their slices and sums no longer overlapping the q projection.
  // fp16 operands up to 64 rows on layers of K >= 8192: K slices until kF16SplitKInvocations
  // invocations (512 workgroups of the 32x32 blocks up to 16 rows, 128 of the 512-invocation
  // blocks from 17 rows), at most kMaxKSplit. H100 (bench/RESULTS.md 2026-11-27 session 4), us:
  // M = 8 / 16, float x q4gsw 14336x4096 (128 blocks of 32x32, 4 slices) 189.1 / 203.2 -> 73.1 /
  // 74.9 (8 slices: 74.3 / 77.6; 16x64 blocks, 4 / 8 slices: 86.0 / 91.8 at M = 8); float x q8csw
  // 14336x4096 281.6 / 284.9 -> 87.7 / 89.5; float x q4gsw 8192x2048 (64 blocks, 8 slices) 92.5 /
  // 99.1 -> 26.1 / 26.8 (4 slices: 35.5 / 36.4). M = 17 / 64: float x q4gsw 14336x4096 (32
  // blocks, 4 slices) 298.4 / 364.6 -> 84.8 / 108.1 (8: 89.8 / 113.4); 8192x2048 (16 blocks, 8
  // slices; the GEMV there: 137.4 / 339.4) 152.7 / 191.5 -> 29.3 / 36.1 (4: 47.2 / 57.7); float x
  // q8csw 14336x4096 387.6 / 441.1 -> 106.9 / 128.5. Wide layers of K = 4096 lost with slices
  // (4096x14336, 448 blocks, M = 8 / 16: 70.8 / 77.1 without, 79.1 / 85.1 with 8, 81.1 / 87.1
  // with 4); shorter narrow layers are not measured.
  // Above 64 rows, layers of K >= 8192 only: their grids stay small while each workgroup's K loop
  // is long. H100, M = 65 / 128 / 256, us (bench/RESULTS.md 2026-11-27 session 5): dq8ca x q4gsw
  // g32 8192x2048 (64x64 blocks: 64 of them up to 128 rows, 4 slices; 128 at 256, 2) 77.4 / 79.2 /
  // 81.6 -> 43.8 / 46.1 / 78.8; 14336x4096 (128 blocks, 2 slices) 144.4 / 148.7 -> 126.2 / 129.5,
  // at 256 rows (256 blocks) unsplit; float x q4gsw (fp16, 128x128 blocks, the invocation rule)
  // 8192x2048 192.4 / 204.8 / 205.8 -> 35.9 / 39.3 / 70.9 (8, 8, 4 slices), 14336x4096 369.1 /
  // 393.0 / 394.3 -> 107.9 / 117.6 / 217.3 (4, 4, 2). K = 4096 gained nothing (4096x4096, 128
  // blocks at M = 65 / 128: 44.3 / 45.2 unsplit, 44.0 / 46.8 with 2 slices), nor the int8 path's
  // 256x64 blocks (2 slices, us: 14336x4096 M = 512 g32 322.3 -> 351.0, g128 264.7 -> 276.4;
  // 8192x2048 M = 1024 199.6 -> 222.0). fp16 at M = 512: float x q4gsw 8192x2048 223.7 -> 134.5
  // (2 slices), float x q8csw 14336x4096 804.3 -> 423.5 (2); unsplit from 1024 rows. The 1b
  // example's 128-token program (its 8192x2048 down_proj: 4 slices) 3792 -> 3177 us; 512 unchanged.
  const bool long_k = s.k >= 8192;
  const bool auto_split =
      o.cm_ksplit == 0 && (grouped8 ? s.m <= kSplitKMaxM || (long_k && c.CmBlockM() <= 64) : no_tile && long_k);
  if ((grouped8 || !int8) && (o.cm_ksplit > 1 || auto_split)) {
    const uint64_t blocks = blocks_of(c.CmBlockM(), c.CmBlockN());
    const uint32_t bk = c.cm_bkw * (int8 ? 4 : 2), gs = s.Grouped() ? uint32_t(s.group_size) : bk;
    uint32_t unit = bk;  // whole steps and whole groups: the least common multiple
    while (unit % gs) unit += bk;
    const uint32_t units = uint32_t((s.k + unit - 1) / unit);
    // 16x64 blocks (at most 16 rows) take all kMaxKSplit slices where they are few: each slice's
    // K loop is what holds the time. H100 dq8ca x q4gsw, M = 9 / 16, 4 -> 8 slices, us
    // (bench/RESULTS.md 2026-11-27 session 4): 14336x4096 (64 blocks) g32 52.6 / 56.6 -> 42.6 /
    // 43.0 (6 slices: 46.2 / 47.2), g128 48.8 / 52.6 -> 38.6 / 38.8; 4096x4096 22.1 / 22.1 ->
    // 19.9 / 20.5. Larger blocks keep slices up to kSplitKBlocks workgroups (8 lost to 4 on
    // 14336x4096's 64x64 blocks at M = 16-64, 2026-11-26 session 4).
    uint32_t want = o.cm_ksplit ? o.cm_ksplit
                    : !int8 ? uint32_t(std::min<uint64_t>(kMaxKSplit, kF16SplitKInvocations / (blocks * c.Invocations())))
                    : row_tile ? (blocks < kMinCmBlocks ? kMaxKSplit
                                                        : uint32_t(std::min<int64_t>(kMaxKSplit, (s.k + kRowTileSliceK - 1) / kRowTileSliceK)))
                    : blocks >= (s.m > kSplitKMaxM ? kSplitKBlocks : kMinCmBlocks) ? 1
                               : uint32_t(std::min<uint64_t>(kMaxKSplit, (kSplitKBlocks + blocks - 1) / blocks));
    want = std::min(want, units);
    if (want > 1) {
      c.cm_kslice = ((units + want - 1) / want) * unit;
      c.cm_ksplit = uint32_t((s.k + c.cm_kslice - 1) / c.cm_kslice);
      if (c.cm_ksplit > p.max_compute_work_group_count[2]) return "too many K slices for the target's workgroup count limits";
    }
  }
  return "";
}

std::string CoopMatSummary(const LinearShape& s, const TargetProfile& p, const LinearChoice& c) {
  std::ostringstream o;
  o << "cooperative matrix on '" << p.name << "' (" << (c.cm_khr ? "VK_KHR" : "VK_NV") << "_cooperative_matrix, "
    << (c.cm_int8 ? "sint8 " : "float16 ") << c.cm_m << "x" << c.cm_n << "x" << c.cm_k << " -> "
    << (c.cm_int8 ? "sint32" : "float32") << "): ";
  if (c.cm_int8)
    o << "int8 operands, int32 accumulation" << (s.Grouped() ? " per group, folded into fp32 at each group" : "");
  else
    o << "fp16 operands (activations and dequantized weights rounded to fp16), fp32 accumulation";
  return o.str();
}

Status ChooseAccum(const LinearShape& s, const TargetProfile& p, const SelectOptions& o,
                   LinearChoice& c) {
  const bool quantized = s.Quantized();
  if (o.force_accum && *o.force_accum == Accum::IntDot && !quantized) {
    c.accum = Accum::Dequant;
    c.reason = "float activations (weight-only): int-dot forcing does not apply, dequantize in the shader";
    return {};
  }
  if (o.force_accum) {
    if (*o.force_accum == Accum::IntDot) {
      if (!p.shader_integer_dot_product)
        return UserError("int-dot accumulation was forced, but target '" + p.name +
                         "' lacks the shaderIntegerDotProduct feature");
      if (s.k > kMaxExactK)
        return UserError("int-dot accumulation was forced, but K=" + std::to_string(s.k) +
                         " exceeds " + std::to_string(kMaxExactK) + " (int32 accumulation would overflow)");
    }
    c.accum = *o.force_accum;
    c.reason = std::string("accumulation forced to ") + AccumName(c.accum);
    return {};
  }
  const bool accel = p.shader_integer_dot_product && p.int_dot_4x8_packed_signed_accelerated;
  if (!quantized) {
    c.accum = Accum::Dequant;
    c.reason = "float activations (weight-only): dequantize weights in the shader, fp32 accumulation";
  } else if (!accel) {
    c.accum = Accum::Dequant;
    c.reason = std::string("integer dot product ") +
               (p.shader_integer_dot_product ? "is not accelerated" : "is not supported") + " on '" + p.name +
               "' (integerDotProduct4x8BitPackedSignedAccelerated=false): dequant fallback, " +
               (s.x_int8 ? "the int8 input is dequantized as it is read"
                         : "activation quantization skipped (weight-only function)");
  } else if (s.k > kMaxExactK) {
    c.accum = Accum::Dequant;
    c.reason = "K=" + std::to_string(s.k) + " exceeds the exact int32 range: dequant fallback";
  } else {
    c.accum = Accum::IntDot;
    c.reason = "int8 dot product is accelerated on '" + p.name + "': int32 accumulation" +
               (s.Grouped() ? " per group, folded into fp32 at each group" : "");
  }
  return {};
}

// The GEMV's largest workgroup on the target (a power of two).
uint32_t GemvMaxThreads(const TargetProfile& p) {
  return FloorPow2(std::min(p.max_compute_work_group_invocations, p.max_compute_work_group_size[0]));
}

// The GEMV's threads where no profile value is given: up to 128, halved while half of them would
// still have a 16-byte unit each (down to 32).
uint32_t RuleGemvThreads(uint32_t k16, uint32_t max_threads) {
  uint32_t t = std::min(128u, max_threads);
  while (t > 32 && t / 2 >= k16) t /= 2;
  return t;
}

}  // namespace

bool OneRowIntDotOnGpu(const LinearShape& s, const TargetProfile& p, const LinearChoice& c) {
  return c.algo == Algo::Gemv && s.m == 1 && c.accum == Accum::IntDot && !s.out_q8 && !HasQuirk(p, "cpu_device");
}

// Eight rows of an int4 x int8 GEMV on a GPU (the int-dot path, groups of a multiple of 32): two
// row blocks of 4 side by side (LinearChoice::row_blocks). The eight-row GEMV's per-row work, not
// its weight stream, held its time; two workgroups of 4 rows per channel block, launched together,
// read the weights from memory once (the second from the L2) and each runs the 4-row kernel.
// H100, dq8ca x q4gsw g32, us, 8 rows -> 2 x 4 (bench/RESULTS.md 2026-12-07 session 24):
// 8192x2048 22.24 -> 18.91, 8192x28672 120.67 -> 113.34, 14336x4096 39.33-42.02 -> 37.54 (without
// the next-batch prefetch; 39.71 with it); the GEMV at 8 rows of the wide short-K layers, which took
// the cooperative matrix (42.82 / 22.75), 4096x14336 46.21 -> 39.23 and 2048x8192 24.48 -> 19.07;
// the 1b example's 8-token step 1760 -> 1589 us, with its gate/up pair on the GEMV too 1519 (the
// landed rule, another call: 1757 -> 1483; hopper-tree 1795 -> 1539). At 2 and 4 rows two blocks
// lost on every shape but 8192x2048 at M = 2; at 5-7 rows mixed (8192x2048 M = 6 / 7 17.92 /
// 20.77 -> 16.16 / 18.56, 14336x4096 M = 5 / 7 30.27 / 36.22 -> 32.06 / 37.47).
namespace {
bool TwoRowBlocks(const LinearShape& s, const TargetProfile& p, Accum accum) {
  return s.m == 8 && accum == Accum::IntDot && s.Int4() && s.group_size > 0 && s.group_size % 32 == 0 &&
         !HasQuirk(p, "cpu_device");
}
}  // namespace

LinearChoice ForRowPrologue(const LinearShape& s, const TargetProfile& p, LinearChoice c) {
  // Every workgroup quantizes the row before its weights arrive, so on long rows fewer workgroups
  // with more threads each: H100, the 1b example's down_proj (K 8192, N 2048) per layer summed
  // over the decode step (bench/RESULTS.md 2026-11-27 session 6): 256 threads x 4 channels 160.3 us,
  // 128 x 4 177.3, 128 x 2 190.8. At K = 2048 (o_proj) the one-row rule's 2 channels stay (112.2
  // against 116.7 with 4).
  if (!OneRowIntDotOnGpu(s, p, c) || s.k < kRowPrologueLongK) return c;
  // At least the one-row rule's threads, both powers of two: a pinned subgroup size still divides them.
  c.threads = std::min(kRowPrologueThreads, GemvMaxThreads(p));
  c.nr = std::max(c.nr, std::min<uint32_t>(4, uint32_t(s.n)));
  c.unroll = 1;
  c.reason += "; the row quantized in every workgroup: " + std::to_string(c.threads) + " threads x " +
              std::to_string(c.nr) + " channels, 1 unit in flight";
  return c;
}

Result<LinearChoice> SelectLinear(const LinearShape& s, const TargetProfile& p,
                                  const SelectOptions& o) {
  LinearChoice c;
  c.int4 = s.Grouped();
  c.mins = s.weights == ir::Scheme::Q4GMW;
  if (o.force_accum && *o.force_accum == Accum::CoopMat) {
    const std::string no = PlanCoopMat(s, p, o, c);
    if (!no.empty()) return UserError("cooperative-matrix accumulation was forced, but " + no);
    c.accum = Accum::CoopMat;
    c.algo = Algo::Gemm;
    std::ostringstream why;
    why << "accumulation forced to cm: " << CoopMatSummary(s, p, c) << "; block " << c.CmBlockM() << "x"
        << c.CmBlockN() << ", " << c.cm_wm * c.cm_wn << " subgroups";
    c.reason = why.str();
    return c;
  }
  VKQC_TRY(ChooseAccum(s, p, o, c));

  uint32_t gemv_max = o.gemv_max_m ? o.gemv_max_m
                      : p.gemv_max_m ? p.gemv_max_m
                                     : kDefaultGemvMaxM;
  // Where the GEMM would be the int8 cooperative matrix (int8 weights), the profile's
  // coopmat_gemv_max_m (nvidia-hopper: 8). On the H100 it overtook the GEMV from M = 4
  // (4096x14336: 39.8 vs 48.3 us) until the several-row GEMV finished its rows side by side; since
  // then the GEMV wins up to M = 8 (dq8ca x q8csw, us, GEMV against the cooperative matrix:
  // 4096x14336 32.5 / 35.5 against 39.9 / 40.0 at M = 4 / 8, 2048x8192 13.3 / 14.9 against 14.8 /
  // 15.0, lm_head 2048x128256 99.3 / 106.9 against 109.9 / 112.1; bench/RESULTS.md 2026-12-07
  // session 20), while the tiled int-dot GEMM needs M > 64; narrow layers (fewer than 64 column
  // blocks of 128) keep the GEMV up to kCoopMatInt8NarrowGemvMaxM rows (was 4x the threshold, 12:
  // the 32x32 blocks they take now lost to the GEMV at M = 13-16), and below 16 blocks the ordinary
  // threshold (not measured: such small layers are launch-bound either way). bench/crossover.sh
  // measures it (bench/RESULTS.md).
  // Grouped int4 weights on the int8 path (groups the cooperative matrix takes) and float
  // activations with --allow-fp16 (the fp16 cooperative matrix): on the H100 (4096x14336, 112
  // column blocks; bench/RESULTS.md, ONNX session) the GEMV's time grows about linearly with M
  // while the cooperative matrix's stays flat: q4gsw g128 GEMV 77.3 / 129.3 us at M = 8 / 16
  // against 80.5 / 78.8; float x q4gsw 93.9 / 187.0 at M = 4 / 8 against 151.5 / 153.6 (fp16);
  // float x q8csw 145.6 / 269.9 at M = 8 / 16 against 209.7 / 210.2. Wide layers only (what was
  // measured: 112 int8 blocks of 128 columns, 56 fp16 blocks of 256). Groups of 32 as well since
  // the per-group fold got cheap (issue 15): q4gsw g32 4096x14336 M = 16 74.7 us against the GEMV's
  // 131.5; 8192x28672 268.0 against 338.1 (its GEMV at M = 8: 183.8, against 268.0).
  std::string cm_rule;
  if (!o.gemv_max_m && p.coopmat_gemv_max_m && !o.no_coopmat && !s.conv && !o.force_accum) {
    LinearChoice probe = c;
    const bool plan = PlanCoopMat(s, p, o, probe).empty();
    const uint64_t blocks = (uint64_t(s.n) + 127) / 128;  // column blocks of 128
    if (plan && probe.cm_int8 && s.Quantized() && !s.Grouped() && blocks >= 16) {
      gemv_max = std::min(gemv_max, blocks >= 64 ? p.coopmat_gemv_max_m : kCoopMatInt8NarrowGemvMaxM);
      cm_rule = " (the int8 cooperative-matrix threshold" +
                std::string(blocks >= 64 ? "" : ", " + std::to_string(kCoopMatInt8NarrowGemvMaxM) + " for a narrow layer") + ")";
    } else if (plan && probe.cm_int8 && s.Quantized() && s.Grouped() && blocks >= 16) {
      // Every layer of at least 16 column blocks of 128, since small grids split K (PlanCoopMat;
      // H100 q4gsw g32, bench/RESULTS.md 2026-11-26 session 4): at M = 16 the cooperative matrix
      // 14336x4096 71.3 us (GEMV 93.6), 4096x4096 28.5 (38.3), 8192x2048 28.7 (30.7), 2048x8192
      // 26.2 (39.1); at M = 8 the GEMV 59.5 (68.7), 23.0 (27.8), 24.5 (28.4), 29.5 (25.7). Smaller
      // layers keep the ordinary threshold (not measured: launch-bound either way).
      // Wide layers of short K, which take 32x32 blocks at small M (PlanCoopMat): the cooperative
      // matrix from M = 8 (4096x14336 48.4 us against the GEMV's 52.8, 2048x8192 23.5 against 28.0;
      // with K = 8192 / 14336 the GEMV keeps M = 8: 8192x28672 153.0 against 197.1; at M = 4 the
      // GEMV everywhere: 29.7 against 48.1), measured with groups of 32.
      // (Narrow layers of long K stay on the GEMV at M = 8: 8192x2048 alone ran 22.0 us on 16x64
      // blocks against the GEMV's 23.5, but the 1b example's 8-token step with its down_proj on
      // them took 1666 us against 1605; 2026-11-27 session 3.)
      // Int4 weights of any group size too (H100, M = 8, GEMV -> cooperative matrix, us;
      // bench/RESULTS.md 2026-11-27 session 5): 4096x14336 g128 46.7 -> 38.4, g64 47.9 -> 41.3,
      // q4gaw g128 47.4 -> 42.1, 2048x8192 g128 28.5 -> 22.0, 2048x16384 g128 37.0 -> 25.1; q8gsw
      // g128 lost (4096x14336 55.1 -> 57.6): int8 weights only in groups of 32, as before.
      // Since the GEMV takes eight rows as two row blocks (TwoRowBlocks), int4 in groups of 32 keeps
      // the GEMV at M = 8 there (4096x14336 39.23 against the cooperative matrix's 42.82, 2048x8192
      // 19.07 against 22.75; 2026-12-07 session 24); other groups were not measured that way.
      const bool short_k = s.k <= 4096 && (s.Int4() || s.group_size == 32) && (uint64_t(s.n) + 31) / 32 >= kSplitKBlocks &&
                           !(s.Int4() && s.group_size == 32 && TwoRowBlocks(s, p, c.accum));
      gemv_max = std::min(gemv_max, short_k ? kCoopMatGroupedGemvMaxM - 1 : kCoopMatGroupedGemvMaxM);
      cm_rule = std::string(" (the grouped int8 cooperative-matrix threshold") + (short_k ? ", 7 for a wide layer of K <= 4096)" : ")");
    } else if (plan && !probe.cm_int8 && !s.Quantized() && o.allow_fp16 &&
               (blocks >= 32 || probe.cm_ksplit > 1)) {
      // Wide layers counted in columns of 128, as measured (not in the 32x32 blocks that batches
      // of up to 16 rows take now, PlanCoopMat: that would extend the threshold to narrow layers),
      // and the layers whose batches of up to 64 rows split K (long K; PlanCoopMat): at M = 8 /
      // 16 float x q4gsw 8192x2048 26.1 / 26.8 us against the GEMV's 63.9 / 100.4, float x q8csw
      // 14336x4096 87.7 / 89.5 against 135.0 / 252.0 (H100, 2026-11-27 session 4).
      gemv_max = std::min(gemv_max, s.Int4() ? kCoopMatF16Int4GemvMaxM : kCoopMatF16Int8GemvMaxM);
      cm_rule = " (the fp16 cooperative-matrix threshold)";
    }
  }
  std::ostringstream why;
  if (o.force_algo) {
    c.algo = *o.force_algo;
    why << "; algorithm forced to " << AlgoName(c.algo);
  } else {
    c.algo = s.m <= int64_t(gemv_max) ? Algo::Gemv : Algo::Gemm;
    why << "; M=" << s.m << (c.algo == Algo::Gemv ? " <= " : " > ") << "GEMV threshold "
        << gemv_max << cm_rule << ": " << (c.algo == Algo::Gemv ? "cooperative GEMV" : "tiled GEMM");
  }

  const uint32_t inv = p.max_compute_work_group_invocations;
  const uint32_t shm = p.max_compute_shared_memory_size;
  if (c.algo == Algo::Gemm) {
    c.tx = std::min<uint32_t>(16, p.max_compute_work_group_size[0]);
    c.ty = std::min<uint32_t>({16u, std::max(1u, inv / c.tx), p.max_compute_work_group_size[1]});
    c.rm = 4;
    c.rn = 4;
    c.bk4 = kKWordAlign;
    // The profile's taller tiles (8 rows per thread): int8 weights on the int-dot path
    // (gemm_rows_int8) and int4 weights (gemm_rows_int4; on the int-dot path only in groups of
    // 128 or more: with shorter groups the per-group fold of 8 rows cost more than the taller tile
    // saved; the dequant path gained 8% with groups of 32, session 3), and only while
    // the 128-row tiles leave kMinWorkgroupsForTallTiles workgroups. H100, with 16-byte A loads
    // from shared memory (bench/RESULTS.md, session 4): q8 4096x14336 M=512 801 vs 927 µs, M=128
    // (224 workgroups) 249 vs 302; q4gaw g128 4096x14336 M=512 1514 vs 1572; but 14336x4096 at
    // M=128 (64 workgroups) 744 vs 594 (q8) and 8192x2048 at M=512 (128) 415 vs 374; q4gsw g32
    // 4096x14336 M=512 1776 vs 1705.
    const bool dot = c.accum == Accum::IntDot;
    const uint32_t tall = s.Grouped() ? (!dot || s.group_size >= kMinTallTilesInt4DotGroup ? p.gemm_rows_int4 : 0)
                                   : (dot ? p.gemm_rows_int8 : 0);
    if (tall > c.rm) {
      const uint64_t wgs = uint64_t((s.m + c.ty * tall - 1) / (c.ty * tall)) *
                           uint64_t((s.n + c.tx * c.rn - 1) / (c.tx * c.rn));
      const char* key = s.Grouped() ? "gemm_rows_int4" : "gemm_rows_int8";
      if (wgs >= kMinWorkgroupsForTallTiles) {
        c.rm = tall;
        why << " (" << c.rm << " rows per thread: the profile's " << key << ")";
      } else {
        why << " (" << c.rm << " rows per thread: the profile's " << key << " of " << tall << " would leave " << wgs
            << " workgroups, fewer than " << kMinWorkgroupsForTallTiles << ")";
      }
    }
    if (o.gemm_rm) {
      if (o.gemm_rm != 4 && o.gemm_rm != 8) return UserError("GEMM rows per thread must be 4 or 8");
      c.rm = o.gemm_rm;
      why << " (rows per thread forced to " << c.rm << ")";
    }
    if (o.gemm_bk4) {
      const uint32_t k4p = PackedK4(s.k);  // the shader's K loop runs over the padded activation words
      if (o.gemm_bk4 % kKWordAlign || o.gemm_bk4 > 64)
        return UserError("GEMM K step of " + std::to_string(o.gemm_bk4) + " words: a multiple of 8 up to 64 needed");
      if (k4p % o.gemm_bk4 == 0) c.bk4 = o.gemm_bk4;  // else the step must divide the padded K
    }
    // Few 64x64 tiles leave most of a large GPU idle while each workgroup walks all of K:
    // use 32x32 tiles (8x8 threads) so four times as many workgroups hide the latency.
    const int64_t tiles64 = ((s.m + 63) / 64) * ((s.n + 63) / 64);
    if (p.gemm_tile == 32 || p.gemm_tile == 64) {
      if (p.gemm_tile == 32) c.tx = c.ty = 8;
      why << " (" << p.gemm_tile << "x" << p.gemm_tile << " tiles: the profile's tuned gemm_tile)";
    } else if (tiles64 < 128 && c.tx * c.ty > 64) {
      c.tx = 8;
      c.ty = 8;
      why << " (32x32 tiles: only " << tiles64 << " 64x64 tiles)";
    }
    while (c.SharedMemoryBytes() > shm && c.ty > 1) c.ty /= 2;
  } else {
    const uint32_t k16 = (s.Int4() ? PackedK8(s.k) : PackedK4(s.k)) / 4;  // uvec4 units
    const uint32_t max_threads = GemvMaxThreads(p);
    c.threads = p.gemv_threads ? std::min(p.gemv_threads, max_threads) : RuleGemvThreads(k16, max_threads);
    c.nr = s.n >= 16 || s.out_q8 ? 4 : (s.n >= 2 ? 2 : 1);  // int8 outputs: whole words
    if (p.gemv_channels) c.nr = std::max(p.gemv_channels, s.out_q8 ? 4u : 1u);
    c.unroll = p.gemv_unroll ? p.gemv_unroll : (k16 >= 2 * c.threads ? 2u : 1u);
    why << ", " << c.threads << " threads x " << c.nr << " channels, " << c.unroll << " unit(s) in flight"
        << (p.gemv_threads || p.gemv_channels || p.gemv_unroll ? " (tuned)" : "");
    c.mb = uint32_t(std::min<int64_t>(s.m, 8));
    if (TwoRowBlocks(s, p, c.accum)) {  // (s.m == 8)
      c.row_blocks = 2;
      c.mb = 4;
      why << "; 8 rows as 2 row blocks of 4 side by side";
    }
    // Several rows per workgroup: the reduction of mb x nr sums across the workgroup, not the
    // weight stream, holds the time, so on GPUs fewer threads take more units each (down to 32,
    // at most 4 units per thread) and, on the int-dot path, 2 channels. H100 (bench/RESULTS.md
    // 2026-11-26 session 3, i8 x q4gsw g32 4096x14336, us at M = 2 / 4 / 8 / 16): 128 threads x 4
    // channels 22.9 / 38.5 / 68.6 / 121.7, 32 x 2 14.1 / 20.6 / 40.3 / 69.8 (M = 1: 12.1);
    // 14336x4096 M = 8: 128 x 4 44.9, 64 x 4 41.1, 32 x 4 52.0; float x q8csw 4096x14336 M = 8:
    // 128 x 4 144.3, 64 x 4 119.4, 32 x 4 133.2, 32 x 2 163.7.
    // Long-K, wide int4 layers on the int-dot path (K >= 8192, N >= 4096; each unit unpacked once
    // for all rows since 2026-11-27): 32 threads x 2 channels with 2 units in flight. H100,
    // dq8ca x q4gsw g32, us at M = 2 / 4 / 8 (bench/RESULTS.md 2026-11-27 session 2): 14336x4096
    // (the rule below gives 128x2x2) 22.2 / 30.0 / 56.7 -> 21.0 / 26.7 / 40.5; 8192x28672 (64x2x2)
    // 64.3 / 79.6 / 149.0 -> 65.8 / 78.4 / 131.9. Not below: 8192x2048 (1024 workgroups) lost
    // 7-11% at M = 2-8, 4096x14336 and the 1b's K = 2048 layers 0-7% at M = 2-4, and the 1b's
    // 8-token step 2042 -> 2087 us; 4 channels, 64 or 16 threads lost on every shape.
    const bool int4_long = c.accum == Accum::IntDot && s.Int4() && !s.out_q8 && k16 >= 256 && s.n >= 4096;
    const bool long_rows = c.mb > 1 && !HasQuirk(p, "cpu_device") && int4_long;
    if (long_rows) {
      c.threads = std::min(32u, max_threads);
      c.nr = std::min(c.nr, 2u);
      c.unroll = k16 >= 2 * c.threads ? 2u : 1u;
      why << "; " << c.mb << " rows per workgroup: " << c.threads << " threads x " << c.nr << " channels, "
          << c.unroll << " unit(s) in flight";
    } else if (c.mb > 1 && !HasQuirk(p, "cpu_device")) {
      while (c.threads > 32 && k16 / (c.threads / 2) <= 4) c.threads /= 2;
      if (c.accum == Accum::IntDot && !s.out_q8 && c.nr > 2) c.nr = 2;
      why << "; " << c.mb << " rows per workgroup: " << c.threads << " threads x " << c.nr << " channels";
    } else if (OneRowIntDotOnGpu(s, p, c)) {
      // One row on the int-dot path (a decode step): 2 channels per workgroup, threads and units
      // by K, over the profile's tuned values. `vkqc tune` times single layers whose weights stay
      // in the L2 cache between runs; inside a model they do not. H100, the 1b example's decode
      // step at context 128, whole program (bench/RESULTS.md 2026-11-27 session 6): the tuned
      // 128 threads x 4 channels 1000.4 us, this rule 974.9 (q/k/v and gate/up 8-30% faster per
      // layer), 128 x 2 978.3; 1 channel, 8 channels, 256 threads or 2 units at K = 2048 lost.
      c.threads = RuleGemvThreads(k16, max_threads);
      c.nr = s.n >= 2 ? kOneRowChannels : 1u;
      c.unroll = k16 >= 2 * c.threads ? 2u : 1u;
      why << "; one row on a GPU instead: " << c.threads << " threads x " << c.nr << " channels, " << c.unroll << " unit(s) in flight";
    }
    const uint32_t sg = p.tuned_subgroup_size;
    if (p.subgroup_arithmetic_compute && p.subgroup_size_control &&
        p.required_subgroup_size_compute && sg != 0 && sg <= c.threads && c.threads % sg == 0 &&
        (p.min_subgroup_size == 0 || sg >= p.min_subgroup_size) &&
        (p.max_subgroup_size == 0 || sg <= p.max_subgroup_size)) {
      c.subgroup_size = sg;
      why << ", subgroupAdd reduction at pinned subgroup size " << sg;
    } else {
      why << ", shared-memory tree reduction";
    }
    // Several rows are finished side by side (every row's sums reduced at once, one barrier; the
    // tree: one tree over all of them), except the long-K wide int4 GEMV above with subgroupAdd,
    // 8 rows and K beyond 8192, which finishes one row after another: H100, dq8ca x q4gsw g32
    // 14336x4096 at M = 8 39.9-41.0 us that way against 43.2-43.9 side by side, but at M = 4 / 5 /
    // 6 28.3 / 32.1 / 36.4 against 27.1-27.7 / 30.8 / 35.1, and 8192x28672 loses it at M = 5 / 6 /
    // 8 (88.8 / 96.9 / 131.3 against 82.5 / 90.9 / 118.5); M = 7 not measured. The 1b example's
    // several-row GEMVs (32-128 threads, K = 2048-8192) gained 1.1-1.5 us each side by side,
    // 8192x2048 at M = 8 23.3 -> 22.1-22.3 (bench/RESULTS.md 2026-12-07 sessions 19, 20 and 22).
    // On the tree side by side everywhere (measured on 128 threads, hopper-tree: 8192x2048 at M = 8
    // 23.8 -> 19.1), where one row after another costs log2(threads) + 2 barriers per row.
    // (Since session 24 eight rows of these layers are two row blocks of 4, TwoRowBlocks: 8 rows per
    // workgroup remain for larger batches where the GEMV takes them, and groups not a multiple of 32.)
    c.rows_at_once = c.mb > 1 && !(long_rows && c.subgroup_size && c.mb == 8 && s.k > 8192);  // long_rows: mb > 1
    if (c.mb > 1) why << (c.rows_at_once ? ", rows finished side by side" : ", rows finished one after another");
    // Four rows on GPUs (int4 x int8, groups a multiple of 32): the next batch of weights loaded
    // before each batch is computed. H100, dq8ca x q4gsw g32 (bench/RESULTS.md 2026-12-07 session
    // 23): the 1b example's 4-token step 1184.7 -> 1133.2 us (hopper-tree, the phones' reduction:
    // 1189.9 -> 1140.0); single layers at M = 4 14336x4096 27.97 -> 26.02, 4096x14336 26.46 ->
    // 25.95, 8192x2048 15.30 -> 14.91 us, but 8192x28672 75.58 -> 77.31 (N beyond 16384: not
    // there). At 2 rows it lost everywhere (the 1b's 2-token step +5-6 us), at 8 on the long
    // layers (14336x4096 42.3 -> 51.7, 8192x28672 119.1 -> 127.3) and the 1b's 8-token step
    // (+26 us; since session 24 eight rows run as two blocks of 4, TwoRowBlocks: these take it but
    // for the long layers, 14336x4096 37.54 without it against 39.71); at 3 and 5-7 rows within
    // one round's noise (the 1b's 3/5/6-token steps -8/-17/-15 us against ~7 between two bundles
    // of the same kernels) or slower (7 tokens +25 us, the long layers at M = 6 / 7).
    c.pipelined = c.mb == 4 && !HasQuirk(p, "cpu_device") && c.accum == Accum::IntDot && s.Int4() &&
                  s.group_size > 0 && s.group_size % 32 == 0 && !(long_rows && (s.n > 16384 || c.row_blocks > 1));
    if (c.pipelined) why << ", the next weight batch loaded before each batch's compute";
    while (c.SharedMemoryBytes() > shm && c.nr > (s.out_q8 ? 4u : 1u)) c.nr /= 2;
  }
  if (c.SharedMemoryBytes() > shm || c.Invocations() > inv)
    return InternalError("linear selection produced a workgroup that exceeds the limits of '" +
                         p.name + "'");
  c.reason += why.str();

  // The cooperative-matrix GEMM replaces the tiled GEMM where the target has it: for the int8
  // path with int8 weights (the same exact function), for float activations only with
  // allow_fp16. Grouped weights (int4, q8gsw) on the int8 path too: the per-group fold is one
  // subtraction and one fma per accumulator component (issue 15; H100 4096x14336 M=512 groups of
  // 32: 388 us against 1705 for the tiled int-dot GEMM, bench/RESULTS.md).
  if (c.algo == Algo::Gemm && !o.force_accum && !s.conv) {
    LinearChoice cm = c;
    const std::string no = PlanCoopMat(s, p, o, cm);
    if (o.no_coopmat) {
      if (no.empty()) c.reason += "; cooperative matrix disabled by option";
    } else if (!no.empty()) {
      c.reason += "; no cooperative matrix: " + no;
    } else if (!cm.cm_int8 && !o.allow_fp16) {
      c.reason += "; the fp16 cooperative matrix is opt-in (--allow-fp16): fp16 rounding of activations and weights";
    } else {
      cm.accum = Accum::CoopMat;
      std::ostringstream r;
      r << CoopMatSummary(s, p, cm) << "; M=" << s.m << (o.force_algo ? " (GEMM forced)" : " > GEMV threshold " + std::to_string(gemv_max))
        << ": cooperative-matrix GEMM, block " << cm.CmBlockM() << "x" << cm.CmBlockN() << ", " << cm.cm_wm * cm.cm_wn
        << " subgroups of " << cm.cm_sg;
      cm.reason = r.str();
      return cm;
    }
  }
  return c;
}

}  // namespace vkqc::linear
