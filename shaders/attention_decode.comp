#version 450
#extension GL_EXT_control_flow_attributes : require
// Decode attention: one query row over the KV cache, in one dispatch with the cache append (and,
// VKQC_ROPE, the rope of q and k). Grid (SPLITS, HKV): workgroup (s, kvh) serves the G = HQ / HKV
// query heads that share KV head kvh, over cache positions [s * CHUNK, min((s + 1) * CHUNK, len)),
// len = pos0 + 1, in blocks of BK keys: each key and value is read once for the G heads (all of a
// block's loads in flight together), scores and an online softmax per head in fp32 (running max
// and sum, as attention.comp). Splits past the context return at once.
// The split that holds position pos0 (the last one) also appends the new row: k (rotated) and v
// into the cache at pos0 (f16 round to nearest even with VKQC_KV_F16), and uses the row as the
// cache now holds it; with VKQC_ROPE it writes q_rot and k_rot as the rope ops would.
// With more than one active split, each writes {max, sum, acc[D]} per head to `part`, then counts
// itself in the arrival counter of its KV head (a compiler-owned state buffer, zero at load); the
// last to arrive combines the splits (as attention_combine.comp) and sets the counter back to 0.
// The partials and the counters are coherent buffers; memoryBarrierBuffer orders a split's partials
// before its count (release) and the last split's reads after it (acquire). The combine reuses the
// shared scratch `sp` (G * 128 floats) for the splits' maxima and sums: SPLITS <= 64.
#include "common.glslh"

layout(local_size_x = 128) in;
layout(constant_id = 1) const uint HQ = 1;
layout(constant_id = 2) const uint HKV = 1;
layout(constant_id = 3) const uint S = 1;
layout(constant_id = 4) const uint CHUNK = 64;
layout(constant_id = 5) const uint SPLITS = 1;
layout(constant_id = 6) const float SCALE = 1.0;
layout(constant_id = 7) const uint MAXPOS = 1;

const uint WG = 128;
const uint D = VKQC_D;              // head_dim (even)
const uint G = VKQC_G;              // query heads per KV head
const uint BK = VKQC_BK;            // keys per block (64, 32, 16 or 128)
const uint TPK = WG / BK;           // invocations per key in the score phase
const uint DS = D / TPK;            // dims each of them reads (even)
const uint HD = D / 2;
const uint OPT = (G * D + WG - 1) / WG;  // outputs (head, dim) per invocation

#ifdef VKQC_ROPE
#define B_CS 4
#define B_KC 5
#define B_VC 6
#define B_QR 7
#define B_KR 8
#define B_PART 9
#define B_SYNC 10
#define B_Y 11
#else
#define B_KC 4
#define B_VC 5
#define B_PART 6
#define B_SYNC 7
#define B_Y 8
#endif

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer Vn { float v[]; };
layout(std140, binding = 3) uniform P { int pos0; };  // the position: a uniform (not a storage buffer)
#ifdef VKQC_ROPE
layout(std430, binding = B_CS) readonly buffer T { vec2 cs[]; };
layout(std430, binding = B_QR) writeonly buffer QR { float qr[]; };
layout(std430, binding = B_KR) writeonly buffer KR { float kr[]; };
#endif
#ifdef VKQC_KV_F16
layout(std430, binding = B_KC) buffer KC { uint kc[]; };
layout(std430, binding = B_VC) buffer VC { uint vc[]; };
#else
layout(std430, binding = B_KC) buffer KC { vec2 kc[]; };
layout(std430, binding = B_VC) buffer VC { vec2 vc[]; };
#endif
layout(std430, binding = B_PART) coherent buffer Part { float part[]; };
layout(std430, binding = B_SYNC) coherent buffer Sync { uint arrived[]; };
layout(std430, binding = B_Y) writeonly buffer Y { float y[]; };

shared float qs[G * D];        // the G queries, rotated and scaled
shared float kn[D], vn[D];     // the new row as the cache holds it
shared float sp[G * BK * TPK];  // partial dot products of a block
shared float sc[G * BK];       // scores, then probabilities
const uint HDP = HD + VKQC_VS_PAD;  // a row of vs, padded by one pair where it fits (the score
                                    // phase's stores then hit different banks)
shared vec2 vs[BK * HDP];      // the block's values
shared float mrow[G], lrow[G], crow[G], red[G * 8];
shared uint last;

// A cache word (two values) as loaded, and as two floats. f16, VKQC_F16_UNPACK (GPU targets):
// unpackHalf2x16, exact for every half but the subnormal ones (which a device may flush); a
// block whose words hold one takes the integer decode (common.glslh), a branch otherwise not
// taken, so its code is not fetched. Code size is time here: this kernel runs each instruction
// about once per dispatch, and on the H100 the 64 inline integer decodes of a block cost ~8 us per
// layer even at position 0, where they never execute (bench/RESULTS.md, 2026-11-26); decoding
// normal halves by integer bit moves (~11 operations a word) kept most of that cost. Without
// VKQC_F16_UNPACK (CPU devices: llvmpipe's LLVM 15 failed to compile the conversion on aarch64,
// and a CPU pays no instruction-fetch latency): the integer decode throughout.
#ifdef VKQC_KV_F16
#define CACHE_T uint
uint cache_word(bool is_k, uint at) { return is_k ? kc[at] : vc[at]; }
bool has_subnormal(uint w) {  // a half with exponent 0 and a nonzero mantissa
  return (w & 0x7FFFu) - 1u < 0x3FFu || ((w >> 16) & 0x7FFFu) - 1u < 0x3FFu;
}
vec2 cache_value(uint w) { return vec2(f16_to_f32(w & 0xFFFFu), f16_to_f32(w >> 16)); }  // exact
#else
#define CACHE_T vec2
vec2 cache_word(bool is_k, uint at) { return is_k ? kc[at] : vc[at]; }
vec2 cache_value(vec2 w) { return w; }
#endif

// The value the cache holds for x (f16-rounded with VKQC_KV_F16).
float as_cached(float x) {
#ifdef VKQC_KV_F16
  return f16_to_f32(f32_to_f16(x));
#else
  return x;
#endif
}

#ifdef VKQC_ROPE
// Dim d of a head rotated to position p (common.glslh's rope helpers); x: the raw head in shared.
float rotated(float xd, float xp, uint d, uint p) {
  return rope_rotated(xd, xp, rope_first(d, D), cs[p * HD + rope_column(d, D)]);
}
uint partner(uint d) { return rope_partner(d, D); }
#endif

void main() {
  const uint s = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
  const uint len = uint(clamp(pos0 + 1, 1, int(S)));
  const uint begin = s * CHUNK, end = min(begin + CHUNK, len);
  if (begin >= end) return;  // uniform: this split lies past the context
  const uint nact = (len + CHUNK - 1u) / CHUNK;
  const bool owner = pos0 >= 0 && uint(pos0) < S && s == nact - 1u;  // holds position pos0
  const uint pc = uint(max(pos0, 0));

  // 1. The queries (and, for the owner, the new row) into shared memory.
  {  // every load in flight at once
    float qv[OPT];
    [[unroll]] for (uint r = 0; r < OPT; ++r) qv[r] = tid + r * WG < G * D ? q[kvh * G * D + tid + r * WG] : 0.0;
    float kv[(D + WG - 1) / WG], vv[(D + WG - 1) / WG];
    if (owner)
      [[unroll]] for (uint r = 0; r < (D + WG - 1) / WG; ++r) {
        const uint d = min(tid + r * WG, D - 1u);
        kv[r] = k[kvh * D + d];
        vv[r] = v[kvh * D + d];
      }
    [[unroll]] for (uint r = 0; r < OPT; ++r)
      if (tid + r * WG < G * D) qs[tid + r * WG] = qv[r];
    if (owner)
      [[unroll]] for (uint r = 0; r < (D + WG - 1) / WG; ++r)
        if (tid + r * WG < D) {
          kn[tid + r * WG] = kv[r];
          vn[tid + r * WG] = as_cached(vv[r]);
        }
  }
  if (tid < G) {
    mrow[tid] = -uintBitsToFloat(0x7F800000u);
    lrow[tid] = 0.0;
  }
  barrier();
#ifdef VKQC_ROPE
  {
    const uint p = uint(clamp(pos0, 0, int(MAXPOS) - 1));
    float rq[OPT];
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint i = tid + r * WG;
      if (i < G * D) {
        const uint d = i % D, base = i - d;
        rq[r] = rotated(qs[i], qs[base + partner(d)], d, p);
      }
    }
    float rk = 0.0;
    if (owner && tid < D) rk = rotated(kn[tid], kn[partner(tid)], tid, p);
    barrier();
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint i = tid + r * WG;
      if (i < G * D) {
        if (owner) qr[kvh * G * D + i] = rq[r];
        qs[i] = rq[r] * SCALE;
      }
    }
    if (owner && tid < D) {
      kr[kvh * D + tid] = rk;
      kn[tid] = as_cached(rk);
    }
  }
#else
  for (uint i = tid; i < G * D; i += WG) qs[i] *= SCALE;
  if (owner)
    for (uint d = tid; d < D; d += WG) kn[d] = as_cached(kn[d]);
#endif
  barrier();
  // The new row into the cache (read from shared memory below, never from the cache).
  if (owner)
    for (uint i = tid; i < HD; i += WG) {
      const uint at = (kvh * S + pc) * HD + i;
#ifdef VKQC_KV_F16
      kc[at] = f32_to_f16(kn[2u * i]) | (f32_to_f16(kn[2u * i + 1u]) << 16);
      vc[at] = f32_to_f16(vn[2u * i]) | (f32_to_f16(vn[2u * i + 1u]) << 16);
#else
      kc[at] = vec2(kn[2u * i], kn[2u * i + 1u]);
      vc[at] = vec2(vn[2u * i], vn[2u * i + 1u]);
#endif
    }

  float acc[OPT];
  [[unroll]] for (uint r = 0; r < OPT; ++r) acc[r] = 0.0;
  const uint kk = tid / TPK, j = tid % TPK;
  for (uint kb = begin; kb < end; kb += BK) {
    // 2. Scores: TPK invocations per key, DS dims each; keys and values of the block all in flight.
    const uint key = kb + kk;
    float dots[G];
    [[unroll]] for (uint g = 0; g < G; ++g) dots[g] = 0.0;
    vec2 vr[DS / 2];
    if (key < end) {
      const bool fresh = owner && key == pc;
      const uint at = (kvh * S + key) * HD + j * (DS / 2);
      vec2 kp[DS / 2];
      if (fresh) {
        [[unroll]] for (uint i = 0; i < DS / 2; ++i) {
          const uint d = j * DS + 2u * i;
          kp[i] = vec2(kn[d], kn[d + 1u]);
          vr[i] = vec2(vn[d], vn[d + 1u]);
        }
      } else {
        CACHE_T kw[DS / 2], vw[DS / 2];
        [[unroll]] for (uint i = 0; i < DS / 2; ++i) {
          kw[i] = cache_word(true, at + i);
          vw[i] = cache_word(false, at + i);
        }
#if defined(VKQC_KV_F16) && defined(VKQC_F16_UNPACK)
        bool sub = false;
        [[unroll]] for (uint i = 0; i < DS / 2; ++i) sub = sub || has_subnormal(kw[i]) || has_subnormal(vw[i]);
        if (!sub) {
          [[unroll]] for (uint i = 0; i < DS / 2; ++i) {
            kp[i] = unpackHalf2x16(kw[i]);
            vr[i] = unpackHalf2x16(vw[i]);
          }
        } else
#endif
        {
          [[unroll]] for (uint i = 0; i < DS / 2; ++i) {  // unrolled: kp, vr stay in registers
            kp[i] = cache_value(kw[i]);
            vr[i] = cache_value(vw[i]);
          }
        }
      }
      [[unroll]] for (uint i = 0; i < DS / 2; ++i) {
        const uint d = j * DS + 2u * i;
        [[unroll]] for (uint g = 0; g < G; ++g) dots[g] += qs[g * D + d] * kp[i].x + qs[g * D + d + 1u] * kp[i].y;
      }
    } else {
      [[unroll]] for (uint i = 0; i < DS / 2; ++i) vr[i] = vec2(0.0);
    }
    [[unroll]] for (uint g = 0; g < G; ++g) sp[(g * BK + kk) * TPK + j] = dots[g];
    [[unroll]] for (uint i = 0; i < DS / 2; ++i) vs[kk * HDP + j * (DS / 2) + i] = vr[i];
    barrier();
    for (uint i = tid; i < G * BK; i += WG) {
      const uint c = i % BK;
      float sum = 0.0;
      [[unroll]] for (uint t = 0; t < TPK; ++t) sum += sp[i * TPK + t];
      sc[i] = kb + c < end ? sum : -uintBitsToFloat(0x7F800000u);
    }
    barrier();
    // 3. Online softmax per head: block maximum, correction of the running sums, probabilities.
    for (uint t = tid; t < G * 8; t += WG) {
      const uint g = t / 8;
      float mx = -uintBitsToFloat(0x7F800000u);
      for (uint c = t % 8; c < BK; c += 8) mx = max(mx, sc[g * BK + c]);
      red[t] = mx;
    }
    barrier();
    if (tid < G) {
      float mx = mrow[tid];
      [[unroll]] for (uint t = 0; t < 8; ++t) mx = max(mx, red[tid * 8 + t]);
      crow[tid] = exp(mrow[tid] - mx);  // the first block: exp(-inf) = 0
      mrow[tid] = mx;
    }
    barrier();
    for (uint i = tid; i < G * BK; i += WG) sc[i] = exp(sc[i] - mrow[i / BK]);
    barrier();
    for (uint t = tid; t < G * 8; t += WG) {
      const uint g = t / 8;
      float sum = 0.0;
      for (uint c = t % 8; c < BK; c += 8) sum += sc[g * BK + c];
      red[t] = sum;
    }
    barrier();
    if (tid < G) {
      float sum = 0.0;
      [[unroll]] for (uint t = 0; t < 8; ++t) sum += red[tid * 8 + t];
      lrow[tid] = lrow[tid] * crow[tid] + sum;
    }
    // 4. acc = acc * correction + sum_c p_c v_c, one (head, dim) per invocation and r.
    [[unroll]] for (uint r = 0; r < OPT; ++r) acc[r] *= crow[min((tid + r * WG) / D, G - 1u)];
    const uint n = min(BK, end - kb);
    for (uint c = 0; c < n; ++c) {
      [[unroll]] for (uint r = 0; r < OPT; ++r) {
        const uint o = tid + r * WG, g = min(o / D, G - 1u), d = o % D;
        const vec2 vv = vs[c * HDP + d / 2u];
        acc[r] += sc[g * BK + c] * ((d & 1u) != 0u ? vv.y : vv.x);
      }
    }
    barrier();
  }

  const uint h0 = kvh * G;
  if (nact == 1u) {  // the only split: the normalized output
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint o = tid + r * WG;
      if (o < G * D) y[h0 * D + o] = acc[r] / lrow[o / D];
    }
  } else {
    // 5. Partial results, then the last split to arrive combines them.
    if (tid < G) {
      const uint pb = ((h0 + tid) * SPLITS + s) * (D + 2u);
      part[pb] = mrow[tid];
      part[pb + 1u] = lrow[tid];
    }
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint o = tid + r * WG;
      if (o < G * D) part[((h0 + o / D) * SPLITS + s) * (D + 2u) + 2u + o % D] = acc[r];
    }
    memoryBarrierBuffer();
    barrier();
    if (tid == 0) last = atomicAdd(arrived[kvh], 1u) == nact - 1u ? 1u : 0u;
    barrier();
    if (last == 0u) return;
    memoryBarrierBuffer();
    // Up to 16 splits, everything the combine reads of them is in flight at once (one round trip
    // to L2, not two): the accumulators (registers), and the maxima and sums (one load per
    // invocation) -> per head the maximum M, the weights exp(m_t - M) and the sum L. More splits:
    // the accumulators 16 loads at a time after the weights. (H100, 1b decode, RESULTS.md session
    // 5: context 128 1034 -> 1030 us, 2040 1085 -> 1078; preloading without the branch: 1019 at
    // 128 but 1092 at 2040.)
    const bool preload = nact <= 16u;
    float pv[OPT][16];
    if (preload) {
      [[unroll]] for (uint r = 0; r < OPT; ++r) {
        const uint o = min(tid + r * WG, G * D - 1u);
        const uint base = (h0 + o / D) * SPLITS * (D + 2u) + 2u + o % D;
        [[unroll]] for (uint u = 0; u < 16u; ++u) pv[r][u] = part[base + min(u, nact - 1u) * (D + 2u)];
      }
    }
    for (uint i = tid; i < G * nact; i += WG) {
      const uint g = i / nact, t = i % nact, pb = ((h0 + g) * SPLITS + t) * (D + 2u);
      sp[g * SPLITS + t] = part[pb];
      sp[(G + g) * SPLITS + t] = part[pb + 1u];
    }
    barrier();
    if (tid < G) {
      float mx = -uintBitsToFloat(0x7F800000u);
      for (uint t = 0; t < nact; ++t) mx = max(mx, sp[tid * SPLITS + t]);
      mrow[tid] = mx;
    }
    barrier();
    for (uint i = tid; i < G * nact; i += WG) {
      const uint g = i / nact, t = i % nact;
      sp[g * SPLITS + t] = exp(sp[g * SPLITS + t] - mrow[g]);
    }
    barrier();
    if (tid < G) {
      float l = 0.0;
      for (uint t = 0; t < nact; ++t) l += sp[(G + tid) * SPLITS + t] * sp[tid * SPLITS + t];
      lrow[tid] = l;
    }
    barrier();
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint o = tid + r * WG;
      if (o < G * D) {
        const uint g = o / D, d = o % D, base = (h0 + g) * SPLITS * (D + 2u) + 2u + d;
        float a = 0.0;
        if (preload) {
          [[unroll]] for (uint u = 0; u < 16u; ++u)
            if (u < nact) a += pv[r][u] * sp[g * SPLITS + u];
        } else {
          for (uint t0 = 0; t0 < nact; t0 += 16u) {
            float pw[16];
            [[unroll]] for (uint u = 0; u < 16u; ++u) pw[u] = part[base + min(t0 + u, nact - 1u) * (D + 2u)];
            [[unroll]] for (uint u = 0; u < 16u; ++u)
              if (t0 + u < nact) a += pw[u] * sp[g * SPLITS + t0 + u];
          }
        }
        y[(h0 + g) * D + d] = a / lrow[g];
      }
    }
    if (tid == 0) atomicExchange(arrived[kvh], 0u);
  }
}
