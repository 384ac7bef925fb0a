#version 450
// softmax over rows of C floats (the last axis): y = exp(x - max) / sum(exp(x - max)), the row
// maximum subtracted before exp, sums in fp32. One workgroup per row (rows spread over x and y of
// the grid), any C: each invocation strides over the row; shared-memory trees for the maximum and
// the sum.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint ROWS = 1;
layout(constant_id = 3) const uint LOCAL = 256;  // = local_size_x, a power of two

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

shared float partial[LOCAL];

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= ROWS) return;  // uniform per workgroup
  const uint lid = gl_LocalInvocationID.x, base = row * C;
  float m = uintBitsToFloat(0xFF800000u);  // -inf
  for (uint c = lid; c < C; c += LOCAL) m = max(m, x[base + c]);
  partial[lid] = m;
  barrier();
  for (uint s = LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] = max(partial[lid], partial[lid + s]);
    barrier();
  }
  m = partial[0];
  barrier();
  float sum = 0.0;
  for (uint c = lid; c < C; c += LOCAL) sum += exp(x[base + c] - m);
  partial[lid] = sum;
  barrier();
  for (uint s = LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  const float inv = 1.0 / partial[0];
  for (uint c = lid; c < C; c += LOCAL) y[base + c] = exp(x[base + c] - m) * inv;
}
