// attention lowering (kernels/lowering.h): append the run's K/V rows to the KV cache
// (shaders/kv_append.comp), then attention.comp over the cache, split along the cache length
// when few (row, head) pairs would leave the GPU idle (flash decoding, combined by
// attention_combine.comp).
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

}  // namespace vkqc::attention
