#version 450
// Rotary position embedding: one invocation per rotated pair of x [ROWS][WIDTH] (heads of D
// values), row r at position pos0 + r, cos/sin from the compile-time table [MAXPOS][D/2][2].
// VKQC_INTERLEAVED: pairs (2i, 2i+1); else halves (i, i + D/2). Positions past the table are
// clamped to its last row (the runtime refuses such runs before they start).
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint WIDTH = 1;
layout(constant_id = 2) const uint D = 2;
layout(constant_id = 3) const uint ROWS = 1;
layout(constant_id = 4) const uint MAXPOS = 1;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std140, binding = 1) uniform P { int pos0; };  // the position: a uniform (not a storage buffer)
layout(std430, binding = 2) readonly buffer T { vec2 cs[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

void main() {
  const uint g = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  const uint half_d = D / 2, pairs = WIDTH / 2;
  if (g >= ROWS * pairs) return;
  const uint r = g / pairs, pr = g % pairs, h = pr / half_d, i = pr % half_d;
  const uint base = r * WIDTH + h * D;
#ifdef VKQC_INTERLEAVED
  const uint i0 = base + 2u * i, i1 = i0 + 1u;
#else
  const uint i0 = base + i, i1 = i0 + half_d;
#endif
  const uint p = uint(clamp(pos0 + int(r), 0, int(MAXPOS) - 1));
  const vec2 c = cs[p * half_d + i];
  const float x0 = x[i0], x1 = x[i1];
  y[i0] = rope_rotated(x0, x1, true, c);  // common.glslh
  y[i1] = rope_rotated(x1, x0, false, c);
}
