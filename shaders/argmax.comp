#version 450
// argmax over rows of N floats: the first index of each row's maximum (ties and the reduction
// order never change the answer: (value, index) pairs compare by value, then lower index).
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint ROWS = 1;
layout(constant_id = 3) const uint LOCAL = 256;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { int y[]; };

shared float best_v[LOCAL];
shared uint best_i[LOCAL];

bool better(float v, uint i, float bv, uint bi) { return v > bv || (v == bv && i < bi); }

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= ROWS) return;
  const uint lid = gl_LocalInvocationID.x, base = row * N;
  float bv = -uintBitsToFloat(0x7F800000u);
  uint bi = 0xFFFFFFFFu;
  for (uint i = lid; i < N; i += LOCAL) {
    const float v = x[base + i];
    if (better(v, i, bv, bi)) { bv = v; bi = i; }
  }
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
  if (lid == 0) y[row] = int(best_i[0] == 0xFFFFFFFFu ? 0u : best_i[0]);
}
