#version 450
// Dequantize packed int8 rows [M][K4P] words to float [M][K]: real = scale * (q - zp), with
// per-tensor parameters (push constants) or per-row ones (VKQC_ACT_ROW: binding 2).
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint K = 4;
layout(constant_id = 3) const uint K4P = 8;

layout(std430, binding = 0) readonly buffer Q { uint q[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
#ifdef VKQC_ACT_ROW
layout(std430, binding = 2) readonly buffer P { RowParams row_params[]; };
#endif

layout(push_constant) uniform Push {
  float scale;
  int zero_point;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= M * K) return;
  const uint m = i / K, k = i % K;
#ifdef VKQC_ACT_ROW
  const float s = row_params[m].scale;
  const int zp = row_params[m].zero_point;
#else
  const float s = pc.scale;
  const int zp = pc.zero_point;
#endif
  const int v = bitfieldExtract(int(q[m * K4P + k / 4u]), int(8u * (k % 4u)), 8);
  y[i] = s * float(v - zp);
}
