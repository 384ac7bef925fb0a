#version 450
#extension GL_EXT_control_flow_attributes : require
// Causal scaled dot-product attention of ROWS query rows over the KV cache (grouped-query heads:
// query head h reads KV head h / (HQ / HKV)); row t attends to cache positions 0..pos0 + t.
// Grid (SPLITS, HQ, ROWS): workgroup (s, h, t) covers keys [s * CHUNK, min((s + 1) * CHUNK, len))
// in blocks of 64 with an online softmax (running max and sum, fp32). SPLITS == 1 writes the
// normalized output y [ROWS][HQ * D]; SPLITS > 1 (flash decoding) writes per split {max, sum,
// acc[D]} to `part` [ROWS][HQ][SPLITS][D + 2] for attention_combine.comp. Workgroups past the
// row's length return at once, so the work grows with the context, not with S.
#include "common.glslh"

layout(local_size_x = 64) in;
layout(constant_id = 1) const uint ROWS = 1;
layout(constant_id = 2) const uint HQ = 1;
layout(constant_id = 3) const uint HKV = 1;
layout(constant_id = 4) const uint D = 2;
layout(constant_id = 5) const uint S = 1;
layout(constant_id = 6) const uint CHUNK = 64;
layout(constant_id = 7) const uint SPLITS = 1;
layout(constant_id = 8) const float SCALE = 1.0;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
#ifdef VKQC_KV_F16
layout(std430, binding = 1) readonly buffer KC { uint kc[]; };
layout(std430, binding = 2) readonly buffer VC { uint vc[]; };
#else
layout(std430, binding = 1) readonly buffer KC { vec2 kc[]; };
layout(std430, binding = 2) readonly buffer VC { vec2 vc[]; };
#endif
layout(std140, binding = 3) uniform P { int pos0; };  // the position: a uniform (not a storage buffer)
layout(std430, binding = 4) writeonly buffer O { float o[]; };

const uint DMAX = 256;
const uint DPT = (D + 63) / 64;  // output dims per invocation
shared vec2 qs[DMAX / 2];
shared float ps[64];

// Cache words: f16 pairs, or vec2 with an f32 cache. A loop's loads are issued 8 at a time
// before their arithmetic (KB words), in the same summation order: one load at a time, every
// iteration waited for its L2 round trip (bench/RESULTS.md 2026-11-27 session 6). With
// VKQC_F16_UNPACK (GPU targets) a word without a subnormal half decodes by unpackHalf2x16 (exact
// for every other half); one with a subnormal, and every word on CPU devices (llvmpipe's LLVM 15
// failed to compile the conversion on aarch64), by the integer decode.
const uint KB = 8;
#ifdef VKQC_KV_F16
#define CACHE_T uint
vec2 pair(uint w) {
#ifdef VKQC_F16_UNPACK
  if (!f16_pair_has_subnormal(w)) return unpackHalf2x16(w);
#endif
  return vec2(f16_to_f32(w & 0xFFFFu), f16_to_f32(w >> 16));
}
#else
#define CACHE_T vec2
vec2 pair(vec2 w) { return w; }
#endif

void main() {
  const uint s = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_WorkGroupID.z, lid = gl_LocalInvocationID.x;
  const uint half_d = D / 2;
  const uint len = uint(clamp(pos0 + int(t) + 1, 1, int(S)));
  const uint begin = s * CHUNK, end = min(begin + CHUNK, len);
  if (begin >= end) return;  // uniform: this split lies past the row's context
  const uint kvh = h / (HQ / HKV);
  const uint qbase = (t * HQ + h) * D;
  for (uint i = lid; i < half_d; i += 64) qs[i] = vec2(q[qbase + 2 * i], q[qbase + 2 * i + 1]) * SCALE;
  barrier();
  float m = -uintBitsToFloat(0x7F800000u), l = 0.0;
  float acc[DPT];
  for (uint j = 0; j < DPT; ++j) acc[j] = 0.0;
  const uint cache_base = kvh * S * half_d;
  for (uint kb = begin; kb < end; kb += 64) {
    const uint key = kb + lid;
    float sc = -uintBitsToFloat(0x7F800000u);
    if (key < end) {
      float dot = 0.0;
      const uint kr = cache_base + key * half_d;
      for (uint i0 = 0; i0 < half_d; i0 += KB) {
        CACHE_T kw[KB];
        [[unroll]] for (uint u = 0; u < KB; ++u) kw[u] = kc[kr + min(i0 + u, half_d - 1)];  // clamped: never used
        [[unroll]] for (uint u = 0; u < KB; ++u) {
          if (i0 + u < half_d) {
            const vec2 kv = pair(kw[u]);
            dot += qs[i0 + u].x * kv.x + qs[i0 + u].y * kv.y;
          }
        }
      }
      sc = dot;
    }
    ps[lid] = sc;
    barrier();
    const uint n = min(64u, end - kb);
    float bm = m;
    for (uint j = 0; j < n; ++j) bm = max(bm, ps[j]);
    const float corr = exp(m - bm);  // m = -inf on the first block: corr = 0, l and acc are 0
    barrier();
    ps[lid] = lid < n ? exp(sc - bm) : 0.0;
    barrier();
    float bs = 0.0;
    for (uint j = 0; j < n; ++j) bs += ps[j];
    l = l * corr + bs;
    for (uint dd = 0; dd < DPT; ++dd) {
      const uint d = lid + dd * 64;
      if (d >= D) break;
      float a = acc[dd] * corr;
      const uint vbase = cache_base + kb * half_d + d / 2;
      for (uint j0 = 0; j0 < n; j0 += KB) {
        CACHE_T vw[KB];
        [[unroll]] for (uint u = 0; u < KB; ++u) vw[u] = vc[vbase + min(j0 + u, n - 1) * half_d];  // clamped
        [[unroll]] for (uint u = 0; u < KB; ++u) {
          if (j0 + u < n) {
            const vec2 vv = pair(vw[u]);
            a += ps[j0 + u] * ((d & 1u) != 0u ? vv.y : vv.x);
          }
        }
      }
      acc[dd] = a;
    }
    m = bm;
    barrier();
  }
  if (SPLITS == 1) {
    for (uint dd = 0; dd < DPT; ++dd) {
      const uint d = lid + dd * 64;
      if (d < D) o[qbase + d] = acc[dd] / l;
    }
  } else {
    const uint pbase = ((t * HQ + h) * SPLITS + s) * (D + 2);
    if (lid == 0) {
      o[pbase] = m;
      o[pbase + 1] = l;
    }
    for (uint dd = 0; dd < DPT; ++dd) {
      const uint d = lid + dd * 64;
      if (d < D) o[pbase + 2 + d] = acc[dd];
    }
  }
}
