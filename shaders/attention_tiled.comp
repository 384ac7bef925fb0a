#version 450
// Causal attention for prefill (many query rows at once), tiled: a workgroup takes TB query rows
// of all G = HQ / HKV query heads that share one KV head (virtual rows v = row * G + head,
// TB = floor(BR / G), BR = VKQC_BR = 32 or 16; the BR - TB * G virtual rows left over are idle)
// and walks the cache in blocks of BC = 32 keys. Each block's K, then V, is read from global memory
// once into shared memory and used by all virtual rows (the rows kernel read every key once per row
// and head); scores and outputs are register tiles (2 rows x 4 keys; 4 rows x 1 or 2 vec4 columns
// per invocation; 4 * BR invocations) over shared memory. Online softmax in fp32 per virtual row
// (running max m, sum l; the output rescaled by exp(m_old - m_new) per block). Row t attends to
// cache positions 0 .. pos0 + t, as attention.comp; same buffers and spec constants.
// D = VKQC_D (a multiple of 4 up to 128, a define: it sizes the register tiles; output columns
// past D / 4 of the last 16-column slice are idle). Grid (ceil(ROWS / TB), HKV).
// Shared memory: AttentionTiledShared (compiler/kernels/attention/lower.cc):
// BR 32: 22,016 B (D 64) / 38,400 (D 128); BR 16: 15,360 / 27,648.
#include "common.glslh"

layout(local_size_x = 4 * VKQC_BR) in;
layout(constant_id = 1) const uint ROWS = 1;
layout(constant_id = 2) const uint HQ = 1;
layout(constant_id = 3) const uint HKV = 1;
layout(constant_id = 5) const uint S = 1;
layout(constant_id = 8) const float SCALE = 1.0;

layout(std430, binding = 0) readonly buffer Q { vec4 q[]; };
#ifdef VKQC_KV_F16
layout(std430, binding = 1) readonly buffer KC { uvec2 kc[]; };
layout(std430, binding = 2) readonly buffer VC { uvec2 vc[]; };
#else
layout(std430, binding = 1) readonly buffer KC { vec4 kc[]; };
layout(std430, binding = 2) readonly buffer VC { vec4 vc[]; };
#endif
layout(std140, binding = 3) uniform P { int pos0; };
layout(std430, binding = 4) writeonly buffer O { vec4 o[]; };

const uint D = VKQC_D;
const uint D4 = D / 4;          // vec4 per row
const uint STRIDE = D4 + 1;     // padded row of the shared tiles (bank conflicts)
const uint BR = VKQC_BR, BC = 32, NT = 4 * BR;
const uint G = HQ / HKV;        // query heads per KV head (<= BR: checked by the lowering)
const uint TB = BR / G;         // query rows per workgroup
const uint VR = TB * G;         // virtual rows in use (BR when G divides BR; the rest compute zeros)
const uint DV = (D4 + 15) / 16; // vec4 columns per invocation in the output tile (1 or 2)

shared vec4 qs[BR * STRIDE];    // scaled queries
shared vec4 kvs[BC * STRIDE];   // the block's keys, then its values
shared float ps[BR * (BC + 1)]; // scores, then probabilities
shared float mrow[BR], lrow[BR];
shared float crow[BR];          // exp(m_old - m_new) of the current block

vec4 load_kv(bool values, uint at) {
#ifdef VKQC_KV_F16
  const uvec2 w = values ? vc[at] : kc[at];
#ifdef VKQC_F16_UNPACK
  // GPU targets: unpackHalf2x16 where no half is subnormal (exact for every other half), as the
  // decode kernel (attention_decode.comp): the integer decode's code costs instruction fetch.
  const uvec4 h = uvec4(w.x & 0x7FFFu, (w.x >> 16) & 0x7FFFu, w.y & 0x7FFFu, (w.y >> 16) & 0x7FFFu) - 1u;
  if (all(greaterThanEqual(h, uvec4(0x3FFu)))) return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
#endif
  return vec4(f16_to_f32(w.x & 0xFFFFu), f16_to_f32(w.x >> 16), f16_to_f32(w.y & 0xFFFFu), f16_to_f32(w.y >> 16));
#else
  return values ? vc[at] : kc[at];
#endif
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint tok0 = gl_WorkGroupID.x * TB, kvh = gl_WorkGroupID.y;
  const uint tlast = min(tok0 + TB, ROWS) - 1u;
  const uint len = uint(clamp(pos0 + int(tlast) + 1, 1, int(S)));  // keys the block's last row sees
  for (uint i = tid; i < BR * D4; i += NT) {
    const uint v = i / D4, c = i % D4, t = tok0 + v / G, h = kvh * G + v % G;
    qs[v * STRIDE + c] = t < ROWS && v < VR ? q[(t * HQ + h) * D4 + c] * SCALE : vec4(0.0);
  }
  if (tid < BR) {
    mrow[tid] = -uintBitsToFloat(0x7F800000u);
    lrow[tid] = 0.0;
  }
  // Score tile: rows sr, sr + BR / 2; keys sk + 8 j.
  const uint sr = tid / 8u, sk = tid % 8u, sr2 = sr + BR / 2u;
  // Output tile: rows orow + BR / 4 * i; vec4 columns od + 16 j.
  const uint orow = tid / 16u, od = tid % 16u, OSTEP = BR / 4u;
  vec4 acc[4][DV];
  for (uint i = 0; i < 4u; ++i)
    for (uint j = 0; j < DV; ++j) acc[i][j] = vec4(0.0);
  const uint cache_base = kvh * S * D4;
  for (uint kb = 0; kb < len; kb += BC) {
    barrier();  // the previous block's values are read; qs and the row state are written
    for (uint i = tid; i < BC * D4; i += NT) {
      const uint r = i / D4, c = i % D4, key = kb + r;
      kvs[r * STRIDE + c] = key < len ? load_kv(false, cache_base + key * D4 + c) : vec4(0.0);
    }
    barrier();
    float s0[4], s1[4];
    for (uint j = 0; j < 4u; ++j) s0[j] = s1[j] = 0.0;
    for (uint c = 0; c < D4; ++c) {
      const vec4 qa = qs[sr * STRIDE + c], qb = qs[sr2 * STRIDE + c];
      for (uint j = 0; j < 4u; ++j) {
        const vec4 k = kvs[(sk + 8u * j) * STRIDE + c];
        s0[j] += dot(qa, k);
        s1[j] += dot(qb, k);
      }
    }
    const uint lim0 = uint(pos0) + tok0 + sr / G, lim1 = uint(pos0) + tok0 + sr2 / G;
    for (uint j = 0; j < 4u; ++j) {
      const uint key = kb + sk + 8u * j;
      const bool in_range = key < len;
      ps[sr * (BC + 1u) + sk + 8u * j] = in_range && key <= lim0 ? s0[j] : -uintBitsToFloat(0x7F800000u);
      ps[sr2 * (BC + 1u) + sk + 8u * j] = in_range && key <= lim1 ? s1[j] : -uintBitsToFloat(0x7F800000u);
    }
    barrier();
    if (tid < BR) {  // online softmax of row tid over this block (key 0 is never masked: m is finite)
      const uint base = tid * (BC + 1u);
      float m = mrow[tid];
      for (uint k = 0; k < BC; ++k) m = max(m, ps[base + k]);
      const float corr = exp(mrow[tid] - m);  // the first block: exp(-inf) = 0
      float sum = 0.0;
      for (uint k = 0; k < BC; ++k) {
        const float p = exp(ps[base + k] - m);
        ps[base + k] = p;
        sum += p;
      }
      lrow[tid] = lrow[tid] * corr + sum;
      mrow[tid] = m;
      crow[tid] = corr;
    }
    for (uint i = tid; i < BC * D4; i += NT) {  // the values (the keys were read before the barrier)
      const uint r = i / D4, c = i % D4, key = kb + r;
      kvs[r * STRIDE + c] = key < len ? load_kv(true, cache_base + key * D4 + c) : vec4(0.0);
    }
    barrier();
    for (uint i = 0; i < 4u; ++i) {
      const float corr = crow[orow + OSTEP * i];
      for (uint j = 0; j < DV; ++j) acc[i][j] *= corr;
    }
    const uint nk = min(BC, len - kb);
    for (uint k = 0; k < nk; ++k) {
      vec4 v[DV];
      for (uint j = 0; j < DV; ++j) v[j] = od + 16u * j < D4 ? kvs[k * STRIDE + od + 16u * j] : vec4(0.0);
      for (uint i = 0; i < 4u; ++i) {
        const float p = ps[(orow + OSTEP * i) * (BC + 1u) + k];
        for (uint j = 0; j < DV; ++j) acc[i][j] += p * v[j];
      }
    }
  }
  barrier();
  for (uint i = 0; i < 4u; ++i) {
    const uint v = orow + OSTEP * i, t = tok0 + v / G, h = kvh * G + v % G;
    if (t >= ROWS || v >= VR) continue;
    const float inv = 1.0 / lrow[v];
    for (uint j = 0; j < DV; ++j)
      if (od + 16u * j < D4) o[(t * HQ + h) * D4 + od + 16u * j] = acc[i][j] * inv;
  }
}
