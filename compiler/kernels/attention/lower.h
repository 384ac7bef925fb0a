// attention lowering (kernels/lowering.h): a few rows take the decode kernel (one dispatch with
// the cache append, below); more rows append the run's K/V rows to the KV cache
// (shaders/kv_append.comp or rope_append.comp), then the tiled kernel, or attention.comp over the
// cache, split along the cache length when few (row, head) pairs would leave the GPU idle (flash
// decoding, combined by attention_combine.comp).
#pragma once
#include <cstdint>
#include <string>

#include "compiler/kernels/lowering.h"

namespace vkqc::attention {

const kernels::Family& Lowering();

// The attention kernel's shape for one program: a pure function of the sizes.
struct AttentionChoice {
  uint32_t splits = 1;  // workgroups along the cache per (row, head)
  uint32_t chunk = 64;  // keys per split (a multiple of 64)
  std::string reason;
};
// Splits so that rows x heads x splits reaches kTargetWorkgroups, each split >= 64 keys.
constexpr uint64_t kTargetWorkgroups = 1024;
AttentionChoice SelectAttention(int64_t rows, int64_t heads, int64_t cache_len);

// The tiled prefill kernel (shaders/attention_tiled.comp): BR virtual rows (query rows x the G
// query heads of one KV head) per workgroup, 32-key blocks of K and V in shared memory. Taken for
// head_dim a multiple of 4 up to 128, up to 32 query heads per KV head, where a tile fits the
// target's shared memory and the rows fill one tile (`forced`: also when they do not).
struct TiledChoice {
  uint32_t br = 0;  // 0: not taken (`why` says why)
  std::string why;
};
uint32_t AttentionTiledShared(uint32_t br, uint32_t head_dim);
TiledChoice SelectTiledAttention(int64_t rows, int64_t heads, int64_t kv_heads, int64_t head_dim,
                                 uint32_t max_shared_bytes, bool forced = false);

// The decode kernel (shaders/attention_decode.comp) for programs of up to kDecodeMaxRows rows
// (one token; a few: batched or speculative decoding): one workgroup of 128 per (KV head, chunk of
// the cache, group of `group_rows` rows) serves the group's rows x G query heads of that KV head
// (causal per row), appends the new rows (and rotates q and k where the rope ops are fused into
// it), and the last chunk to finish combines the chunks, counted in the bundle's sync state: one
// dispatch per layer. Rows per group: the most with group_rows x G <= kDecodeGroupQueries, but
// at most kDecodeMaxGroups groups (a workgroup's time grows with its queries; more groups read the
// same keys again, from L2: H100, 1b, bench/RESULTS.md 2026-11-28), or the caller's. Taken where G <= 32, head_dim is even and up to 256, a block of BK keys fits the
// target's shared memory (BK the first of 64, 32, 16, 128 with head_dim a multiple of 2 x 128 /
// BK), and the target allows its storage buffers per stage (8; 11 with the rope fused).
struct DecodeChoice {
  uint32_t bk = 0;  // 0: not taken (`why` says why)
  uint32_t chunk = 0, splits = 0, shared = 0, storage_buffers = 0;
  uint32_t group_rows = 1, groups = 1;  // rows per workgroup, row groups (the grid's z)
  bool pad = false;  // the values' shared rows padded by one pair
  bool f16_unpack = false;  // f16 cache words by unpackHalf2x16 (else the integer decode)
  std::string why;
};
constexpr uint32_t kDecodeMaxSplits = 64;
// On CPU devices (profile quirk cpu_device) at most this many chunks: llvmpipe runs every
// workgroup of the grid, even one past the context, at a cost (lavapipe, 2 cores, the 1b example:
// a decode attention layer 10.5 -> 1.6 ms at position 0 and 68.6 -> 29.6 ms at 1900 against 64;
// bench/RESULTS.md 2026-12-01). Enough workgroups (x KV heads) for the cores of a desktop CPU.
constexpr uint32_t kDecodeCpuMaxSplits = 4;
constexpr int64_t kDecodeMaxRows = 8;
constexpr int64_t kDecodeMaxQueries = 32;   // rows x query heads per KV head in one workgroup
constexpr int64_t kDecodeGroupQueries = 4;  // the selection's rows per group: G x rows up to this,
constexpr int64_t kDecodeMaxGroups = 4;     // unless that makes more groups than this
uint32_t AttentionDecodeShared(uint32_t g, uint32_t head_dim, uint32_t bk, bool pad, uint32_t group_rows = 1,
                               uint32_t rows = 1);
// `group_rows` 0: the selection's. `max_splits` 0: the target's (kDecodeCpuMaxSplits on CPU
// devices, else kDecodeMaxSplits).
DecodeChoice SelectDecodeAttention(int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                                   bool rope_fused, const TargetProfile& profile, int64_t rows = 1,
                                   uint32_t group_rows = 0, uint32_t max_splits = 0);
// Whether the decode kernel's score phase loads the cache 16 bytes at a time (VKQC_VEC_LOADS): an
// invocation's words of a key (head_dim / (2 * 128 / bk)) are whole vectors of 4 words (f16
// pairs) or 2 (f32 pairs).
bool DecodeVecLoads(uint32_t head_dim, uint32_t bk, bool f16_cache);
// Key slices of the decode kernel's PV step (VKQC_PV_SLICES; 0: none): invocation t takes word
// t % (head_dim / 2) of every one of the workgroup's `queries` (at most 8) over slice
// t / (head_dim / 2) of a block's keys, and the slices' sums are added once, after the last block,
// in the values' shared rows. Where head_dim / 2 divides the workgroup of 128 into at least 2
// slices, the slices divide the block, and the sums fit (`pad`: the rows' padding pair).
uint32_t DecodePvSlices(uint32_t head_dim, uint32_t bk, uint32_t queries, bool pad);
// Bytes of the sync state the graph's attention ops need on this target (0: none takes the decode
// kernel; `--force-attention rows`: none).
uint64_t DecodeSyncBytes(const ir::Graph& g, const FusePlan& fuse, const TargetProfile& profile,
                         const CompileOptions& options);
// Bytes of the whole sync state (where a kernel uses it): the decode attention's counters, then
// with `--norm-tail` 16 bytes whose first word is the norm tail's counter (norm/tail.h, at word
// DecodeSyncBytes / 4).
uint64_t SyncStateBytes(const ir::Graph& g, const FusePlan& fuse, const TargetProfile& profile,
                        const CompileOptions& options);
constexpr const char* kSyncStateName = "vkqc.sync";

}  // namespace vkqc::attention
