#version 450
// quantize / dequantize between dense float tensors (f32, or f16 as halves packed two per word)
// and integer tensors (int8 as packed rows [rows][K4P] words, or dense int32), DESIGN 4:
//   quantize   q = clamp(roundEven(x * inv_scale) + zp, qmin, qmax)   (int32: zp is 0)
//   dequantize y = scale * (q - zp)                                    (f16: rounded to nearest even)
// with per-tensor (CH = 1) or per-channel parameters: element e uses channel (e / INNER) % CH.
// Parameters: binding 1, words [CH] scale, [CH] inv_scale, [CH] zero point; or, with
// VKQC_ROW_PARAMS (dequantize of a per-token int8 tensor), the {scale, zp} of each row.
// Source: VKQC_SRC_F32 | VKQC_SRC_F16 | VKQC_SRC_I8 | VKQC_SRC_I32; destination VKQC_DST_*.
// VKQC_REQUANT (VKQC_SRC_I8, VKQC_DST_I8, per tensor): requantize int8 to other parameters.
// One invocation writes one destination word: 4 int8 values of a row, 2 halves, or 1 value.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint COUNT = 1;  // elements
layout(constant_id = 2) const uint K = 1;      // last dimension (int8 rows)
layout(constant_id = 3) const uint K4P = 8;    // words per packed int8 row
layout(constant_id = 4) const uint INNER = 1;  // elements between consecutive channels
layout(constant_id = 5) const uint CH = 1;     // channels (1: per tensor)

layout(std430, binding = 0) readonly buffer S { uint src[]; };
#ifdef VKQC_ROW_PARAMS
layout(std430, binding = 1) readonly buffer P { RowParams row_params[]; };
#else
layout(std430, binding = 1) readonly buffer P { uint prm[]; };
#endif
layout(std430, binding = 2) writeonly buffer D { uint dst[]; };

float scale_of(uint e) {
#ifdef VKQC_ROW_PARAMS
  return row_params[e / K].scale;
#else
  return uintBitsToFloat(prm[(e / INNER) % CH]);
#endif
}
float inv_scale_of(uint e) {
#ifdef VKQC_ROW_PARAMS
  return 1.0;  // unused: per-token tensors are only dequantized here
#else
  return uintBitsToFloat(prm[CH + (e / INNER) % CH]);
#endif
}
int zero_point_of(uint e) {
#ifdef VKQC_ROW_PARAMS
  return row_params[e / K].zero_point;
#else
  return int(prm[2u * CH + (e / INNER) % CH]);
#endif
}

#if defined(VKQC_SRC_F32) || defined(VKQC_SRC_F16)
float load(uint e) {
#ifdef VKQC_SRC_F32
  return uintBitsToFloat(src[e]);
#else
  return f16_to_f32((src[e / 2u] >> (16u * (e % 2u))) & 0xFFFFu);
#endif
}
#else
int load(uint e) {
#ifdef VKQC_SRC_I8
  const uint row = e / K, col = e % K;
  return bitfieldExtract(int(src[row * K4P + col / 4u]), int(8u * (col % 4u)), 8);
#else
  return int(src[e]);
#endif
}
#endif

#if defined(VKQC_DST_I8) || defined(VKQC_DST_I32)
// quantize one element
uint convert(uint e) {
#ifdef VKQC_REQUANT
  // int8 -> int8: the source's real value as dequantize computes it (its {scale, inv, zp} follow
  // the destination's parameters), then quantized.
  precise float x = uintBitsToFloat(prm[3u * CH]) * float(load(e) - int(prm[3u * CH + 2u]));
#else
  const float x = load(e);
#endif
#ifdef VKQC_DST_I8
  return quantize_byte(x, inv_scale_of(e), zero_point_of(e));
#else
  const float r = roundEven(x * inv_scale_of(e));
  if (isnan(r)) return 0u;
  if (r >= 2147483648.0) return 0x7FFFFFFFu;
  if (r <= -2147483648.0) return 0x80000000u;
  return uint(int(r));
#endif
}
#else
// dequantize one element (int32 zero points are 0, so q - zp cannot overflow)
float convert(uint e) {
  precise float y = scale_of(e) * float(load(e) - zero_point_of(e));
  return y;
}
#endif

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
#if defined(VKQC_DST_I8)
  const uint rows = COUNT / K;
  if (i >= rows * K4P) return;
  const uint row = i / K4P, k0 = (i % K4P) * 4u;
  uint word = 0u;
  for (uint b = 0u; b < 4u; ++b)
    if (k0 + b < K) word |= convert(row * K + k0 + b) << (8u * b);
  dst[i] = word;
#elif defined(VKQC_DST_F16)
  if (i * 2u >= COUNT) return;
  uint word = f32_to_f16(convert(i * 2u));
  if (i * 2u + 1u < COUNT) word |= f32_to_f16(convert(i * 2u + 1u)) << 16;
  dst[i] = word;
#elif defined(VKQC_DST_I32)
  if (i >= COUNT) return;
  dst[i] = convert(i);
#else
  if (i >= COUNT) return;
  dst[i] = floatBitsToUint(convert(i));
#endif
}
