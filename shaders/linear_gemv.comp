#version 450
// Cooperative GEMV for linear at small M; variants in linear_common.glslh. A workgroup of T
// threads computes NR output channels for MB rows (gl_WorkGroupID.z selects the row block).
// Threads split K in units of one uvec4 of packed weights (16 K values for q8, 32 for int4;
// neighbouring threads read neighbouring 16-byte words), then reduce across the workgroup: a
// shared-memory tree, or with VKQC_SUBGROUP subgroupAdd and a short shared-memory pass (the
// subgroup size SG is pinned at pipeline creation). Int4 layers fold int32 partial sums into
// fp32 once per 32-value unit when groups are multiples of 32, else once per 8-value word.
layout(local_size_x_id = 0) in;
#include "linear_common.glslh"
#ifdef VKQC_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(constant_id = 13) const uint NR = 4;   // output channels per workgroup
layout(constant_id = 14) const uint MB = 1;   // rows per workgroup
layout(constant_id = 15) const uint SG = 32;  // pinned subgroup size (VKQC_SUBGROUP only)

const uint T = gl_WorkGroupSize.x;  // power of two
#ifdef VKQC_W4
const uint UNITS = KW / 4u;         // uvec4 units of weights per channel (32 K values each)
const uint K8 = K / 8u;             // real int4 words per channel
#else
const uint UNITS = KW / 4u;         // 16 K values each
#endif

#if defined(VKQC_INT_DOT) && !defined(VKQC_W4)
#define ACC_T int
#else
#define ACC_T float
#endif

#ifdef VKQC_SUBGROUP
shared ACC_T red[(T / SG) * NR];
#else
shared ACC_T red[T * NR];
#endif
shared float outv[NR];

// Activation words 4*c .. 4*c+3 of row m as int8 (int path) or four vec4 of floats.
#if defined(VKQC_INT_DOT)
uvec4 x_words(uint m, uint w4) { return uvec4(xq[m * K4P + w4], xq[m * K4P + w4 + 1u], xq[m * K4P + w4 + 2u], xq[m * K4P + w4 + 3u]); }
#else
vec4 x_vec(uint m, uint word) {  // 4 K values of word `word` (4 values each), zero past K
#ifdef VKQC_X_Q8
  return word < K4P ? (unpack_i8x4(xq[m * K4P + word]) - float(act_zero_point(m))) * act_scale(m) : vec4(0.0);
#else
  vec4 v = vec4(0.0);
  for (uint j = 0u; j < 4u; ++j) {
    const uint k = word * 4u + j;
    if (k < K) v[j] = x[m * K + k];
  }
  return v;
#endif
}
#endif

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint n0 = wg * NR;
  if (n0 >= N) return;  // uniform across the workgroup
  const uint mbase = gl_WorkGroupID.z * MB;

  ACC_T acc[MB * NR];
  for (uint i = 0u; i < MB * NR; ++i) acc[i] = ACC_T(0);
#ifdef VKQC_INT_DOT
  int zx[MB];
  for (uint mi = 0u; mi < MB; ++mi) zx[mi] = act_zero_point(min(mbase + mi, M - 1u));
#endif

  for (uint c = t; c < UNITS; c += T) {
    for (uint r = 0u; r < NR; ++r) {
      const uint n = n0 + r;
      if (n >= N) break;
      const uvec4 wv = uvec4(cw[n * KW + 4u * c], cw[n * KW + 4u * c + 1u], cw[n * KW + 4u * c + 2u],
                             cw[n * KW + 4u * c + 3u]);
#ifdef VKQC_W4
      // Decode the unit's 4 int4 words into 8 int8 words (w - zp). When groups are multiples of
      // the 32-value unit, the whole unit is one group: keep int32 partial sums across its words
      // and fold once; shorter groups fold per word.
      const bool unit_in_one_group = GS % 32u == 0u;
#ifdef VKQC_INT_DOT
      int part[MB];
      for (uint mi = 0u; mi < MB; ++mi) part[mi] = 0;
#endif
      for (uint q = 0u; q < 4u; ++q) {
        const uint k8 = 4u * c + q;
        if (k8 >= K8) break;
        const uint g = (k8 * 8u) / GS;
        const uint zp = weight_zp(n, g);
        const uint lo = nibbles_minus_zp(wv[q] & 0x0F0F0F0Fu, zp);
        const uint hi = nibbles_minus_zp((wv[q] >> 4) & 0x0F0F0F0Fu, zp);
        const float s = weight_scale(n, g);
#ifdef VKQC_INT_DOT
        const int sw = SDOT(lo, 0x01010101u) + SDOT(hi, 0x01010101u);
#else
        const vec4 flo = unpack_i8x4(lo), fhi = unpack_i8x4(hi);
#endif
        for (uint mi = 0u; mi < MB; ++mi) {
          const uint m = mbase + mi;
          if (m >= M) break;
#ifdef VKQC_INT_DOT
          const int p = SDOT(xq[m * K4P + 2u * k8], lo) + SDOT(xq[m * K4P + 2u * k8 + 1u], hi) - zx[mi] * sw;
          if (unit_in_one_group) {
            part[mi] += p;
          } else {
            acc[mi * NR + r] += float(p) * s;
          }
#else
          acc[mi * NR + r] += (dot(x_vec(m, 2u * k8), flo) + dot(x_vec(m, 2u * k8 + 1u), fhi)) * s;
#endif
        }
      }
#ifdef VKQC_INT_DOT
      if (unit_in_one_group && 4u * c < K8) {
        const float s = weight_scale(n, (c * 32u) / GS);
        for (uint mi = 0u; mi < MB; ++mi) acc[mi * NR + r] += float(part[mi]) * s;
      }
#endif
#else
      for (uint mi = 0u; mi < MB; ++mi) {
        const uint m = mbase + mi;
        if (m >= M) break;
#ifdef VKQC_INT_DOT
        const uvec4 xv = x_words(m, 4u * c);
        acc[mi * NR + r] += SDOT(xv.x, wv.x) + SDOT(xv.y, wv.y) + SDOT(xv.z, wv.z) + SDOT(xv.w, wv.w);
#else
        acc[mi * NR + r] += dot(x_vec(m, 4u * c), unpack_i8x4(wv.x)) + dot(x_vec(m, 4u * c + 1u), unpack_i8x4(wv.y)) +
                            dot(x_vec(m, 4u * c + 2u), unpack_i8x4(wv.z)) + dot(x_vec(m, 4u * c + 3u), unpack_i8x4(wv.w));
#endif
      }
#endif
    }
  }

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
#if defined(VKQC_INT_DOT) && !defined(VKQC_W4)
      const float v = float(total - zx[mi] * int(cw[WSUM_OFF + n])) * (act_scale(m) * weight_scale(n, 0u));
#elif defined(VKQC_INT_DOT)
      const float v = total * act_scale(m);
#elif defined(VKQC_W4)
      const float v = total;
#else
      const float v = total * weight_scale(n, 0u);
#endif
#ifdef VKQC_OUT_Q8
      outv[t] = finish(n, v);
#else
      y[m * N + n] = finish(n, v);
#endif
    }
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
}
