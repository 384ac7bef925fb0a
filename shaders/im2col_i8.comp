#version 450
// im2col for int8 NHWC convolution: packed input pixels [N*H*W][C4P] words -> packed GEMM rows
// [N*OH*OW][K4P] words with k = (kh*KW + kw)*C + c, the order of the conv weights [Cout][KH][KW][C].
// Taps that fall in the padding read the input zero point, so (q - zp) contributes exactly zero;
// k >= K is zero padding (the packed weights are zero there too). One invocation per word.
// VKQC_IM2COL_F32 (weight-only convolutions): f32 pixels [N*H*W][C] -> f32 rows [N*OH*OW][K],
// padded taps 0.0; one invocation per value.
// VKQC_IM2COL_Q (a float input the convolution quantizes per tensor, its input_quant): f32 pixels
// [N*H*W][C] -> packed int8 rows as above, each tap quantized as quantize_q8ta.comp does.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 1;   // N*OH*OW
layout(constant_id = 2) const uint H = 1;
layout(constant_id = 3) const uint W = 1;
layout(constant_id = 4) const uint C = 1;
layout(constant_id = 5) const uint C4P = 8;    // input words per pixel
layout(constant_id = 6) const uint KH = 1;
layout(constant_id = 7) const uint KW = 1;
layout(constant_id = 8) const uint SH = 1;
layout(constant_id = 9) const uint SW = 1;
layout(constant_id = 10) const uint PT = 0;
layout(constant_id = 11) const uint PL = 0;
layout(constant_id = 12) const uint DH = 1;
layout(constant_id = 13) const uint DW = 1;
layout(constant_id = 14) const uint OH = 1;
layout(constant_id = 15) const uint OW = 1;
layout(constant_id = 16) const uint K4P = 8;   // output words per row

const uint K = KH * KW * C;

#ifdef VKQC_IM2COL_F32
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float cols[]; };

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= ROWS * K) return;
  const uint row = i / K, k = i % K;
  const uint c = k % C, t = k / C, kw = t % KW, kh = t / KW;
  const uint ow = row % OW, oh = (row / OW) % OH, n = row / (OW * OH);
  const int ih = int(oh * SH + kh * DH) - int(PT), iw = int(ow * SW + kw * DW) - int(PL);
  float v = 0.0;
  if (ih >= 0 && iw >= 0 && ih < int(H) && iw < int(W)) v = x[((n * H + uint(ih)) * W + uint(iw)) * C + c];
  cols[i] = v;
}
#else
#ifdef VKQC_IM2COL_Q
#include "common.glslh"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(push_constant) uniform Push {
  int zero_point;
  float inv_scale;
} pc;
#else
layout(std430, binding = 0) readonly buffer X { uint xq[]; };
layout(push_constant) uniform Push { int zero_point; } pc;
#endif
layout(std430, binding = 1) writeonly buffer Y { uint cols[]; };

uint tap_byte(uint row, uint k) {
  if (k >= K) return 0u;
  const uint c = k % C, t = k / C, kw = t % KW, kh = t / KW;
  const uint ow = row % OW, oh = (row / OW) % OH, n = row / (OW * OH);
  const int ih = int(oh * SH + kh * DH) - int(PT), iw = int(ow * SW + kw * DW) - int(PL);
  if (ih < 0 || iw < 0 || ih >= int(H) || iw >= int(W)) return uint(pc.zero_point) & 0xFFu;
  const uint pixel = (n * H + uint(ih)) * W + uint(iw);
#ifdef VKQC_IM2COL_Q
  return quantize_byte(x[pixel * C + c], pc.inv_scale, pc.zero_point);
#else
  return (xq[pixel * C4P + c / 4u] >> (8u * (c % 4u))) & 0xFFu;
#endif
}

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= ROWS * K4P) return;
  const uint row = i / K4P, k = (i % K4P) * 4u;
  cols[i] = tap_byte(row, k) | (tap_byte(row, k + 1u) << 8) | (tap_byte(row, k + 2u) << 16) | (tap_byte(row, k + 3u) << 24);
}
#endif
