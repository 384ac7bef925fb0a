#include "compiler/kernels/attention/lower.h"

#include <algorithm>

#include "compiler/emit/bundle_plan.h"
#include "compiler/passes/fuse_rows.h"

namespace vkqc::attention {

AttentionChoice SelectAttention(int64_t rows, int64_t heads, int64_t cache_len) {
  AttentionChoice c;
  const uint64_t pairs = uint64_t(std::max<int64_t>(rows * heads, 1));
  const uint64_t max_splits = uint64_t((cache_len + 63) / 64);
  const uint64_t want = std::clamp<uint64_t>((kTargetWorkgroups + pairs - 1) / pairs, 1, max_splits);
  c.chunk = uint32_t((uint64_t(cache_len) + want - 1) / want + 63) / 64 * 64;
  c.splits = uint32_t((uint64_t(cache_len) + c.chunk - 1) / c.chunk);
  if (c.splits == 1) {
    c.chunk = uint32_t((cache_len + 63) / 64 * 64);
    c.reason = std::to_string(pairs) + " (row, head) pairs fill the GPU: one workgroup each, online softmax over "
               "64-key blocks";
  } else {
    c.reason = "flash decoding: " + std::to_string(pairs) + " (row, head) pairs alone would leave the GPU idle, so each "
               "is split into " + std::to_string(c.splits) + " chunks of " + std::to_string(c.chunk) +
               " cache positions (splits past the context return at once), then combined";
  }
  return c;
}

uint32_t AttentionTiledShared(uint32_t br, uint32_t head_dim) {
  constexpr uint32_t kKeys = 32;  // BC, the keys of one block
  const uint32_t row_bytes = (head_dim / 4 + 1) * 16;  // a padded row of vec4
  // queries and the K/V block; scores (padded rows); running max, sum and correction per row
  return (br + kKeys) * row_bytes + br * (kKeys + 1) * 4 + br * 3 * 4;
}

TiledChoice SelectTiledAttention(int64_t rows, int64_t heads, int64_t kv_heads, int64_t head_dim,
                                 uint32_t max_shared_bytes, bool forced) {
  TiledChoice c;
  const int64_t g = heads / std::max<int64_t>(kv_heads, 1);
  if (head_dim % 4 != 0 || head_dim > 128) {
    c.why = "head_dim " + std::to_string(head_dim) + " (the tiled kernel takes multiples of 4 up to 128)";
    return c;
  }
  if (g > 32) {
    c.why = std::to_string(g) + " query heads per KV head (the tiled kernel takes up to 32)";
    return c;
  }
  // The larger tile where it fits (K and V read once per 32 virtual rows instead of 16); a ratio
  // that does not divide the tile leaves BR mod G virtual rows idle.
  for (uint32_t br : {32u, 16u}) {
    if (uint32_t(g) > br || AttentionTiledShared(br, uint32_t(head_dim)) > max_shared_bytes) continue;
    if (!forced && rows < int64_t(br) / g) {
      c.why = std::to_string(rows) + " query rows fill less than one tile of " + std::to_string(br / g) + " rows";
      continue;
    }
    c.br = br;
    return c;
  }
  if (!c.why.empty()) return c;
  c.why = "its smallest tile needs " + std::to_string(AttentionTiledShared(g > 16 ? 32 : 16, uint32_t(head_dim))) +
          " bytes of shared memory, the target has " + std::to_string(max_shared_bytes);
  return c;
}

uint32_t AttentionDecodeShared(uint32_t g, uint32_t head_dim, uint32_t bk, bool pad, uint32_t group_rows,
                               uint32_t rows) {
  // queries, the new rows, partial dots (one per invocation and virtual query), scores, the block's
  // values (rows padded by one pair where `pad`), running max / sum / correction and the reduction
  // scratch per virtual query, the last-arrival flag
  const uint32_t qv = g * group_rows;
  return qv * head_dim * 4 + 2 * rows * head_dim * 4 + qv * 128 * 4 + qv * bk * 4 +
         bk * (head_dim + (pad ? 2 : 0)) * 4 + qv * 11 * 4 + 4;
}

DecodeChoice SelectDecodeAttention(int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                                   bool rope_fused, const TargetProfile& profile, int64_t rows, uint32_t group_rows,
                                   uint32_t max_splits) {
  DecodeChoice c;
  const int64_t g = heads / std::max<int64_t>(kv_heads, 1);
  if (g > kDecodeMaxQueries) {
    c.why = std::to_string(g) + " query heads per KV head (the decode kernel takes up to 32)";
    return c;
  }
  if (rows > kDecodeMaxRows) {
    c.why = std::to_string(rows) + " rows (the decode kernel takes up to " + std::to_string(kDecodeMaxRows) + ")";
    return c;
  }
  // The selection's: up to kDecodeGroupQueries queries per workgroup, unless that makes more than
  // kDecodeMaxGroups groups.
  const int64_t by_queries = kDecodeGroupQueries / g, by_groups = (rows + kDecodeMaxGroups - 1) / kDecodeMaxGroups;
  c.group_rows = uint32_t(group_rows ? std::min<int64_t>(group_rows, rows)
                                     : std::clamp<int64_t>(std::max(by_queries, by_groups), 1, rows));
  if (c.group_rows * g > kDecodeMaxQueries) {
    c.why = std::to_string(c.group_rows) + " rows per workgroup x " + std::to_string(g) +
            " query heads per KV head (the decode kernel takes up to 32 queries per workgroup)";
    return c;
  }
  c.groups = uint32_t((rows + c.group_rows - 1) / c.group_rows);
  if (head_dim % 2 != 0 || head_dim > 256) {
    c.why = "head_dim " + std::to_string(head_dim) + " (the decode kernel takes even ones up to 256)";
    return c;
  }
  // f16 caches: unpackHalf2x16 (short code: this kernel's time is largely instruction fetch) except
  // on CPU implementations (quirk cpu_device: llvmpipe's aarch64 backend failed to compile it).
  c.f16_unpack = !HasQuirk(profile, "cpu_device");
  c.storage_buffers = rope_fused ? 11 : 8;
  if (profile.max_per_stage_descriptor_storage_buffers < c.storage_buffers) {
    c.why = "the decode kernel binds " + std::to_string(c.storage_buffers) + " storage buffers, the target allows " +
            std::to_string(profile.max_per_stage_descriptor_storage_buffers) + " per stage";
    return c;
  }
  if (profile.max_compute_work_group_invocations < 128) {
    c.why = "the decode kernel's workgroup of 128 exceeds the target's limit";
    return c;
  }
  for (uint32_t bk : {64u, 32u, 16u, 128u}) {  // 128: one invocation per key (head_dim not a multiple of 4)
    if (head_dim % (2 * (128 / bk)) != 0) continue;
    // The values' rows padded (no bank conflicts in the score phase's stores; 1% of the 1b decode
    // step on the H100) where that still fits, else not: the padding never changes the block.
    const uint32_t max_shared = profile.max_compute_shared_memory_size;
    c.pad = AttentionDecodeShared(uint32_t(g), uint32_t(head_dim), bk, true, c.group_rows, uint32_t(rows)) <= max_shared;
    const uint32_t shared = AttentionDecodeShared(uint32_t(g), uint32_t(head_dim), bk, c.pad, c.group_rows, uint32_t(rows));
    if (shared > max_shared) continue;
    c.bk = bk;
    c.shared = shared;
    // One block per split up to the most splits; longer caches take more blocks per split.
    if (!max_splits) max_splits = HasQuirk(profile, "cpu_device") ? kDecodeCpuMaxSplits : kDecodeMaxSplits;
    const uint64_t blocks = (uint64_t(cache_len) + bk - 1) / bk;
    const uint64_t per = (blocks + max_splits - 1) / max_splits;
    c.chunk = uint32_t(per * bk);
    c.splits = uint32_t((uint64_t(cache_len) + c.chunk - 1) / c.chunk);
    return c;
  }
  c.why = "head_dim " + std::to_string(head_dim) + " with " + std::to_string(g) + " query heads per KV head" +
          (rows > 1 ? " and " + std::to_string(c.group_rows) + " of its " + std::to_string(rows) + " rows per workgroup"
                    : std::string()) + ": no block of 64, 32, 16 or 128 keys fits (shared memory " +
          std::to_string(profile.max_compute_shared_memory_size) + " B)";
  return c;
}

bool DecodeVecLoads(uint32_t head_dim, uint32_t bk, bool f16_cache) {
  // (a cache row's head_dim / 2 words are then whole vectors too: TPK x an invocation's)
  const uint32_t words = head_dim / (2 * (128 / bk)), per_vec = f16_cache ? 4 : 2;
  return words % per_vec == 0;
}

uint32_t DecodePvSlices(uint32_t head_dim, uint32_t bk, uint32_t queries, bool pad) {
  const uint32_t hd = head_dim / 2;
  if (hd == 0 || 128 % hd != 0 || queries > 8) return 0;
  const uint32_t ks = 128 / hd;
  if (ks < 2 || bk % ks != 0 || bk * (hd + (pad ? 1 : 0)) < ks * queries * hd) return 0;
  return ks;
}

uint64_t DecodeSyncBytes(const ir::Graph& g, const FusePlan& fuse, const TargetProfile& profile,
                         const CompileOptions& options) {
  if (options.attention == CompileOptions::AttentionKernel::Rows) return 0;
  uint64_t bytes = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    if (op.type != ir::OpType::Attention) continue;
    const ir::AttentionAttrs& a = op.attention;
    const bool rope = i < fuse.rope_q.size() && fuse.rope_q[i] >= 0;
    const int64_t s = g.tensors[size_t(op.inputs[3])].shape[1];
    const DecodeChoice c = SelectDecodeAttention(a.num_heads, a.num_kv_heads, a.head_dim, s, rope, profile);
    // one counter per (KV head, row group): up to kDecodeMaxRows groups in a program
    if (c.bk) bytes = std::max<uint64_t>(bytes, uint64_t(a.num_kv_heads) * kDecodeMaxRows * 4);
  }
  return bytes ? (bytes + 15) / 16 * 16 : 0;
}

uint64_t SyncStateBytes(const ir::Graph& g, const FusePlan& fuse, const TargetProfile& profile,
                        const CompileOptions& options) {
  return DecodeSyncBytes(g, fuse, profile, options) + (options.norm_tail ? 16 : 0);
}

namespace {

// A dispatch of `shader` with a one-dimensional workgroup of `local` over a (gx, gy, gz) grid.
linear::DispatchParams Grid(const std::string& shader, std::vector<std::string> defs, uint32_t local, uint32_t gx,
                            uint32_t gy, uint32_t gz) {
  linear::DispatchParams d;
  d.shader = {shader, std::move(defs)};
  d.local_size[0] = local;
  d.local_size[1] = d.local_size[2] = 1;
  d.group_count[0] = gx;
  d.group_count[1] = gy;
  d.group_count[2] = gz;
  return d;
}

// A few query rows: the decode kernel, one dispatch (see SelectDecodeAttention).
void LowerDecode(kernels::LowerContext& ctx, size_t i, const DecodeChoice& c, uint32_t rows, PlanLayer& pl,
                 const std::string& detail) {
  const ir::Op& op = ctx.op(i);
  const ir::AttentionAttrs& a = op.attention;
  const bool f16 = ctx.tensor(op.inputs[3]).dtype == ir::DType::F16;
  const int rq = ctx.fuse().rope_q[i], rk = ctx.fuse().rope_k[i];
  const uint32_t g = uint32_t(a.num_heads / a.num_kv_heads);
  std::vector<std::string> defs = {"VKQC_D=" + std::to_string(a.head_dim), "VKQC_G=" + std::to_string(g),
                                   "VKQC_ROWS=" + std::to_string(rows), "VKQC_R=" + std::to_string(c.group_rows),
                                   "VKQC_BK=" + std::to_string(c.bk), "VKQC_VS_PAD=" + std::to_string(c.pad ? 1 : 0)};
  if (f16) defs.push_back("VKQC_KV_F16");
  if (f16 && c.f16_unpack) defs.push_back("VKQC_F16_UNPACK");
  const bool vec_loads = DecodeVecLoads(uint32_t(a.head_dim), c.bk, f16);
  if (vec_loads) defs.push_back("VKQC_VEC_LOADS");
  const uint32_t pv_slices = DecodePvSlices(uint32_t(a.head_dim), c.bk, g * c.group_rows, c.pad);
  defs.push_back("VKQC_PV_SLICES=" + std::to_string(pv_slices));
  // The online softmax and the combine per query in one subgroup (one barrier instead of five / four).
  if (ctx.profile().subgroup_arithmetic_compute) defs.push_back("VKQC_SUBGROUP");
  if (rq >= 0) defs.push_back("VKQC_ROPE");
  if (rq >= 0 && ctx.op(size_t(rq)).rope.interleaved) defs.push_back("VKQC_INTERLEAVED");
  linear::DispatchParams d = Grid("attention_decode.comp", defs, 128, c.splits, uint32_t(a.num_kv_heads), c.groups);
  const uint32_t maxpos = rq >= 0 ? uint32_t(ctx.op(size_t(rq)).rope.max_positions) : 1;
  const int64_t s = ctx.tensor(op.inputs[3]).shape[1];
  d.spec = {{1, uint32_t(a.num_heads)}, {2, uint32_t(a.num_kv_heads)}, {3, uint32_t(s)}, {4, c.chunk},
            {5, c.splits}, {6, kernels::FloatBits(a.Scale())}, {7, maxpos}};
  d.shared_memory_bytes = c.shared;
  const kernels::Bind part =
      ctx.Scratch(uint64_t(rows) * a.num_heads * c.splits * (a.head_dim + 2) * 4, op.name + ".partials");
  const kernels::Bind sync = ctx.SyncState();
  const kernels::Bind pos = ctx.Read(op.inputs[5]);
  std::string fused_note;
  std::vector<kernels::Bind> binds;
  if (rq >= 0) {
    const ir::Op& ropq = ctx.op(size_t(rq));
    const ir::Op& ropk = ctx.op(size_t(rk));
    binds = {ctx.Read(ropq.inputs[0]), ctx.Read(ropk.inputs[0]), ctx.Read(op.inputs[2]), pos,
             ctx.Constants(size_t(rq)), ctx.Write(op.inputs[3]), ctx.Write(op.inputs[4]),
             ctx.Write(op.inputs[0]), ctx.Write(op.inputs[1]), part, sync, ctx.Write(op.outputs[0])};
    fused_note = "; rope '" + ropq.name + "' and '" + ropk.name + "' and the cache append in the same dispatch";
  } else {
    binds = {ctx.Read(op.inputs[0]), ctx.Read(op.inputs[1]), ctx.Read(op.inputs[2]), pos,
             ctx.Write(op.inputs[3]), ctx.Write(op.inputs[4]), part, sync, ctx.Write(op.outputs[0])};
    fused_note = "; the cache append in the same dispatch";
  }
  ctx.Dispatch(d, binds);
  pl.variant = std::string("attention_decode_kv") + (f16 ? "f16" : "f32");
  pl.reason = std::string(rows > 1 ? "decode of " + std::to_string(rows) + " rows (causal per row)" : "decode") +
              ": one workgroup per (KV head, chunk of " + std::to_string(c.chunk) + " cache positions) reads " +
              "each key and value once for the " +
              (rows > 1 ? std::to_string(c.group_rows) + " rows x " : std::string()) + std::to_string(g) +
              " query heads sharing it" +
              (rows > 1 ? " (" + std::to_string(c.groups) + (c.groups == 1 ? " group of " : " groups of ") +
                              (rows % c.group_rows ? "up to " : "") + std::to_string(c.group_rows) +
                              (c.group_rows == 1 ? " row)" : " rows)")
                        : std::string()) +
              ", in blocks of " +
              std::to_string(c.bk) + " keys" +
              (ctx.profile().subgroup_arithmetic_compute ? " (online softmax per query in one subgroup)" : "") +
              (c.splits > 1 ? "; chunks past the context return at once, the last of the others to finish combines "
                              "them (arrival counters in the bundle's sync state)"
                            : std::string()) +
              (!ctx.options().decode_attention_max_splits && HasQuirk(ctx.profile(), "cpu_device") &&
                       c.chunk > c.bk
                   ? "; at most " + std::to_string(kDecodeCpuMaxSplits) + " chunks on a CPU device (cpu_device)"
                   : std::string()) +
              fused_note;
  pl.detail = detail + ", " + std::to_string(c.splits) + " chunks, " + std::to_string(c.shared) + " B shared" +
              (!f16              ? ""
               : c.f16_unpack ? ", f16 cache words by unpackHalf2x16"
                              : ", f16 cache words by integer decode (cpu_device)") +
              (vec_loads ? ", 16-byte cache loads" : "") +
              (pv_slices ? ", PV by " + std::to_string(pv_slices) + " key slices" : "");
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::AttentionAttrs& a = op.attention;
  const ir::Tensor& q = ctx.tensor(op.inputs[0]);
  const ir::Tensor& kc = ctx.tensor(op.inputs[3]);
  const int64_t rows = q.NumElements(ctx.tokens()) / (int64_t(a.num_heads) * a.head_dim);
  const int64_t s = kc.shape[1];
  const bool f16 = kc.dtype == ir::DType::F16;
  const std::vector<std::string> kv_def = f16 ? std::vector<std::string>{"VKQC_KV_F16"} : std::vector<std::string>{};
  // The attention kernels' f16 cache words by unpackHalf2x16 on GPU targets (as the decode kernel).
  std::vector<std::string> read_def = kv_def;
  if (f16 && !HasQuirk(ctx.profile(), "cpu_device")) read_def.push_back("VKQC_F16_UNPACK");
  const kernels::Bind pos = ctx.Read(op.inputs[5]);
  const int rq = ctx.fuse().rope_q[i], rk = ctx.fuse().rope_k[i];
  const std::string detail = std::to_string(rows) + " rows x " + std::to_string(a.num_heads) + " heads (" +
                             std::to_string(a.num_kv_heads) + " KV heads) of " + std::to_string(a.head_dim) +
                             ", cache of " + std::to_string(s) + " positions";
  using AK = CompileOptions::AttentionKernel;
  const AK force = ctx.options().attention;
  std::string decode_why;
  // One row unless forced to the per-row kernels; a few rows unless forced to either other kernel.
  if ((rows == 1 && force != AK::Rows) || (rows > 1 && rows <= kDecodeMaxRows && force == AK::Auto)) {
    const DecodeChoice dc =
        SelectDecodeAttention(a.num_heads, a.num_kv_heads, a.head_dim, s, rq >= 0, ctx.profile(), rows,
                              ctx.options().decode_attention_rows, ctx.options().decode_attention_max_splits);
    if (dc.bk) {
      LowerDecode(ctx, i, dc, uint32_t(rows), pl, detail);
      return {};
    }
    decode_why = "not the decode kernel: " + dc.why;
  } else if (rows <= kDecodeMaxRows) {
    decode_why = std::string("not the decode kernel: --force-attention ") + (force == AK::Rows ? "rows" : "tiled");
  }
  std::string fused_note;
  if (rq >= 0) {  // 1. rope of q and k and the append, one dispatch
    const ir::Op& ropq = ctx.op(size_t(rq));
    const ir::Op& ropk = ctx.op(size_t(rk));
    std::vector<std::string> defs = kv_def;
    if (ropq.rope.interleaved) defs.push_back("VKQC_INTERLEAVED");
    linear::DispatchParams ra = kernels::FlatDispatch(
        "rope_append.comp", defs, uint64_t(rows * (a.num_heads + a.num_kv_heads) * a.head_dim / 2), 128, ctx.profile());
    ra.spec.insert(ra.spec.end(), {{1, uint32_t(rows)}, {2, uint32_t(a.num_heads)}, {3, uint32_t(a.num_kv_heads)},
                                   {4, uint32_t(a.head_dim)}, {5, uint32_t(s)}, {6, uint32_t(ropq.rope.max_positions)}});
    ctx.Dispatch(ra, {ctx.Read(ropq.inputs[0]), ctx.Read(ropk.inputs[0]), ctx.Read(op.inputs[2]), pos,
                      ctx.Constants(size_t(rq)), ctx.Write(op.inputs[0]), ctx.Write(op.inputs[1]), ctx.Write(op.inputs[3]),
                      ctx.Write(op.inputs[4])});
    fused_note = "; rope '" + ropq.name + "' and '" + ropk.name + "' run with the cache append in one dispatch";
  } else {  // 1. the new rows into the cache
    linear::DispatchParams app =
        kernels::FlatDispatch("kv_append.comp", kv_def, uint64_t(rows * a.num_kv_heads * a.head_dim / 2), 128,
                              ctx.profile());
    app.spec.insert(app.spec.end(), {{1, uint32_t(rows)}, {2, uint32_t(a.num_kv_heads)}, {3, uint32_t(a.head_dim)},
                                     {4, uint32_t(s)}});
    ctx.Dispatch(app, {ctx.Read(op.inputs[1]), ctx.Read(op.inputs[2]), pos, ctx.Write(op.inputs[3]),
                       ctx.Write(op.inputs[4])});
  }
  // 2. attention over the cache: tiled for prefill where it fits; else per (row, head), split
  // along the cache when that leaves the GPU idle (3. combined)
  TiledChoice tc = rows > 1 ? SelectTiledAttention(rows, a.num_heads, a.num_kv_heads, a.head_dim,
                                                   ctx.profile().max_compute_shared_memory_size, force == AK::Tiled)
                            : TiledChoice{0, "one query row"};
  if (force == AK::Tiled && rows > 1 && !tc.br)
    return UserError(ctx.OpLabel(i) + ": --force-attention tiled: the tiled kernel cannot run it (" + tc.why + ")");
  if (force == AK::Rows && tc.br) tc = TiledChoice{0, "--force-attention rows"};
  if (tc.br) {
    const uint32_t g = uint32_t(a.num_heads / a.num_kv_heads), tb = tc.br / g;  // g <= br
    std::vector<std::string> defs = read_def;
    defs.push_back("VKQC_D=" + std::to_string(a.head_dim));
    defs.push_back("VKQC_BR=" + std::to_string(tc.br));
    linear::DispatchParams at = Grid("attention_tiled.comp", defs, 4 * tc.br, uint32_t((rows + tb - 1) / tb),
                                     uint32_t(a.num_kv_heads), 1);
    at.spec = {{1, uint32_t(rows)}, {2, uint32_t(a.num_heads)}, {3, uint32_t(a.num_kv_heads)}, {5, uint32_t(s)},
               {8, kernels::FloatBits(a.Scale())}};
    at.shared_memory_bytes = AttentionTiledShared(tc.br, uint32_t(a.head_dim));
    ctx.Dispatch(at, {ctx.Read(op.inputs[0]), ctx.Read(op.inputs[3]), ctx.Read(op.inputs[4]), pos,
                      ctx.Write(op.outputs[0])});
    pl.variant = std::string("attention_tiled_kv") + (f16 ? "f16" : "f32");
    pl.reason = "prefill: " + std::to_string(tc.br) + " virtual rows (" + std::to_string(tb) + " query rows x " +
                std::to_string(g) + " heads sharing a KV head) per workgroup read each 32-key block of K and V "
                "once into shared memory" + fused_note + (decode_why.empty() ? "" : " (" + decode_why + ")");
    pl.detail = detail + ", " + std::to_string(at.shared_memory_bytes) + " B shared";
    return {};
  }
  const AttentionChoice c = SelectAttention(rows, a.num_heads, s);
  const kernels::Bind y = ctx.Write(op.outputs[0]);
  kernels::Bind out = y;
  if (c.splits > 1)
    out = ctx.Scratch(uint64_t(rows) * a.num_heads * c.splits * (a.head_dim + 2) * 4, op.name + ".partials");
  linear::DispatchParams at = Grid("attention.comp", read_def, 64, c.splits, uint32_t(a.num_heads), uint32_t(rows));
  at.spec = {{1, uint32_t(rows)}, {2, uint32_t(a.num_heads)}, {3, uint32_t(a.num_kv_heads)}, {4, uint32_t(a.head_dim)},
             {5, uint32_t(s)}, {6, c.chunk}, {7, c.splits}, {8, kernels::FloatBits(a.Scale())}};
  at.shared_memory_bytes = 128 * 8 + 64 * 4;
  ctx.Dispatch(at, {ctx.Read(op.inputs[0]), ctx.Read(op.inputs[3]), ctx.Read(op.inputs[4]), pos, out});
  if (c.splits > 1) {
    const uint32_t local = uint32_t(std::min<int64_t>(64, a.head_dim));
    linear::DispatchParams cb = Grid("attention_combine.comp", {}, local, uint32_t(a.num_heads), uint32_t(rows), 1);
    cb.spec = {{0, local}, {1, uint32_t(rows)}, {2, uint32_t(a.num_heads)}, {3, uint32_t(a.head_dim)},
               {4, uint32_t(s)}, {5, c.chunk}, {6, c.splits}};
    ctx.Dispatch(cb, {out.AsRead(), pos, y});
  }
  pl.variant = std::string(c.splits > 1 ? "attention_split" : "attention_rows") + "_kv" + (f16 ? "f16" : "f32");
  std::string why_not = rows > 1 ? "not tiled: " + tc.why : std::string();
  if (!decode_why.empty()) why_not += (why_not.empty() ? "" : "; ") + decode_why;
  pl.reason = c.reason + (why_not.empty() ? std::string() : " (" + why_not + ")") + fused_note;
  pl.detail = detail;
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"attention", {ir::OpType::Attention}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::attention
