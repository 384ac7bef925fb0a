#version 450
// argmax over rows of N floats: the first index of each row's maximum ((value, index) pairs
// compare by value, then lower index, so neither ties nor the reduction order change the answer).
// Single pass (one workgroup per row), or two: VKQC_ARGMAX_PARTIAL reduces span SPAN of a row per
// workgroup (grid GROUPS x ROWS) into part [ROWS][GROUPS]; VKQC_ARGMAX_FINAL reduces those.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint ROWS = 1;
layout(constant_id = 3) const uint LOCAL = 256;
layout(constant_id = 4) const uint GROUPS = 1;
layout(constant_id = 5) const uint SPAN = 1;

struct Best {
  float v;
  uint i;
};

#if defined(VKQC_ARGMAX_FINAL)
layout(std430, binding = 0) readonly buffer X { Best part[]; };
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
#endif
#if defined(VKQC_ARGMAX_PARTIAL)
layout(std430, binding = 1) writeonly buffer Y { Best y[]; };
#else
layout(std430, binding = 1) writeonly buffer Y { int y[]; };
#endif

shared float best_v[LOCAL];
shared uint best_i[LOCAL];

bool better(float v, uint i, float bv, uint bi) { return v > bv || (v == bv && i < bi); }

void main() {
  const uint lid = gl_LocalInvocationID.x;
#if defined(VKQC_ARGMAX_PARTIAL)
  const uint row = gl_WorkGroupID.y, g = gl_WorkGroupID.x;
  const uint lo = g * SPAN, hi = min(lo + SPAN, N);
#else
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= ROWS) return;  // uniform per workgroup
#endif
  float bv = -uintBitsToFloat(0x7F800000u);
  uint bi = 0xFFFFFFFFu;
#if defined(VKQC_ARGMAX_FINAL)
  for (uint i = lid; i < GROUPS; i += LOCAL) {
    const Best b = part[row * GROUPS + i];
    if (better(b.v, b.i, bv, bi)) { bv = b.v; bi = b.i; }
  }
#elif defined(VKQC_ARGMAX_PARTIAL)
  for (uint i = lo + lid; i < hi; i += LOCAL) {
    const float v = x[row * N + i];
    if (better(v, i, bv, bi)) { bv = v; bi = i; }
  }
#else
  for (uint i = lid; i < N; i += LOCAL) {
    const float v = x[row * N + i];
    if (better(v, i, bv, bi)) { bv = v; bi = i; }
  }
#endif
  best_v[lid] = bv;
  best_i[lid] = bi;
  barrier();
  for (uint s = LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s && better(best_v[lid + s], best_i[lid + s], best_v[lid], best_i[lid])) {
      best_v[lid] = best_v[lid + s];
      best_i[lid] = best_i[lid + s];
    }
    barrier();
  }
  if (lid != 0) return;
#if defined(VKQC_ARGMAX_PARTIAL)
  y[row * GROUPS + g] = Best(best_v[0], best_i[0]);
#else
  y[row] = int(best_i[0] == 0xFFFFFFFFu ? 0u : best_i[0]);
#endif
}
