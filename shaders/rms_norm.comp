#version 450
// rms_norm over rows of C floats: y = x * (1 / sqrt(mean(x^2) + eps)) * w. One workgroup per row
// (rows spread over x and y of the grid), a shared-memory tree for the sum of squares (fp32).
// VKQC_VEC4 (C a multiple of 4): 16-byte loads and stores.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint ROWS = 1;
layout(constant_id = 3) const float EPS = 1e-5;
layout(constant_id = 4) const uint LOCAL = 256;  // = local_size_x, a power of two

#ifdef VKQC_VEC4
#define T vec4
const uint CW = C / 4;
float sq(vec4 v) { return dot(v, v); }
#else
#define T float
const uint CW = C;
float sq(float v) { return v * v; }
#endif
layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) readonly buffer W { T w[]; };
layout(std430, binding = 2) writeonly buffer Y { T y[]; };

shared float partial[LOCAL];

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= ROWS) return;  // uniform per workgroup
  const uint lid = gl_LocalInvocationID.x, base = row * CW;
  float ss = 0.0;
  for (uint c = lid; c < CW; c += LOCAL) ss += sq(x[base + c]);
  partial[lid] = ss;
  barrier();
  for (uint s = LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  const float inv = 1.0 / sqrt(partial[0] / float(C) + EPS);
  for (uint c = lid; c < CW; c += LOCAL) y[base + c] = x[base + c] * inv * w[c];
}
