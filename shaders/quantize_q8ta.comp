#version 450
// Static per-tensor int8 quantization of a float [M,K] activation into packed int8 rows of
// K4P words (K padded with zero bytes): q = clamp(roundEven(x * inv_scale) + zp, -128, 127).
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint K = 4;
layout(constant_id = 3) const uint K4P = 8;  // packed words per row (>= ceil(K/4))

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Q { uint q[]; };

layout(push_constant) uniform Push {
  float inv_scale;
  int zero_point;
} pc;

uint byte_at(uint m, uint k) { return k < K ? quantize_byte(x[m * K + k], pc.inv_scale, pc.zero_point) : 0u; }

void main() {
  uint idx = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (idx >= M * K4P) return;
  uint m = idx / K4P;
  uint k = (idx % K4P) * 4u;
  q[idx] = byte_at(m, k) | (byte_at(m, k + 1u) << 8) | (byte_at(m, k + 2u) << 16) | (byte_at(m, k + 3u) << 24);
}
