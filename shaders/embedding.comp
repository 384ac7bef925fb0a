#version 450
// Embedding gather: y[t][c] = row ids[t] of the table, dequantized; an id outside [0, TOTAL_V)
// gives zeros. The binding holds the table's rows [ROW0, ROW0 + V) (a table wider than one
// binding is gathered by one dispatch per part): this dispatch writes the rows of the ids it
// holds, and the part at ROW0 0 also the zeros. Part (words): VKQC_EMB_F32 floats [V][C];
// VKQC_EMB_I8 bytes [V][C] (row-major, 4 per word) then f32 scales [V] (q8csw) or [V][C/G]
// (q8gsw) at SCALE_OFF; VKQC_EMB_I4 nibbles [V][C] (two per byte, low nibble first, two's
// complement) then f32 scales [V][C/G] at SCALE_OFF.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint V = 1;
layout(constant_id = 3) const uint ROWS = 1;
layout(constant_id = 4) const uint SCALE_OFF = 0;
layout(constant_id = 5) const uint G = 32;
layout(constant_id = 6) const uint ROW0 = 0;
layout(constant_id = 7) const uint TOTAL_V = 1;

layout(std430, binding = 0) readonly buffer I { int ids[]; };
layout(std430, binding = 1) readonly buffer W { uint table[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

void main() {
  const uint g = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (g >= ROWS * C) return;
  const uint t = g / C, c = g % C;
  const int id = ids[t];
  if (id < 0 || uint(id) >= TOTAL_V) {
    if (ROW0 == 0) y[g] = 0.0;
    return;
  }
  if (uint(id) < ROW0 || uint(id) - ROW0 >= V) return;  // another part's row
  const uint r = uint(id) - ROW0;
  const uint e = r * C + c;
#if defined(VKQC_EMB_F32)
  y[g] = uintBitsToFloat(table[e]);
#elif defined(VKQC_EMB_I8)
  const int q = bitfieldExtract(int(table[e >> 2]), int((e & 3u) * 8u), 8);
  y[g] = uintBitsToFloat(table[SCALE_OFF + r * (C / G) + c / G]) * float(q);  // q8csw: G = C
#else
  const int q = bitfieldExtract(int(table[e >> 3]), int((e & 7u) * 4u), 4);
  y[g] = uintBitsToFloat(table[SCALE_OFF + r * (C / G) + c / G]) * float(q);
#endif
}
