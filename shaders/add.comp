#version 450
// Elementwise add of two tensors of the same shape. VKQC_ADD_Q8: int8 inputs with their own
// per-tensor parameters (packed rows [ROWS][C4P] words), int8 output requantized per tensor:
// q = clamp(roundEven((s_a*(a - z_a) + s_b*(b - z_b)) * inv_s_out) + z_out) after relu/relu6.
// Otherwise float: y = a + b (then relu/relu6). One invocation per word (int8) or value.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 1;
layout(constant_id = 2) const uint C = 1;
layout(constant_id = 3) const uint C4P = 8;

#ifdef VKQC_ADD_Q8
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
#else
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#endif

layout(push_constant) uniform Push {
  float scale_a;
  int zero_point_a;
  float scale_b;
  int zero_point_b;
  float out_inv_scale;
  int out_zero_point;
  uint flags;
  uint reserved;
} pc;

float activate(float v) {
  if ((pc.flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
  if ((pc.flags & LINEAR_FLAG_RELU6) != 0u) v = clamp(v, 0.0, 6.0);
  return v;
}

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
#ifdef VKQC_ADD_Q8
  const uint cw = (C + 3u) / 4u;
  if (i >= ROWS * cw) return;
  const uint row = i / cw, w = i % cw, idx = row * C4P + w;
  const uint wa = a[idx], wb = b[idx];
  uint word = 0u;
  for (uint j = 0u; j < 4u; ++j) {
    if (w * 4u + j >= C) break;
    const int qa = bitfieldExtract(int(wa), int(8u * j), 8), qb = bitfieldExtract(int(wb), int(8u * j), 8);
    precise float ra = pc.scale_a * float(qa - pc.zero_point_a);
    precise float rb = pc.scale_b * float(qb - pc.zero_point_b);
    precise float v = ra + rb;
    word |= quantize_byte(activate(v), pc.out_inv_scale, pc.out_zero_point) << (8u * j);
  }
  y[idx] = word;
#else
  if (i >= ROWS * C) return;
  y[i] = activate(a[i] + b[i]);
#endif
}
