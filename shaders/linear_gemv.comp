#version 450
// Cooperative GEMV for linear at small M; variants in linear_common.glslh. A workgroup of T
// threads computes NR output channels for MB rows (the row block: gl_WorkGroupID.z, and with RB
// row blocks side by side also the workgroup index modulo RB).
// Threads split K in units of one uvec4 of packed weights (16 K values for q8, 32 for int4;
// neighbouring threads read neighbouring 16-byte words, all loads are 16 bytes wide). Each
// thread first issues the loads of UNR units x NR channels (weights and their group scales),
// then computes, so UNR*NR loads are in flight per thread. Then the workgroup reduces: a
// shared-memory tree, or with VKQC_SUBGROUP subgroupAdd and a short shared-memory pass (the
// subgroup size SG is pinned at pipeline creation).
// Int4 x int8 with groups of a multiple of 32 (one group per unit): the nibbles u (0..15) are
// dotted with the int8 activations directly and the zero points are applied per unit with
// sums: sum (x - zx)(u - zw) = sum xu - zw sum x - zx sum u + 32 zx zw, where sum x is computed
// once per unit and row and shared by the NR channels. Exact int32 per group, one fp32 fold.
// Other int4 layers fold int32 partial sums into fp32 once per 8-value word.
// Float x int8 with K a multiple of 16: one unit of 16 activations loaded as 4 vec4 per row and
// shared by the NR channels; the weight bytes become floats by exponent-bit arithmetic.
// q8gsw (groups a multiple of 32, so each 16-value unit lies in one group): int8 x int8 folds
// (sum x w - zx sum w) into fp32 per unit with the group's scale; float x int8 scales per unit.
// VKQC_OUT_PAIRS: a gate/up pair's interleaved channels leave as silu(gate) * up (see the epilogue).
#define VKQC_VEC4
#extension GL_EXT_control_flow_attributes : enable
layout(local_size_x_id = 0) in;
#include "linear_common.glslh"
#ifdef VKQC_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(constant_id = 13) const uint NR = 4;   // output channels per workgroup
layout(constant_id = 14) const uint MB = 1;   // rows per workgroup
layout(constant_id = 15) const uint SG = 32;  // pinned subgroup size (VKQC_SUBGROUP only)
layout(constant_id = 16) const uint UNR = 1;  // uvec4 units per thread and loop iteration
layout(constant_id = 20) const uint RB = 1;   // row blocks launched side by side (LinearChoice::row_blocks)

const uint T = gl_WorkGroupSize.x;  // power of two
const uint UNITS = KW / 4u;         // uvec4 units of weights per channel (16 or 32 K values)
#ifdef VKQC_W4
const uint K8 = K / 8u;             // real int4 words per channel
#endif
const uint ONES = 0x01010101u;

#if defined(VKQC_INT_DOT) && !defined(VKQC_WG)
#define ACC_T int
#else
#define ACC_T float
#endif

#ifdef VKQC_SUBGROUP
shared ACC_T red[(T / SG) * MB * NR];  // every row's partials at once (epilogue_rows)
#else
shared ACC_T red[T * MB * NR];  // every row's sums at once (epilogue_rows)
#endif
shared float outv[MB * NR];

ACC_T acc[MB * NR];
#ifdef VKQC_INT_DOT
int zx[MB];
#endif

uvec4 weight_unit(uint n, uint c) { return cw4[n * UNITS + c]; }

#ifdef VKQC_XQ_PROLOGUE
// The row's per-token quantization (dq8ca) into shared memory, every load in flight: min' and
// max' over the workgroup, the parameters (dq8ca_params, as quantize_dq8ca.comp), the words.
const uint RVP = (K4P + T - 1u) / T;  // words of the row per thread
shared float pmin[T], pmax[T];
void quantize_row_prologue(uint t) {
  vec4 v[RVP];
  [[unroll]] for (uint j = 0u; j < RVP; ++j) {
    const uint w = t + j * T;
    v[j] = w < K / 4u ? xf4[w] : vec4(0.0);
  }
#ifdef VKQC_XQ_SILU
  // silu(x) * u as quantize_dq8ca.comp's VKQC_ROW_SWIGLU computes it (zeros past K stay zero).
  [[unroll]] for (uint j = 0u; j < RVP; ++j) {
    const uint w = t + j * T;
    if (w < K / 4u) v[j] = v[j] / (1.0 + exp(-v[j])) * xu4[w];
  }
#endif
#ifdef VKQC_XQ_ADD
  // The residual add (zeros past K stay zero), its sum written by the first workgroup.
  [[unroll]] for (uint j = 0u; j < RVP; ++j) {
    const uint w = t + j * T;
    if (w < K / 4u) {
      v[j] += xb4[w];
#ifdef VKQC_XQ_SUM
      if (gl_WorkGroupID.x == 0u && gl_WorkGroupID.y == 0u && gl_WorkGroupID.z == 0u) xsum4[w] = v[j];
#endif
    }
  }
#endif
#ifdef VKQC_XQ_NORM
  {  // rms_norm: the sum of squares over the workgroup, then v * inv * w (quantize_dq8ca.comp's order)
    float ss = 0.0;
    [[unroll]] for (uint j = 0u; j < RVP; ++j) ss += dot(v[j], v[j]);
#ifdef VKQC_SUBGROUP
    ss = subgroupAdd(ss);
    if (gl_SubgroupInvocationID == 0u) pmin[gl_SubgroupID] = ss;
    barrier();
    ss = 0.0;
    for (uint g = 0u; g < T / SG; ++g) ss += pmin[g];
#else
    pmin[t] = ss;
    barrier();
    for (uint s = T / 2u; s > 0u; s >>= 1) {
      if (t < s) pmin[t] += pmin[t + s];
      barrier();
    }
    ss = pmin[0];
#endif
    barrier();  // pmin is the min/max reduction's below
    const float inv = 1.0 / sqrt(ss / float(K) + XQ_EPS);
    [[unroll]] for (uint j = 0u; j < RVP; ++j) {
      const uint w = t + j * T;
      if (w < K / 4u) v[j] = v[j] * inv * xg4[w];
    }
  }
#endif
  float lo = 0.0, hi = 0.0;
  [[unroll]] for (uint j = 0u; j < RVP; ++j) {
    lo = min(lo, min(min(v[j].x, v[j].y), min(v[j].z, v[j].w)));
    hi = max(hi, max(max(v[j].x, v[j].y), max(v[j].z, v[j].w)));
  }
#ifdef VKQC_SUBGROUP
  lo = subgroupMin(lo);
  hi = subgroupMax(hi);
  if (gl_SubgroupInvocationID == 0u) {
    pmin[gl_SubgroupID] = lo;
    pmax[gl_SubgroupID] = hi;
  }
  barrier();
  if (t == 0u) {
    for (uint g = 1u; g < T / SG; ++g) {
      lo = min(lo, pmin[g]);
      hi = max(hi, pmax[g]);
    }
#else
  pmin[t] = lo;
  pmax[t] = hi;
  barrier();
  for (uint s = T / 2u; s > 0u; s >>= 1) {
    if (t < s) {
      pmin[t] = min(pmin[t], pmin[t + s]);
      pmax[t] = max(pmax[t], pmax[t + s]);
    }
    barrier();
  }
  if (t == 0u) {
    lo = pmin[0];
    hi = pmax[0];
#endif
    float scale, inv;
    int zp;
    dq8ca_params(lo, hi, scale, zp, inv);
    xq_scale = scale;
    xq_inv = inv;
    xq_zp = zp;
  }
  barrier();
  const float inv = xq_inv;
  const int zp = xq_zp;
  [[unroll]] for (uint j = 0u; j < RVP; ++j) {
    const uint w = t + j * T;
    if (w < K4P) {
      uint word = 0u;
      for (uint b = 0u; b < 4u; ++b)
        if (4u * w + b < K) word |= quantize_byte(v[j][b], inv, zp) << (8u * b);
      xs4[w >> 2u][w & 3u] = word;
    }
  }
  barrier();
}
#endif

#if !defined(VKQC_INT_DOT)
vec4 x_vec(uint m, uint word) {  // 4 K values of word `word` (4 values each), zero past K
#ifdef VKQC_X_Q8
  return word < K4P ? (unpack_i8x4(XWORD(m * K4P + word)) - float(act_zero_point(m))) * act_scale(m) : vec4(0.0);
#else
  vec4 v = vec4(0.0);
  for (uint j = 0u; j < 4u; ++j) {
    const uint k = word * 4u + j;
    if (k < K) v[j] = XF(m * K + k);
  }
  return v;
#endif
}
#endif

#if defined(VKQC_INT_DOT) && defined(VKQC_W4)
// Int4 x int8, groups a multiple of 32: see the header. A batch is UNR units x NR channels of
// weights and their group parameters (registers), loaded before it is computed; with the plain
// row-quantization prologue the first batch is loaded before the prologue, so its DRAM latency
// overlaps the row's quantization instead of following it.
uvec4 bw[UNR * NR];
float bs[UNR * NR];
int bz[UNR * NR];
#ifdef VKQC_W4_MIN
float bm[UNR * NR];
#define INT4_MIN_TO(M, i, n, g) M[i] = weight_min(n, g)
#else
#define INT4_MIN_TO(M, i, n, g)
#endif
// One batch into the register arrays W (units), S (scales), Z (zero points), MN (minimums, q4gmw).
#define LOAD_INT4_BATCH_INTO(W, S, Z, MN, c0, n0)                                                  \
  {                                                                                               \
    const uint UR = K8 / 4u; /* K is a multiple of GS, hence of 32: every unit is real */          \
    for (uint u = 0u; u < UNR; ++u) {                                                             \
      const uint c = min((c0) + u * T, UR - 1u); /* clamped: loaded, never used */                \
      const uint g = (c * 32u) / GS;                                                              \
      for (uint r = 0u; r < NR; ++r) {                                                            \
        const uint n = min((n0) + r, N - 1u);                                                     \
        W[u * NR + r] = weight_unit(n, c);                                                        \
        S[u * NR + r] = weight_scale(n, g);                                                       \
        Z[u * NR + r] = int(weight_zp(n, g));                                                     \
        INT4_MIN_TO(MN, u * NR + r, n, g);                                                        \
      }                                                                                           \
    }                                                                                             \
  }
void load_int4_batch(uint c0, uint n0) { LOAD_INT4_BATCH_INTO(bw, bs, bz, bm, c0, n0) }
void compute_int4_batch(uint c0, uint mbase) {
  const uint UR = K8 / 4u;
  for (uint u = 0u; u < UNR; ++u) {
    const uint c = c0 + u * T;
    if (c >= UR) break;
#ifndef VKQC_W4_MIN
    if (MB > 1u) {
      // Several rows: each channel's unit becomes (u - zw) bytes once, their sum sw once, so a row
      // costs 8 dot products per channel, sum (x - zx)(u - zw) = sum x (u - zw) - zx sw, instead of
      // 8 plus its activation sum (8 more, shared by only NR channels) and sum u. The fold into
      // fp32 converts without a conversion instruction: the bits of 1.5 * 2^23 plus p are the
      // float 1.5 * 2^23 + p exactly (|p| <= 32 * 255 * 15 < 2^22).
      uvec4 wl[NR], wh[NR];
      int sw[NR];
      for (uint r = 0u; r < NR; ++r) {
        const uvec4 w = bw[u * NR + r];
        const uint z = uint(bz[u * NR + r]);
        wl[r] = uvec4(nibbles_minus_zp(w.x & 0x0F0F0F0Fu, z), nibbles_minus_zp(w.y & 0x0F0F0F0Fu, z),
                      nibbles_minus_zp(w.z & 0x0F0F0F0Fu, z), nibbles_minus_zp(w.w & 0x0F0F0F0Fu, z));
        wh[r] = uvec4(nibbles_minus_zp((w.x >> 4u) & 0x0F0F0F0Fu, z), nibbles_minus_zp((w.y >> 4u) & 0x0F0F0F0Fu, z),
                      nibbles_minus_zp((w.z >> 4u) & 0x0F0F0F0Fu, z), nibbles_minus_zp((w.w >> 4u) & 0x0F0F0F0Fu, z));
        sw[r] = SDOT(wl[r].x, ONES) + SDOT(wl[r].y, ONES) + SDOT(wl[r].z, ONES) + SDOT(wl[r].w, ONES) +
                SDOT(wh[r].x, ONES) + SDOT(wh[r].y, ONES) + SDOT(wh[r].z, ONES) + SDOT(wh[r].w, ONES);
      }
      for (uint mi = 0u; mi < MB; ++mi) {
        const uint xi = min(mbase + mi, M - 1u) * (K4P / 4u) + 2u * c;
        const uvec4 xa = XQ4(xi), xb = XQ4(xi + 1u);
        for (uint r = 0u; r < NR; ++r) {
          const int p = SDOT(xa.x, wl[r].x) + SDOT(xa.y, wh[r].x) + SDOT(xa.z, wl[r].y) + SDOT(xa.w, wh[r].y) +
                        SDOT(xb.x, wl[r].z) + SDOT(xb.y, wh[r].z) + SDOT(xb.z, wl[r].w) + SDOT(xb.w, wh[r].w) -
                        zx[mi] * sw[r];
          acc[mi * NR + r] = fma(intBitsToFloat(0x4B400000 + p) - 12582912.0, bs[u * NR + r], acc[mi * NR + r]);
        }
      }
      continue;
    }
#endif
    for (uint mi = 0u; mi < MB; ++mi) {
      const uint xi = min(mbase + mi, M - 1u) * (K4P / 4u) + 2u * c;
      const uvec4 xa = XQ4(xi), xb = XQ4(xi + 1u);
      const int xs = SDOT(xa.x, ONES) + SDOT(xa.y, ONES) + SDOT(xa.z, ONES) + SDOT(xa.w, ONES) +
                     SDOT(xb.x, ONES) + SDOT(xb.y, ONES) + SDOT(xb.z, ONES) + SDOT(xb.w, ONES);
      for (uint r = 0u; r < NR; ++r) {
        const uvec4 w = bw[u * NR + r];
        const uvec4 lo = w & 0x0F0F0F0Fu, hi = (w >> 4u) & 0x0F0F0F0Fu;
        // Word q holds K values 8q..8q+3 (low nibbles) and 8q+4..8q+7 (high): x words 2q, 2q+1.
        const int p = SDOT(xa.x, lo.x) + SDOT(xa.y, hi.x) + SDOT(xa.z, lo.y) + SDOT(xa.w, hi.y) +
                      SDOT(xb.x, lo.z) + SDOT(xb.y, hi.z) + SDOT(xb.z, lo.w) + SDOT(xb.w, hi.w);
        const uvec4 s4 = lo + hi;  // bytes <= 30; their sum over the 4 words <= 120: no carry
        const int su = SDOT(s4.x + s4.y + s4.z + s4.w, ONES);
        const int z = bz[u * NR + r];
        acc[mi * NR + r] += float(p - z * xs - zx[mi] * su + 32 * zx[mi] * z) * bs[u * NR + r];
#ifdef VKQC_W4_MIN
        acc[mi * NR + r] -= float(xs - 32 * zx[mi]) * bm[u * NR + r];  // the minimum: m * sum(x - zx)
#endif
      }
    }
  }
}
#ifdef VKQC_ROWS_PIPELINE
// Several rows (LinearChoice::pipelined, select.cc: 4 rows on GPUs): the next batch's weights and
// group parameters are loaded into a second set of registers before this batch is computed, so
// their memory round trip overlaps the batch's MB x NR dot products instead of following them.
// The last batch re-reads its clamped unit (load_int4_batch's clamp): no branch on the loads.
uvec4 nw[UNR * NR];
float ns[UNR * NR];
int nz[UNR * NR];
#ifdef VKQC_W4_MIN
float nm[UNR * NR];
#endif
void load_int4_next(uint c0, uint n0) { LOAD_INT4_BATCH_INTO(nw, ns, nz, nm, c0, n0) }
#endif
// `loaded`: the first batch (c0 = t) is in the registers already.
void loop_int4_dot_unit_groups(uint t, uint n0, uint mbase, bool loaded) {
  const uint UR = K8 / 4u;
#ifdef VKQC_ROWS_PIPELINE
  if (!loaded) load_int4_batch(t, n0);
  for (uint c0 = t; c0 < UR; c0 += T * UNR) {
    load_int4_next(c0 + T * UNR, n0);
    compute_int4_batch(c0, mbase);
    for (uint i = 0u; i < UNR * NR; ++i) {  // (arrays sized by specialization constants: no whole copy)
      bw[i] = nw[i];
      bs[i] = ns[i];
      bz[i] = nz[i];
#ifdef VKQC_W4_MIN
      bm[i] = nm[i];
#endif
    }
  }
#else
  for (uint c0 = t; c0 < UR; c0 += T * UNR) {
    if (!loaded || c0 != t) load_int4_batch(c0, n0);
    compute_int4_batch(c0, mbase);
  }
#endif
}
#endif

#if defined(VKQC_INT_DOT) && defined(VKQC_W8G)
// Int8 x int8 with a scale per group: exact int32 per 16-value unit, one fp32 fold per unit.
void loop_int8_dot_groups(uint t, uint n0, uint mbase) {
  const uint UR = K / 16u;  // K is a multiple of GS, hence of 32: every unit is real
  for (uint c0 = t; c0 < UR; c0 += T * UNR) {
    uvec4 wv[UNR * NR];
    float sw[UNR * NR];
    for (uint u = 0u; u < UNR; ++u) {
      const uint c = min(c0 + u * T, UR - 1u);  // clamped: loaded, never used
      const uint g = (c * 16u) / GS;
      for (uint r = 0u; r < NR; ++r) {
        const uint n = min(n0 + r, N - 1u);
        wv[u * NR + r] = weight_unit(n, c);
        sw[u * NR + r] = weight_scale(n, g);
      }
    }
    for (uint u = 0u; u < UNR; ++u) {
      const uint c = c0 + u * T;
      if (c >= UR) break;
      for (uint mi = 0u; mi < MB; ++mi) {
        const uvec4 xv = XQ4(min(mbase + mi, M - 1u) * (K4P / 4u) + c);
        for (uint r = 0u; r < NR; ++r) {
          const uvec4 w = wv[u * NR + r];
          const int p = SDOT(xv.x, w.x) + SDOT(xv.y, w.y) + SDOT(xv.z, w.z) + SDOT(xv.w, w.w);
          const int ws = SDOT(w.x, ONES) + SDOT(w.y, ONES) + SDOT(w.z, ONES) + SDOT(w.w, ONES);
          acc[mi * NR + r] += float(p - zx[mi] * ws) * sw[u * NR + r];
        }
      }
    }
  }
}
#endif

#if defined(VKQC_INT_DOT) && !defined(VKQC_WG)
// Int8 x int8: int32 accumulation over the whole row, zero point applied in the epilogue.
void loop_int8_dot(uint t, uint n0, uint mbase) {
  for (uint c0 = t; c0 < UNITS; c0 += T * UNR) {
    uvec4 wv[UNR * NR];
    for (uint u = 0u; u < UNR; ++u) {
      const uint c = min(c0 + u * T, UNITS - 1u);
      for (uint r = 0u; r < NR; ++r) wv[u * NR + r] = weight_unit(min(n0 + r, N - 1u), c);
    }
    for (uint u = 0u; u < UNR; ++u) {
      const uint c = c0 + u * T;
      if (c >= UNITS) break;
      for (uint mi = 0u; mi < MB; ++mi) {
        const uvec4 xv = XQ4(min(mbase + mi, M - 1u) * (K4P / 4u) + c);
        for (uint r = 0u; r < NR; ++r) {
          const uvec4 w = wv[u * NR + r];
          acc[mi * NR + r] += SDOT(xv.x, w.x) + SDOT(xv.y, w.y) + SDOT(xv.z, w.z) + SDOT(xv.w, w.w);
        }
      }
    }
  }
}
#endif

#if !defined(VKQC_INT_DOT) && !defined(VKQC_X_Q8) && defined(VKQC_W4)
// Float x int4, groups a multiple of 32 (so K is too, and each row of x starts on a vec4): the
// 32 activations of a unit are loaded once per row as 8 vec4 and shared by the NR channels.
void loop_float_int4_unit_groups(uint t, uint n0, uint mbase) {
  const uint UR = K8 / 4u;
  for (uint c0 = t; c0 < UR; c0 += T * UNR) {
    uvec4 wv[UNR * NR];
    float sw[UNR * NR];
    float bias[UNR * NR];
#ifdef VKQC_W4_MIN
    float mw[UNR * NR];
#endif
    for (uint u = 0u; u < UNR; ++u) {
      const uint c = min(c0 + u * T, UR - 1u);
      const uint g = (c * 32u) / GS;
      for (uint r = 0u; r < NR; ++r) {
        const uint n = min(n0 + r, N - 1u);
        wv[u * NR + r] = weight_unit(n, c);
        sw[u * NR + r] = weight_scale(n, g);
        bias[u * NR + r] = 8388608.0 + float(weight_zp(n, g));
#ifdef VKQC_W4_MIN
        mw[u * NR + r] = weight_min(n, g);
#endif
      }
    }
    for (uint u = 0u; u < UNR; ++u) {
      const uint c = c0 + u * T;
      if (c >= UR) break;
      for (uint mi = 0u; mi < MB; ++mi) {
        const uint xi = (min(mbase + mi, M - 1u) * K) / 4u + 8u * c;
        vec4 xv[8];
        for (uint j = 0u; j < 8u; ++j) xv[j] = x4[xi + j];
#ifdef VKQC_W4_MIN
        float xsum = 0.0;
        for (uint j = 0u; j < 8u; ++j) xsum += dot(xv[j], vec4(1.0));
#endif
        for (uint r = 0u; r < NR; ++r) {
          const uvec4 w = wv[u * NR + r];
          const float b = bias[u * NR + r];
          float p = 0.0;
          for (uint q = 0u; q < 4u; ++q) {
            p += dot(xv[2u * q], ubytes_f(w[q] & 0x0F0F0F0Fu, b)) +
                 dot(xv[2u * q + 1u], ubytes_f((w[q] >> 4u) & 0x0F0F0F0Fu, b));
          }
          acc[mi * NR + r] += p * sw[u * NR + r];
#ifdef VKQC_W4_MIN
          acc[mi * NR + r] -= xsum * mw[u * NR + r];
#endif
        }
      }
    }
  }
}
#endif

#if !defined(VKQC_INT_DOT) && !defined(VKQC_X_Q8) && !defined(VKQC_W4)
// Float x int8 (q8csw; q8gsw scaled per unit), K a multiple of 16 (each row of x starts on a vec4 and every unit is real): the 16
// activations of a unit are loaded once per row as 4 vec4 and shared by the NR channels; UNR x NR
// weight units are in flight per thread.
void loop_float_int8_units(uint t, uint n0, uint mbase) {
  const uint UK = K / 16u;
  for (uint c0 = t; c0 < UK; c0 += T * UNR) {
    uvec4 wv[UNR * NR];
    for (uint u = 0u; u < UNR; ++u) {
      const uint c = min(c0 + u * T, UK - 1u);  // clamped: loaded, never used
      for (uint r = 0u; r < NR; ++r) wv[u * NR + r] = weight_unit(min(n0 + r, N - 1u), c);
    }
    for (uint u = 0u; u < UNR; ++u) {
      const uint c = c0 + u * T;
      if (c >= UK) break;
      for (uint mi = 0u; mi < MB; ++mi) {
        const uint xi = (min(mbase + mi, M - 1u) * K) / 4u + 4u * c;
        const vec4 x0 = x4[xi], x1 = x4[xi + 1u], x2 = x4[xi + 2u], x3 = x4[xi + 3u];
        for (uint r = 0u; r < NR; ++r) {
          const uvec4 w = wv[u * NR + r];
#ifdef VKQC_W8G
          const float s = weight_scale(min(n0 + r, N - 1u), (c * 16u) / GS);
#else
          const float s = 1.0;
#endif
          acc[mi * NR + r] += (dot(x0, bytes_f(w.x)) + dot(x1, bytes_f(w.y)) + dot(x2, bytes_f(w.z)) + dot(x3, bytes_f(w.w))) * s;
        }
      }
    }
  }
}
#endif

#if !defined(VKQC_INT_DOT) || defined(VKQC_W4)
// Float activations (dequant variants), and int4 x int8 with groups shorter than 32.
void loop_general(uint t, uint n0, uint mbase) {
  for (uint c = t; c < UNITS; c += T) {
    uvec4 wvr[NR];
    for (uint r = 0u; r < NR; ++r) wvr[r] = weight_unit(min(n0 + r, N - 1u), c);
    for (uint r = 0u; r < NR; ++r) {
      const uint n = n0 + r;
      if (n >= N) break;
      const uvec4 wv = wvr[r];
#ifdef VKQC_W4
      // Decode the unit's 4 int4 words into 8 int8 words (w - zp). When groups are multiples of
      // the 32-value unit, the whole unit is one group: keep int32 partial sums across its words
      // and fold once; shorter groups fold per word.
      const bool unit_in_one_group = GS % 32u == 0u;
#ifdef VKQC_INT_DOT
      int part[MB];
      for (uint mi = 0u; mi < MB; ++mi) part[mi] = 0;
#ifdef VKQC_W4_MIN
      int partx[MB];  // sum of (x - zx) over the unit, for the minimum
      for (uint mi = 0u; mi < MB; ++mi) partx[mi] = 0;
#endif
#endif
      for (uint q = 0u; q < 4u; ++q) {
        const uint k8 = 4u * c + q;
        if (k8 >= K8) break;
        const uint g = (k8 * 8u) / GS;
        const uint zp = weight_zp(n, g);
        const uint lo = nibbles_minus_zp(wv[q] & 0x0F0F0F0Fu, zp);
        const uint hi = nibbles_minus_zp((wv[q] >> 4) & 0x0F0F0F0Fu, zp);
        const float s = weight_scale(n, g);
#ifdef VKQC_W4_MIN
        const float mn = weight_min(n, g);
#endif
#ifdef VKQC_INT_DOT
        const int sw = SDOT(lo, ONES) + SDOT(hi, ONES);
#else
        const vec4 flo = unpack_i8x4(lo), fhi = unpack_i8x4(hi);
#endif
        for (uint mi = 0u; mi < MB; ++mi) {
          const uint m = mbase + mi;
          if (m >= M) break;
#ifdef VKQC_INT_DOT
          const uint xa = XWORD(m * K4P + 2u * k8), xb = XWORD(m * K4P + 2u * k8 + 1u);
          const int p = SDOT(xa, lo) + SDOT(xb, hi) - zx[mi] * sw;
#ifdef VKQC_W4_MIN
          const int px = SDOT(xa, ONES) + SDOT(xb, ONES) - 8 * zx[mi];  // sum of (x - zx) over the word
#endif
          if (unit_in_one_group) {
            part[mi] += p;
#ifdef VKQC_W4_MIN
            partx[mi] += px;
#endif
          } else {
            acc[mi * NR + r] += float(p) * s;
#ifdef VKQC_W4_MIN
            acc[mi * NR + r] -= float(px) * mn;
#endif
          }
#else
          const vec4 x0 = x_vec(m, 2u * k8), x1 = x_vec(m, 2u * k8 + 1u);
          acc[mi * NR + r] += (dot(x0, flo) + dot(x1, fhi)) * s;
#ifdef VKQC_W4_MIN
          acc[mi * NR + r] -= dot(x0 + x1, vec4(1.0)) * mn;
#endif
#endif
        }
      }
#ifdef VKQC_INT_DOT
      if (unit_in_one_group && 4u * c < K8) {
        const float s = weight_scale(n, (c * 32u) / GS);
        for (uint mi = 0u; mi < MB; ++mi) acc[mi * NR + r] += float(part[mi]) * s;
#ifdef VKQC_W4_MIN
        const float mn = weight_min(n, (c * 32u) / GS);
        for (uint mi = 0u; mi < MB; ++mi) acc[mi * NR + r] -= float(partx[mi]) * mn;
#endif
      }
#endif
#else
#ifdef VKQC_W8G
      const float s = weight_scale(n, (c * 16u) / GS);  // a 16-value unit lies in one group
#else
      const float s = 1.0;
#endif
      for (uint mi = 0u; mi < MB; ++mi) {
        const uint m = mbase + mi;
        if (m >= M) break;
        acc[mi * NR + r] += (dot(x_vec(m, 4u * c), unpack_i8x4(wv.x)) + dot(x_vec(m, 4u * c + 1u), unpack_i8x4(wv.y)) +
                             dot(x_vec(m, 4u * c + 2u), unpack_i8x4(wv.z)) + dot(x_vec(m, 4u * c + 3u), unpack_i8x4(wv.w))) * s;
      }
#endif
    }
  }
}
#endif

#ifdef VKQC_NORM_TAIL
#include "linear_gemv_norm_tail.glslh"
#endif

// The output value of (row m, channel n) from its sum over the workgroup.
float output_value(uint m, uint n, int zxm, ACC_T total) {
#if defined(VKQC_INT_DOT) && !defined(VKQC_WG)
  return finish(n, float(total - zxm * int(CWORD(WSUM_OFF + n))) * (act_scale(m) * weight_scale(n, 0u)));
#elif defined(VKQC_INT_DOT)
  return finish(n, total * act_scale(m));
#elif defined(VKQC_WG)
  return finish(n, total);
#else
  return finish(n, total * weight_scale(n, 0u));
#endif
}

#if defined(VKQC_SEVERAL_ROWS) && defined(VKQC_NORM_TAIL)
#error "a norm tail's GEMV has one row per workgroup"
#endif
#ifdef VKQC_SEVERAL_ROWS
// Several rows finished side by side (VKQC_SEVERAL_ROWS: MB > 1 where select.cc's
// LinearChoice::rows_at_once says so; a norm tail's GEMV has one row): all MB x NR sums reduced at
// once (independent subgroupAdds and the subgroups' partials in `red`, one barrier; without
// subgroups one shared-memory tree over all of them, log2(T) + 1 barriers), then invocation t
// finishes outputs t, t + T, ... (row i / NR, channel i % NR), so the rows' epilogues run side by
// side instead of one row after another with two (tree: log2(T) + 2) barriers each (H100, the 1b
// example's 8-token step 1832 -> 1762 us, bench/RESULTS.md 2026-12-07 sessions 19-20). The sums
// are added in the same order as the one-row form, so the results are the same bits.
void epilogue_rows(uint t, uint n0, uint mbase) {
  const uint R = MB * NR;
#ifdef VKQC_SUBGROUP
  for (uint i = 0u; i < R; ++i) {
    const ACC_T s = subgroupAdd(acc[i]);
    if (gl_SubgroupInvocationID == 0u) red[gl_SubgroupID * R + i] = s;
  }
  barrier();
#else
  // The shared-memory tree over all MB x NR sums at once: log2(T) + 1 barriers.
  for (uint i = 0u; i < R; ++i) red[i * T + t] = acc[i];
  barrier();
  for (uint h = T / 2u; h > 0u; h >>= 1) {
    if (t < h) {
      for (uint i = 0u; i < R; ++i) red[i * T + t] += red[i * T + t + h];
    }
    barrier();
  }
#endif
  for (uint i = t; i < R; i += T) {
#ifdef VKQC_SUBGROUP
    ACC_T total = ACC_T(0);
    for (uint g = 0u; g < T / SG; ++g) total += red[g * R + i];
#else
    const ACC_T total = red[i * T];
#endif
    const uint m = mbase + i / NR, n = n0 + i % NR;
    if (m < M && n < N) {
      // act_zero_point(m) (a dead load on the float paths), not zx[i / NR]: a dynamic index would
      // take zx out of registers.
      const float v = output_value(m, n, act_zero_point(m), total);
#if defined(VKQC_OUT_Q8) || defined(VKQC_OUT_PAIRS)
      outv[i] = v;
#else
      y[m * N + n] = v;
#endif
    }
  }
#ifdef VKQC_OUT_PAIRS
  barrier();
  for (uint j = t; j < R / 2u; j += T) {  // pair j: row j / (NR / 2), pair j % (NR / 2) of the row
    const uint m = mbase + j / (NR / 2u), p = j % (NR / 2u);
    if (m < M && n0 + 2u * p < N) {
      const float g = outv[2u * j];
      y[m * (N / 2u) + n0 / 2u + p] = g / (1.0 + exp(-g)) * outv[2u * j + 1u];
    }
  }
#endif
#ifdef VKQC_OUT_Q8
  barrier();
  for (uint j = t; j < R / 4u; j += T) {  // word j: row j / (NR / 4), word j % (NR / 4) of the row
    const uint m = mbase + j / (NR / 4u), q = j % (NR / 4u);
    if (m < M && n0 + 4u * q < N) {
      uint word = 0u;
      for (uint b = 0u; b < 4u; ++b) {
        if (n0 + 4u * q + b < N) word |= requantize(outv[4u * j + b]) << (8u * b);
      }
      yq[m * N4P + (n0 + 4u * q) / 4u] = word;
    }
  }
#endif
}
#endif

void main() {
  const uint t = gl_LocalInvocationID.x;
  // RB row blocks of MB rows side by side: the row block is the fastest-varying workgroup index,
  // so the blocks over the same channels run together and one memory read of their weights serves
  // all of them (the later ones find it in the L2).
  const uint wgi = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint n0 = (wgi / RB) * NR;
  if (n0 >= N) return;  // uniform across the workgroup
  const uint mbase = (gl_WorkGroupID.z * RB + wgi % RB) * MB;

  for (uint i = 0u; i < MB * NR; ++i) acc[i] = ACC_T(0);
  bool prefetched = false;
#ifdef VKQC_XQ_PROLOGUE
#if defined(VKQC_INT_DOT) && defined(VKQC_W4) && !defined(VKQC_XQ_NORM)
  // The first batch of weights in flight during the prologue. Measured on the H100 (1b decode):
  // o_proj's plain row quantization 6.9 -> 6.5 us; with a norm prologue the registers held across
  // it cost more than the overlap gives (q/k/gate/up 0.2-0.5 us slower), so not there.
  if (GS % 32u == 0u) {
    load_int4_batch(t, n0);
    prefetched = true;
  }
#endif
  quantize_row_prologue(t);
#endif
#ifdef VKQC_INT_DOT
  for (uint mi = 0u; mi < MB; ++mi) zx[mi] = act_zero_point(min(mbase + mi, M - 1u));
#endif

#if defined(VKQC_INT_DOT) && defined(VKQC_W4)
  if (GS % 32u == 0u) {
    loop_int4_dot_unit_groups(t, n0, mbase, prefetched);
  } else {
    loop_general(t, n0, mbase);
  }
#elif defined(VKQC_INT_DOT) && defined(VKQC_W8G)
  loop_int8_dot_groups(t, n0, mbase);
#elif defined(VKQC_INT_DOT)
  loop_int8_dot(t, n0, mbase);
#elif !defined(VKQC_X_Q8) && defined(VKQC_W4)
  if (GS % 32u == 0u) {
    loop_float_int4_unit_groups(t, n0, mbase);
  } else {
    loop_general(t, n0, mbase);
  }
#elif !defined(VKQC_X_Q8)
  if (K % 16u == 0u) {
    loop_float_int8_units(t, n0, mbase);
  } else {
    loop_general(t, n0, mbase);
  }
#else
  loop_general(t, n0, mbase);
#endif

#ifdef VKQC_SEVERAL_ROWS
  epilogue_rows(t, n0, mbase);
  return;
#endif
  for (uint mi = 0u; mi < MB; ++mi) {
    const uint m = mbase + mi;
    // Reduce acc[mi][*] over the workgroup into outv[r] (final values after the epilogue).
#ifdef VKQC_SUBGROUP
    for (uint r = 0u; r < NR; ++r) {
      const ACC_T s = subgroupAdd(acc[mi * NR + r]);
      if (gl_SubgroupInvocationID == 0u) red[gl_SubgroupID * NR + r] = s;
    }
    barrier();
    ACC_T total = ACC_T(0);
    if (t < NR) {
      for (uint g = 0u; g < T / SG; ++g) total += red[g * NR + t];
    }
#else
    for (uint r = 0u; r < NR; ++r) red[r * T + t] = acc[mi * NR + r];
    barrier();
    for (uint s = T / 2u; s > 0u; s >>= 1) {
      if (t < s) {
        for (uint r = 0u; r < NR; ++r) red[r * T + t] += red[r * T + t + s];
      }
      barrier();
    }
    const ACC_T total = t < NR ? red[t * T] : ACC_T(0);
#endif
    const uint n = n0 + t;
    if (t < NR && m < M && n < N) {
#ifdef VKQC_INT_DOT
      const float v = output_value(m, n, zx[mi], total);
#else
      const float v = output_value(m, n, 0, total);
#endif
#if defined(VKQC_OUT_Q8) || defined(VKQC_OUT_PAIRS)
      outv[t] = v;
#elif defined(VKQC_NORM_TAIL)
      Y_STORE(m * N + n, v);
#else
      y[m * N + n] = v;
#endif
    }
#ifdef VKQC_OUT_PAIRS
    // A gate/up pair (compiler/kernels/linear/pair.h): channel 2j is gate's j, 2j + 1 up's j; NR
    // and N are even, so a pair never straddles workgroups. y is [M][N / 2]: silu(gate) * up as
    // the mul's row kernel computes it (quantize_dq8ca.comp, VKQC_ROW_SWIGLU).
    barrier();
    if (t < NR / 2u && m < M && n0 + 2u * t < N) {
      const float g = outv[2u * t];
      y[m * (N / 2u) + n0 / 2u + t] = g / (1.0 + exp(-g)) * outv[2u * t + 1u];
    }
#endif
#ifdef VKQC_OUT_Q8
    barrier();
    // NR is a multiple of 4 for int8 outputs: one thread packs each word.
    if (t < NR / 4u && m < M && n0 + 4u * t < N) {
      uint word = 0u;
      for (uint j = 0u; j < 4u; ++j) {
        if (n0 + 4u * t + j < N) word |= requantize(outv[4u * t + j]) << (8u * j);
      }
      yq[m * N4P + (n0 + 4u * t) / 4u] = word;
    }
#endif
    barrier();
  }
#ifdef VKQC_NORM_TAIL
  norm_tail(t);
#endif
}
