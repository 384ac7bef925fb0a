#version 450
// Converts int8 tensors between the dense row-major byte layout of graph inputs/outputs
// ([M][K] bytes, rows not padded) and the packed layout kernels use ([M][K4P] words, rows
// zero-padded). VKQC_TO_PACKED: dense -> packed (graph inputs); otherwise packed -> dense.
// One invocation writes one destination word.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint K = 4;
layout(constant_id = 3) const uint K4P = 8;

layout(std430, binding = 0) readonly buffer S { uint src[]; };
layout(std430, binding = 1) writeonly buffer D { uint dst[]; };

uint byte_of(uint byte_index) { return (src[byte_index / 4u] >> (8u * (byte_index % 4u))) & 0xFFu; }

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
#ifdef VKQC_TO_PACKED
  if (i >= M * K4P) return;
  const uint m = i / K4P, k0 = (i % K4P) * 4u;
  uint word = 0u;
  for (uint b = 0u; b < 4u; ++b)
    if (k0 + b < K) word |= byte_of(m * K + k0 + b) << (8u * b);
  dst[i] = word;
#else
  const uint total = M * K;
  if (i * 4u >= total) return;
  uint word = 0u;
  for (uint b = 0u; b < 4u; ++b) {
    const uint e = i * 4u + b;
    if (e < total) word |= byte_of((e / K) * K4P * 4u + e % K) << (8u * b);
  }
  dst[i] = word;
#endif
}
