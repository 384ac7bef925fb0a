#version 450
// Combines the SPLITS partial softmax results of attention.comp (flash decoding): for query row t
// and head h, y = sum_s acc_s * exp(m_s - M) / sum_s l_s * exp(m_s - M), M = max_s m_s, over the
// splits that hold keys of the row (the first ceil(len / CHUNK); the others were never written).
// One workgroup per (h, t), one invocation per output dimension.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 1;
layout(constant_id = 2) const uint HQ = 1;
layout(constant_id = 3) const uint D = 2;
layout(constant_id = 4) const uint S = 1;
layout(constant_id = 5) const uint CHUNK = 64;
layout(constant_id = 6) const uint SPLITS = 1;

layout(std430, binding = 0) readonly buffer Part { float part[]; };
layout(std140, binding = 1) uniform P { int pos0; };  // the position: a uniform (not a storage buffer)
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

void main() {
  const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y;
  const uint len = uint(clamp(pos0 + int(t) + 1, 1, int(S)));
  const uint valid = min((len + CHUNK - 1) / CHUNK, SPLITS);
  const uint base = (t * HQ + h) * SPLITS * (D + 2);
  float mx = -uintBitsToFloat(0x7F800000u);
  for (uint s = 0; s < valid; ++s) mx = max(mx, part[base + s * (D + 2)]);
  float l = 0.0;
  for (uint s = 0; s < valid; ++s) l += part[base + s * (D + 2) + 1] * exp(part[base + s * (D + 2)] - mx);
  for (uint d = gl_LocalInvocationID.x; d < D; d += gl_WorkGroupSize.x) {
    float a = 0.0;
    for (uint s = 0; s < valid; ++s) a += part[base + s * (D + 2) + 2 + d] * exp(part[base + s * (D + 2)] - mx);
    y[(t * HQ + h) * D + d] = a / l;
  }
}
