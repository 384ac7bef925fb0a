#version 450
// Nearest-neighbour upsampling by integer factors, NHWC: y[n, h, w, c] = x[n, h / SH, w / SW, c].
// VKQC_RESIZE_Q8: int8 packed rows ([pixels][C4P] words), one invocation per word of an output
// pixel (a copy; bytes past C are written as 0). Otherwise float, one invocation per value.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint COUNT = 1;  // invocations with work
layout(constant_id = 2) const uint H = 1;
layout(constant_id = 3) const uint W = 1;
layout(constant_id = 4) const uint C = 1;
layout(constant_id = 5) const uint C4P = 8;
layout(constant_id = 6) const uint SH = 1;
layout(constant_id = 7) const uint SW = 1;

#ifdef VKQC_RESIZE_Q8
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
const uint PER_PIXEL = (C + 3u) / 4u;
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
const uint PER_PIXEL = C;
#endif

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= COUNT) return;
  const uint OW = W * SW, OH = H * SH;
  const uint pixel = i / PER_PIXEL, k = i % PER_PIXEL;
  const uint ow = pixel % OW, oh = (pixel / OW) % OH, n = pixel / (OW * OH);
  const uint src = (n * H + oh / SH) * W + ow / SW;
#ifdef VKQC_RESIZE_Q8
  uint word = x[src * C4P + k];
  if (k * 4u + 4u > C) word &= (1u << (8u * (C % 4u))) - 1u;  // the last word: bytes past C are 0
  y[pixel * C4P + k] = word;
#else
  y[i] = x[src * C + k];
#endif
}
