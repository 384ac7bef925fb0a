#version 450
// Direct int8 convolution for any group count (used for grouped convolutions that are neither
// dense nor depthwise), NHWC: one invocation computes 4 output channels of one output pixel.
// acc = sum over taps inside the image and the group's input channels of (x - zp_x) * w (int32,
// exact; padded taps contribute zero), y = acc * s_x * s_w[co] + bias, relu/relu6, float or q8to.
// VKQC_X_F32: weight-only (DESIGN 4 dequant function): f32 input [N*H*W][C], acc = sum x * w in
// fp32 (padded taps skipped), y = acc * s_w[co] + bias; any group count, depthwise included.
// Weights region (words): [COUT][RW] rows of int8 [KH][KW][CIN_G] (row-padded), f32 scales
// [COUT] at SCALE_OFF, f32 bias [COUT] at BIAS_OFF.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 1;
layout(constant_id = 2) const uint H = 1;
layout(constant_id = 3) const uint W = 1;
layout(constant_id = 4) const uint C = 1;
layout(constant_id = 5) const uint C4P = 8;
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
layout(constant_id = 16) const uint COUT = 1;
layout(constant_id = 17) const uint CIN_G = 1;
layout(constant_id = 18) const uint COUT_G = 1;
layout(constant_id = 19) const uint RW = 1;
layout(constant_id = 20) const uint SCALE_OFF = 0;
layout(constant_id = 21) const uint BIAS_OFF = 0;
layout(constant_id = 22) const uint OUT4P = 8;

#ifdef VKQC_X_F32
layout(std430, binding = 0) readonly buffer X { float x[]; };
#else
layout(std430, binding = 0) readonly buffer X { uint xq[]; };
#endif
layout(std430, binding = 1) readonly buffer Cw { uint cw[]; };
#ifdef VKQC_OUT_Q8
layout(std430, binding = 2) writeonly buffer Y { uint yq[]; };
#else
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#endif

layout(push_constant) uniform Push {
  float act_scale;
  int act_zero_point;
  uint flags;
  float out_inv_scale;
  int out_zero_point;
  uint reserved0, reserved1, reserved2;
} pc;

int sbyte(uint word, uint b) { return bitfieldExtract(int(word), int(8u * b), 8); }

void main() {
  const uint cws = (COUT + 3u) / 4u;
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= ROWS * cws) return;
  const uint row = i / cws, cw4 = i % cws;
  const uint ow = row % OW, oh = (row / OW) % OH, n = row / (OW * OH);
  uint word = 0u;
  for (uint j = 0u; j < 4u; ++j) {
    const uint co = cw4 * 4u + j;
    if (co >= COUT) break;
    const uint g = co / COUT_G;
#ifdef VKQC_X_F32
    float acc = 0.0;
#else
    int acc = 0;
#endif
    for (uint kh = 0u; kh < KH; ++kh) {
      const int ih = int(oh * SH + kh * DH) - int(PT);
      if (ih < 0 || ih >= int(H)) continue;
      for (uint kw = 0u; kw < KW; ++kw) {
        const int iw = int(ow * SW + kw * DW) - int(PL);
        if (iw < 0 || iw >= int(W)) continue;
        const uint pixel = (n * H + uint(ih)) * W + uint(iw);
        for (uint ci = 0u; ci < CIN_G; ++ci) {
          const uint c = g * CIN_G + ci, k = (kh * KW + kw) * CIN_G + ci;
#ifdef VKQC_X_F32
          acc += x[pixel * C + c] * float(sbyte(cw[co * RW + k / 4u], k % 4u));
#else
          acc += (sbyte(xq[pixel * C4P + c / 4u], c % 4u) - pc.act_zero_point) * sbyte(cw[co * RW + k / 4u], k % 4u);
#endif
        }
      }
    }
#ifdef VKQC_X_F32
    float v = acc * uintBitsToFloat(cw[SCALE_OFF + co]);
#else
    float v = float(acc) * (pc.act_scale * uintBitsToFloat(cw[SCALE_OFF + co]));
#endif
    if ((pc.flags & LINEAR_FLAG_BIAS) != 0u) v += uintBitsToFloat(cw[BIAS_OFF + co]);
    if ((pc.flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
    if ((pc.flags & LINEAR_FLAG_RELU6) != 0u) v = clamp(v, 0.0, 6.0);
#ifdef VKQC_OUT_Q8
    word |= quantize_byte(v, pc.out_inv_scale, pc.out_zero_point) << (8u * j);
#else
    y[row * COUT + co] = v;
#endif
  }
#ifdef VKQC_OUT_Q8
  yq[row * OUT4P + cw4] = word;
#endif
}
