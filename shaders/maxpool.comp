#version 450
// Max pooling, NHWC, padded taps excluded (never the maximum; padding < kernel, so every window
// holds a real tap). VKQC_POOL_Q8: int8 input (per tensor) -> int8 output, one invocation per 4
// channels of an output pixel: the window's largest code, copied, or with VKQC_POOL_REQUANT
// requantized: q = clamp(roundEven(s_x * (max - z_x) * inv_s_out) + z_out). Otherwise float, one
// invocation per value. Specialization constants as avgpool.comp (conv geometry).
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

#ifdef VKQC_POOL_REQUANT
layout(push_constant) uniform Push {
  float act_scale;
  int act_zero_point;
  float out_inv_scale;
  int out_zero_point;
} pc;
#endif

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
#ifdef VKQC_POOL_Q8
  const uint cw = (C + 3u) / 4u;
  if (i >= ROWS * cw) return;
  const uint row = i / cw, c0 = (i % cw) * 4u;
  ivec4 best = ivec4(-128);
#else
  if (i >= ROWS * C) return;
  const uint row = i / C, c0 = i % C;
  float best = uintBitsToFloat(0xFF800000u);  // -inf
#endif
  const uint ow = row % OW, oh = (row / OW) % OH, n = row / (OW * OH);
  for (uint kh = 0u; kh < KH; ++kh) {
    const int ih = int(oh * SH + kh) - int(PT);
    if (ih < 0 || ih >= int(H)) continue;
    for (uint kw = 0u; kw < KW; ++kw) {
      const int iw = int(ow * SW + kw) - int(PL);
      if (iw < 0 || iw >= int(W)) continue;
      const uint pixel = (n * H + uint(ih)) * W + uint(iw);
#ifdef VKQC_POOL_Q8
      const int w = int(xq[pixel * C4P + c0 / 4u]);
      best = max(best, ivec4(bitfieldExtract(w, 0, 8), bitfieldExtract(w, 8, 8), bitfieldExtract(w, 16, 8),
                             bitfieldExtract(w, 24, 8)));
#else
      best = max(best, x[pixel * C + c0]);
#endif
    }
  }
#ifdef VKQC_POOL_Q8
  uint word = 0u;
  for (uint j = 0u; j < 4u; ++j) {
    if (c0 + j >= C) break;
#ifdef VKQC_POOL_REQUANT
    precise float v = float(best[j] - pc.act_zero_point) * pc.act_scale;
    word |= quantize_byte(v, pc.out_inv_scale, pc.out_zero_point) << (8u * j);
#else
    word |= (uint(best[j]) & 0xFFu) << (8u * j);
#endif
  }
  yq[row * C4P + c0 / 4u] = word;
#else
  y[row * C + c0] = best;
#endif
}
