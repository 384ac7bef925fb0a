#version 450
// Cooperative GEMV for linear at small M: a workgroup of T threads computes NR output channels
// for MB rows (gl_WorkGroupID.z selects the row block). Threads split K in 16-value chunks
// (one uvec4 of packed weights each; neighbouring threads read neighbouring 16-byte words),
// then reduce across the workgroup: a shared-memory tree, or with VKQC_SUBGROUP subgroupAdd
// followed by a short shared-memory pass (the subgroup size SG is pinned at pipeline creation).
// Variants: VKQC_INT_DOT (packed int8 x, int32 OpSDot accumulation) or dequant (float x).
#include "common.glslh"
#ifdef VKQC_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint N = 1;
layout(constant_id = 3) const uint K = 4;
layout(constant_id = 4) const uint K4P = 8;   // multiple of 4
layout(constant_id = 5) const uint NR = 4;    // output channels per workgroup
layout(constant_id = 6) const uint MB = 1;    // rows per workgroup
layout(constant_id = 7) const uint SG = 32;   // pinned subgroup size (VKQC_SUBGROUP only)

const uint T = gl_WorkGroupSize.x;  // power of two
const uint K16 = K4P / 4u;

#ifdef VKQC_INT_DOT
layout(std430, binding = 0) readonly buffer X { uvec4 xq[]; };
#define ACC_T int
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
#define ACC_T float
#endif
layout(std430, binding = 1) readonly buffer W { uvec4 w[]; };
layout(std430, binding = 2) readonly buffer P { ChannelParams params[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

#ifdef VKQC_SUBGROUP
shared ACC_T red[(T / SG) * NR];
#else
shared ACC_T red[T * NR];
#endif

layout(push_constant) uniform Push {
  float act_scale;
  int act_zero_point;
  uint flags;
  float reserved;
} pc;

void store(uint m, uint n, ACC_T acc) {
  if (m >= M || n >= N) return;
  const ChannelParams p = params[n];
#ifdef VKQC_INT_DOT
  float v = float(acc - pc.act_zero_point * p.weight_sum) * (pc.act_scale * p.weight_scale);
#else
  float v = acc * p.weight_scale;
#endif
  if ((pc.flags & LINEAR_FLAG_BIAS) != 0u) v += p.bias;
  if ((pc.flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
  y[m * N + n] = v;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint n0 = wg * NR;
  if (n0 >= N) return;  // uniform across the workgroup
  const uint mbase = gl_WorkGroupID.z * MB;

  ACC_T acc[MB * NR];
  for (uint i = 0; i < MB * NR; ++i) acc[i] = ACC_T(0);

  for (uint c = t; c < K16; c += T) {
    uvec4 wv[NR];
    for (uint r = 0; r < NR; ++r) wv[r] = (n0 + r < N) ? w[(n0 + r) * K16 + c] : uvec4(0u);
    for (uint mi = 0; mi < MB; ++mi) {
      const uint m = mbase + mi;
      if (m >= M) break;
#ifdef VKQC_INT_DOT
      const uvec4 xv = xq[m * K16 + c];
      for (uint r = 0; r < NR; ++r) {
        acc[mi * NR + r] += SDOT(xv.x, wv[r].x) + SDOT(xv.y, wv[r].y) +
                            SDOT(xv.z, wv[r].z) + SDOT(xv.w, wv[r].w);
      }
#else
      vec4 xv[4];
      const uint kb = c * 16u;
      for (uint q = 0; q < 4u; ++q) {
        for (uint j = 0; j < 4u; ++j) {
          const uint k = kb + q * 4u + j;
          xv[q][j] = k < K ? x[m * K + k] : 0.0;
        }
      }
      for (uint r = 0; r < NR; ++r) {
        acc[mi * NR + r] += dot(xv[0], unpack_i8x4(wv[r].x)) + dot(xv[1], unpack_i8x4(wv[r].y)) +
                            dot(xv[2], unpack_i8x4(wv[r].z)) + dot(xv[3], unpack_i8x4(wv[r].w));
      }
#endif
    }
  }

  for (uint mi = 0; mi < MB; ++mi) {
#ifdef VKQC_SUBGROUP
    for (uint r = 0; r < NR; ++r) {
      const ACC_T s = subgroupAdd(acc[mi * NR + r]);
      if (gl_SubgroupInvocationID == 0u) red[gl_SubgroupID * NR + r] = s;
    }
    barrier();
    if (t < NR) {
      ACC_T s = ACC_T(0);
      for (uint g = 0; g < T / SG; ++g) s += red[g * NR + t];
      store(mbase + mi, n0 + t, s);
    }
    barrier();
#else
    for (uint r = 0; r < NR; ++r) red[r * T + t] = acc[mi * NR + r];
    barrier();
    for (uint s = T / 2u; s > 0u; s >>= 1) {
      if (t < s) {
        for (uint r = 0; r < NR; ++r) red[r * T + t] += red[r * T + t + s];
      }
      barrier();
    }
    if (t < NR) store(mbase + mi, n0 + t, red[t * T]);
    barrier();
#endif
  }
}
