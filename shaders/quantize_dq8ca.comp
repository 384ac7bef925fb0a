#version 450
// Dynamic per-token int8 quantization (dq8ca, DESIGN 4): one workgroup per row m of a float
// [M,K] activation computes the row's scale and zero point exactly as
// choose_qparams_per_token_asymmetric does (bit for bit equal to the CPU reference: divisions
// are correctly rounded, nothing is contracted), writes them to params[m] = {scale, zp}, and
// quantizes the row into packed int8 words [M][K4P] (padding bytes zero).
#include "common.glslh"

layout(local_size_x_id = 0) in;   // T, a power of two
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint K = 4;
layout(constant_id = 3) const uint K4P = 8;

const uint T = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Q { uint q[]; };
layout(std430, binding = 2) writeonly buffer P { RowParams params[]; };

shared float smin[T];
shared float smax[T];
shared float s_inv_scale;
shared int s_zp;

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint m = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (m >= M) return;  // uniform across the workgroup
  float lo = 0.0, hi = 0.0;  // min' = min(min(x), 0), max' = max(max(x), 0)
  for (uint k = t; k < K; k += T) {
    const float v = x[m * K + k];
    lo = min(lo, v);
    hi = max(hi, v);
  }
  smin[t] = lo;
  smax[t] = hi;
  barrier();
  for (uint s = T / 2u; s > 0u; s >>= 1) {
    if (t < s) {
      smin[t] = min(smin[t], smin[t + s]);
      smax[t] = max(smax[t], smax[t + s]);
    }
    barrier();
  }
  if (t == 0u) {
    const float mn = smin[0], mx = smax[0];
    precise float range = mx - mn;
    const float scale = max(div_rn(range, 255.0), 1.1920928955078125e-7);  // FLT_EPSILON
    const float dmin = div_rn(mn, scale), dmax = div_rn(mx, scale);
    precise float err_min = -128.0 + dmin;
    precise float err_max = 127.0 + dmax;
    precise float both = err_min + err_max;
    precise float zp_min = -128.0 - dmin;
    precise float zp_max = 127.0 - dmax;
    const float zpf = both > 0.0 ? zp_min : zp_max;
    const int zp = int(clamp(roundEven(zpf), -128.0, 127.0));
    s_inv_scale = div_rn(1.0, scale);
    s_zp = zp;
    params[m] = RowParams(scale, zp);
  }
  barrier();
  const float inv = s_inv_scale;
  const int zp = s_zp;
  for (uint w = t; w < K4P; w += T) {
    uint word = 0u;
    for (uint b = 0u; b < 4u; ++b) {
      const uint k = w * 4u + b;
      if (k < K) word |= quantize_byte(x[m * K + k], inv, zp) << (8u * b);
    }
    q[m * K4P + w] = word;
  }
}
