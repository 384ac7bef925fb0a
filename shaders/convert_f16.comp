#version 450
// fp16 activation rows for the fp16 cooperative-matrix GEMM (linear_coopmat.comp, VKQC_XH): a float
// [M,K] activation becomes M rows of K4P / 2 uvec4 (8 halves each, K padded with zeros), so the
// GEMM streams 2 bytes per value instead of 4 and converts nothing. Each invocation writes one
// uvec4 from 8 values (two vec4 loads when K is a multiple of 8), in the order the GEMM's weight
// dequantization produces them: K values 0 2 1 3 4 6 5 7 of the 8 (a half pair of bytes or nibbles
// 0 and 2 of a word comes from one mask; linear_coopmat.comp's load_b).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint K = 8;
layout(constant_id = 3) const uint K4P = 8;  // packed int8 words per row: K4P / 2 uvec4 of halves

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 0) readonly buffer XV { vec4 xv4[]; };
layout(std430, binding = 1) writeonly buffer H { uvec4 h[]; };

const uint U = K4P / 2u;  // uvec4 per row

void main() {
  const uint idx = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (idx >= M * U) return;
  const uint m = idx / U, k = (idx % U) * 8u;
  vec4 a = vec4(0.0), b = vec4(0.0);
  if (K % 8u == 0u) {
    if (k < K) {
      a = xv4[(m * K + k) >> 2];
      b = xv4[((m * K + k) >> 2) + 1u];
    }
  } else {
    for (uint j = 0u; j < 4u; ++j) {
      if (k + j < K) a[j] = x[m * K + k + j];
      if (k + 4u + j < K) b[j] = x[m * K + k + 4u + j];
    }
  }
  h[idx] = uvec4(packHalf2x16(a.xz), packHalf2x16(a.yw), packHalf2x16(b.xz), packHalf2x16(b.yw));
}
