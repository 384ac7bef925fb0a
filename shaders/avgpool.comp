#version 450
// Average pooling, NHWC, padded taps excluded from the count. VKQC_POOL_Q8: int8 input
// (per tensor), int8 output (q8to): v = s_x * (sum(q) - count * z_x) / count, requantized;
// one invocation per 4 channels of an output pixel. Otherwise float, one per value.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 1;   // N*OH*OW
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
layout(constant_id = 14) const uint OH = 1;
layout(constant_id = 15) const uint OW = 1;

#ifdef VKQC_POOL_Q8
layout(std430, binding = 0) readonly buffer X { uint xq[]; };
layout(std430, binding = 1) writeonly buffer Y { uint yq[]; };
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
#endif

layout(push_constant) uniform Push {
  float act_scale;
  int act_zero_point;
  float out_inv_scale;
  int out_zero_point;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
#ifdef VKQC_POOL_Q8
  const uint cw = (C + 3u) / 4u;
  if (i >= ROWS * cw) return;
  const uint row = i / cw, c0 = (i % cw) * 4u;
#else
  if (i >= ROWS * C) return;
  const uint row = i / C, c0 = i % C;
#endif
  const uint ow = row % OW, oh = (row / OW) % OH, n = row / (OW * OH);
  ivec4 isum = ivec4(0);
  float fsum = 0.0;
  int count = 0;
  // Every tap is loaded (clamped into the image) and padded taps masked out, so the loads do not
  // wait on branches and can all be in flight together (a global pool reads 49 or more).
  for (uint kh = 0u; kh < KH; ++kh) {
    const int ih = int(oh * SH + kh) - int(PT);
    const bool row_in = ih >= 0 && ih < int(H);
    for (uint kw = 0u; kw < KW; ++kw) {
      const int iw = int(ow * SW + kw) - int(PL);
      const bool in_image = row_in && iw >= 0 && iw < int(W);
      const uint pixel = (n * H + uint(clamp(ih, 0, int(H) - 1))) * W + uint(clamp(iw, 0, int(W) - 1));
      count += in_image ? 1 : 0;
#ifdef VKQC_POOL_Q8
      const uint w = xq[pixel * C4P + c0 / 4u];
      const ivec4 b = ivec4(bitfieldExtract(int(w), 0, 8), bitfieldExtract(int(w), 8, 8), bitfieldExtract(int(w), 16, 8),
                            bitfieldExtract(int(w), 24, 8));
      isum += in_image ? b : ivec4(0);
#else
      const float v = x[pixel * C + c0];
      if (in_image) fsum += v;
#endif
    }
  }
#ifdef VKQC_POOL_Q8
  uint word = 0u;
  for (uint j = 0u; j < 4u; ++j) {
    if (c0 + j >= C) break;
    word |= avg_pool_byte(isum[j], count, pc.act_scale, pc.act_zero_point, pc.out_inv_scale, pc.out_zero_point)
            << (8u * j);
  }
  yq[row * C4P + c0 / 4u] = word;
#else
  y[row * C + c0] = fsum / float(count);
#endif
}
