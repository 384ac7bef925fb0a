#version 450
// One input of a concat, written into its place in the output (one dispatch per input, each
// binding only that input and the output, so any number of inputs fits 4 storage buffers).
//  float (default): the input is OUTER slices of INNER values; slice o goes to
//    y[o * TOTAL + OFFSET ..]. One invocation per value.
//  VKQC_CONCAT_Q8_ROWS (int8, axis before the last): the same over packed row words (INNER, TOTAL,
//    OFFSET in words); bytes past the C channels of a row are written as 0. One per word.
//  VKQC_CONCAT_Q8_LAST (int8, the last axis): rows of CI channels ([ROWS][CI4P] words) go to
//    channels OFF.. of the output rows ([ROWS][CO4P] words of CO channels). One invocation per
//    output word the input touches; a word shared with another input keeps that input's bytes
//    (read back: the dispatches of one concat run in order), bytes past CO are written as 0.
// VKQC_CONCAT_REQUANT: int8 codes requantized, q = clamp(roundEven(s_x * (q - z_x) * inv_s_y) +
// z_y); otherwise copied.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint COUNT = 1;   // invocations with work
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint TOTAL = 1;
layout(constant_id = 4) const uint OFFSET = 0;
layout(constant_id = 5) const uint C = 1;       // Q8: channels of a row (CO for Q8_LAST)
layout(constant_id = 6) const uint C4P = 8;     // Q8: words of an output row
layout(constant_id = 7) const uint CI = 1;      // Q8_LAST: the input's channels
layout(constant_id = 8) const uint CI4P = 8;    // Q8_LAST: words of an input row
layout(constant_id = 9) const uint NW = 1;      // Q8_LAST: output words per row the input touches

#if defined(VKQC_CONCAT_Q8_ROWS) || defined(VKQC_CONCAT_Q8_LAST)
#define Q8 1
layout(std430, binding = 0) readonly buffer X { uint x[]; };
#ifdef VKQC_CONCAT_Q8_LAST
layout(std430, binding = 1) buffer Y { uint y[]; };
#else
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
#endif
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
#endif

#ifdef VKQC_CONCAT_REQUANT
layout(push_constant) uniform Push {
  float act_scale;
  int act_zero_point;
  float out_inv_scale;
  int out_zero_point;
} pc;
#endif

#ifdef Q8
// Code q (a signed byte in the low 8 bits, sign-extended) in the output's parameters, as a byte.
uint convert(int q) {
#ifdef VKQC_CONCAT_REQUANT
  precise float v = float(q - pc.act_zero_point) * pc.act_scale;
  return quantize_byte(v, pc.out_inv_scale, pc.out_zero_point);
#else
  return uint(q) & 0xFFu;
#endif
}
#endif

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= COUNT) return;
#if defined(VKQC_CONCAT_Q8_LAST)
  const uint row = i / NW, w = OFFSET / 4u + i % NW;
  const bool whole = w * 4u >= OFFSET && w * 4u + 4u <= OFFSET + CI;
  const uint old = whole ? 0u : y[row * C4P + w];
  uint word = 0u;
  for (uint b = 0u; b < 4u; ++b) {
    const uint ch = w * 4u + b;
    uint v;
    if (ch >= OFFSET && ch < OFFSET + CI) {
      const uint k = ch - OFFSET;
      v = convert(bitfieldExtract(int(x[row * CI4P + k / 4u]), int(8u * (k % 4u)), 8));
    } else {
      v = ch >= C ? 0u : (old >> (8u * b)) & 0xFFu;
    }
    word |= v << (8u * b);
  }
  y[row * C4P + w] = word;
#elif defined(VKQC_CONCAT_Q8_ROWS)
  const uint o = i / INNER, r = i % INNER, c0 = (r % C4P) * 4u;
  const uint src = x[i];
  uint word = 0u;
  for (uint b = 0u; b < 4u; ++b)
    if (c0 + b < C) word |= convert(bitfieldExtract(int(src), int(8u * b), 8)) << (8u * b);
  y[o * TOTAL + OFFSET + r] = word;
#else
  const uint o = i / INNER, r = i % INNER;
  y[o * TOTAL + OFFSET + r] = x[i];
#endif
}
