#version 450
// Transpose as a gather (compiler/kernels/layout/layout.h): the output's multi-index over up to
// six dimensions D0..D5 (leading ones 1) reads the source at sum_i idx_i * S_i. One invocation
// per output value, so neighbouring invocations write neighbouring values.
// VKQC_I8: int8 tensors in packed rows (K4P words per output row of D5 values, zero padded; S_i
// are byte offsets in the packed source); one invocation per output word of four values.
// VKQC_RESHAPE (with VKQC_I8): a reshape that re-pads rows: output value e (row-major) is source
// value e, in source rows of KX values (KX4P words each).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint COUNT = 1;  // output values (f32) or words (i8)
layout(constant_id = 2) const uint D0 = 1;
layout(constant_id = 3) const uint D1 = 1;
layout(constant_id = 4) const uint D2 = 1;
layout(constant_id = 5) const uint D3 = 1;
layout(constant_id = 6) const uint D4 = 1;
layout(constant_id = 7) const uint D5 = 1;
layout(constant_id = 8) const uint S0 = 0;
layout(constant_id = 9) const uint S1 = 0;
layout(constant_id = 10) const uint S2 = 0;
layout(constant_id = 11) const uint S3 = 0;
layout(constant_id = 12) const uint S4 = 0;
layout(constant_id = 13) const uint S5 = 0;
layout(constant_id = 14) const uint K4P = 8;
layout(constant_id = 15) const uint KX = 1;
layout(constant_id = 16) const uint KX4P = 8;

#ifdef VKQC_I8
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
uint source_byte(uint b) { return (x[b >> 2] >> (8u * (b & 3u))) & 0xFFu; }
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
#endif

// Source offset of the output index whose dimensions 0..4 are the row-major `row`.
uint row_offset(uint row) {
  uint off = (row % D4) * S4;
  row /= D4;
  off += (row % D3) * S3;
  row /= D3;
  off += (row % D2) * S2;
  row /= D2;
  off += (row % D1) * S1;
  row /= D1;
  return off + row * S0;
}

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= COUNT) return;
#ifdef VKQC_I8
  const uint row = i / K4P, k0 = (i % K4P) * 4u;
  uint word = 0u;
#ifdef VKQC_RESHAPE
  for (uint b = 0u; b < 4u && k0 + b < D5; ++b) {
    const uint e = row * D5 + k0 + b;
    word |= source_byte((e / KX) * (KX4P * 4u) + e % KX) << (8u * b);
  }
#else
  const uint base = row_offset(row);
  for (uint b = 0u; b < 4u && k0 + b < D5; ++b) word |= source_byte(base + (k0 + b) * S5) << (8u * b);
#endif
  y[i] = word;
#else
  y[i] = x[row_offset(i / D5) + (i % D5) * S5];
#endif
}
