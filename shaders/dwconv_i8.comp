#version 450
// Depthwise int8 convolution, direct (no im2col), NHWC: one invocation computes 4 channels of
// one output pixel. acc_c = sum over taps inside the image of (x - zp_x) * w_c (int32, exact;
// padded taps contribute zero), y = acc * s_x * s_w[c] + bias, relu/relu6, float or q8to output.
// Weights region (words): [KH*KW][CW] (4 channels per word, tap-major), then f32 scales [C] at
// SCALE_OFF and f32 bias [C] at BIAS_OFF.
#include "common.glslh"

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
layout(constant_id = 16) const uint CW = 1;       // weight words per tap: ceil(C/4)
layout(constant_id = 17) const uint SCALE_OFF = 0;
layout(constant_id = 18) const uint BIAS_OFF = 0;
layout(constant_id = 19) const uint OUT4P = 8;    // output words per pixel (q8to)

layout(std430, binding = 0) readonly buffer X { uint xq[]; };
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

ivec4 bytes4(uint w) {
  return ivec4(bitfieldExtract(int(w), 0, 8), bitfieldExtract(int(w), 8, 8), bitfieldExtract(int(w), 16, 8),
               bitfieldExtract(int(w), 24, 8));
}

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= ROWS * CW) return;
  const uint row = i / CW, cw4 = i % CW;
  const uint ow = row % OW, oh = (row / OW) % OH, n = row / (OW * OH);
  // The epilogue's per-channel constants first, so that their latency overlaps the taps'.
  const uvec4 chs = min(uvec4(cw4 * 4u) + uvec4(0u, 1u, 2u, 3u), uvec4(C - 1u));
  const vec4 sw = uintBitsToFloat(uvec4(cw[SCALE_OFF + chs.x], cw[SCALE_OFF + chs.y], cw[SCALE_OFF + chs.z],
                                        cw[SCALE_OFF + chs.w]));
  const vec4 bias = uintBitsToFloat(uvec4(cw[BIAS_OFF + chs.x], cw[BIAS_OFF + chs.y], cw[BIAS_OFF + chs.z],
                                          cw[BIAS_OFF + chs.w]));
  // Every tap is loaded (clamped into the image) and padded taps masked to zero, so the loads
  // do not wait on branches and can all be in flight together.
  ivec4 acc = ivec4(0);
  for (uint kh = 0u; kh < KH; ++kh) {
    const int ih = int(oh * SH + kh * DH) - int(PT);
    const bool row_in = ih >= 0 && ih < int(H);
    for (uint kw = 0u; kw < KW; ++kw) {
      const int iw = int(ow * SW + kw * DW) - int(PL);
      const bool in_image = row_in && iw >= 0 && iw < int(W);
      const uint pixel = (n * H + uint(clamp(ih, 0, int(H) - 1))) * W + uint(clamp(iw, 0, int(W) - 1));
      const ivec4 xv = bytes4(xq[pixel * C4P + cw4]) - pc.act_zero_point;
      acc += (in_image ? xv : ivec4(0)) * bytes4(cw[(kh * KW + kw) * CW + cw4]);
    }
  }
  uint word = 0u;
  for (uint j = 0u; j < 4u; ++j) {
    const uint c = cw4 * 4u + j;
    if (c >= C) break;
    // precise: conv_rows_i8.comp (VKQC_DWPW) computes the same bytes and must round alike.
    precise float v = float(acc[j]) * (pc.act_scale * sw[j]);
    if ((pc.flags & LINEAR_FLAG_BIAS) != 0u) v += bias[j];
    if ((pc.flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
    if ((pc.flags & LINEAR_FLAG_RELU6) != 0u) v = clamp(v, 0.0, 6.0);
#ifdef VKQC_OUT_Q8
    word |= quantize_byte(v, pc.out_inv_scale, pc.out_zero_point) << (8u * j);
#else
    y[row * C + c] = v;
#endif
  }
#ifdef VKQC_OUT_Q8
  yq[row * OUT4P + cw4] = word;
#endif
}
