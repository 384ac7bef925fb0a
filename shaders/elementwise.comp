#version 450
// Elementwise float ops over COUNT values: VKQC_OP_MUL y = a * b; VKQC_OP_MUL_BCAST y = a * b
// with b broadcast to a's shape; VKQC_OP_SILU y = a / (1 + exp(-a)); VKQC_OP_SIGMOID
// y = 1 / (1 + exp(-a)); VKQC_OP_HARD_SIGMOID y = clamp(ALPHA * a + BETA, 0, 1); VKQC_OP_HARD_SWISH
// y = a * clamp(a / 6 + 1/2, 0, 1).
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint COUNT = 1;
// VKQC_OP_HARD_SIGMOID
layout(constant_id = 2) const float ALPHA = 0.2;
layout(constant_id = 3) const float BETA = 0.5;
// VKQC_OP_MUL_BCAST: a's index space as up to 8 dimensions D0 (innermost) .. D7 (merged where b
// broadcasts alike; unused ones 1) and b's stride along each (0 where b broadcasts).
layout(constant_id = 4) const uint D0 = 1;
layout(constant_id = 5) const uint D1 = 1;
layout(constant_id = 6) const uint D2 = 1;
layout(constant_id = 7) const uint D3 = 1;
layout(constant_id = 8) const uint D4 = 1;
layout(constant_id = 9) const uint D5 = 1;
layout(constant_id = 10) const uint D6 = 1;
layout(constant_id = 11) const uint D7 = 1;
layout(constant_id = 12) const uint S0 = 0;
layout(constant_id = 13) const uint S1 = 0;
layout(constant_id = 14) const uint S2 = 0;
layout(constant_id = 15) const uint S3 = 0;
layout(constant_id = 16) const uint S4 = 0;
layout(constant_id = 17) const uint S5 = 0;
layout(constant_id = 18) const uint S6 = 0;
layout(constant_id = 19) const uint S7 = 0;

#if defined(VKQC_OP_MUL) || defined(VKQC_OP_MUL_BCAST)
#define BINARY 1
#endif

layout(std430, binding = 0) readonly buffer A { float a[]; };
#ifdef BINARY
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#else
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
#endif

#ifdef VKQC_OP_MUL_BCAST
// b's index of a's element i.
uint b_index(uint i) {
  uint bi = 0u;
  bi += (i % D0) * S0; i /= D0;
  bi += (i % D1) * S1; i /= D1;
  bi += (i % D2) * S2; i /= D2;
  bi += (i % D3) * S3; i /= D3;
  bi += (i % D4) * S4; i /= D4;
  bi += (i % D5) * S5; i /= D5;
  bi += (i % D6) * S6; i /= D6;
  bi += (i % D7) * S7;
  return bi;
}
#endif

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= COUNT) return;
#if defined(VKQC_OP_MUL)
  y[i] = a[i] * b[i];
#elif defined(VKQC_OP_MUL_BCAST)
  y[i] = a[i] * b[b_index(i)];
#elif defined(VKQC_OP_SIGMOID)
  y[i] = 1.0 / (1.0 + exp(-a[i]));
#elif defined(VKQC_OP_HARD_SIGMOID)
  y[i] = clamp(ALPHA * a[i] + BETA, 0.0, 1.0);
#elif defined(VKQC_OP_HARD_SWISH)
  const float v = a[i];
  y[i] = v * clamp(v * (1.0 / 6.0) + 0.5, 0.0, 1.0);
#else
  const float v = a[i];
  y[i] = v / (1.0 + exp(-v));
#endif
}
