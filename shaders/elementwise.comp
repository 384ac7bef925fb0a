#version 450
// Elementwise float ops over COUNT values: VKQC_OP_MUL y = a * b; VKQC_OP_SILU y = a / (1 + exp(-a)).
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint COUNT = 1;

layout(std430, binding = 0) readonly buffer A { float a[]; };
#ifdef VKQC_OP_MUL
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#else
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
#endif

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= COUNT) return;
#ifdef VKQC_OP_MUL
  y[i] = a[i] * b[i];
#else
  const float v = a[i];
  y[i] = v / (1.0 + exp(-v));
#endif
}
