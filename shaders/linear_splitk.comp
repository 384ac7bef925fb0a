#version 450
// The second dispatch of a split-K cooperative-matrix linear (linear_coopmat.comp VKQC_SPLITK):
// binding 0 holds KSPLIT partial outputs [KSPLIT][M][N] (floats, zero-point term subtracted);
// each invocation adds one output's slices in slice order, then applies bias and relu (finish) and
// writes y, or with VKQC_OUT_Q8 one packed word of 4 requantized outputs.
layout(local_size_x_id = 0) in;
#include "linear_common.glslh"

layout(constant_id = 13) const uint KSPLIT = 2;

float total(uint m, uint n) {
  float v = 0.0;
  for (uint z = 0u; z < KSPLIT; ++z) v += XF((z * M + m) * N + n);
  return v;
}

void main() {
  const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x;
#ifdef VKQC_OUT_Q8
  const uint m = i / N4P, w = i % N4P;
  if (m >= M) return;
  uint word = 0u;
  for (uint q = 0u; q < 4u; ++q) {
    const uint n = 4u * w + q;
    if (n < N) word |= requantize(finish(n, total(m, n))) << (8u * q);
  }
  yq[m * N4P + w] = word;
#else
  const uint m = i / N, n = i % N;
  if (m >= M) return;
  y[m * N + n] = finish(n, total(m, n));
#endif
}
