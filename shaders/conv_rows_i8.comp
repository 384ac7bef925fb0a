#version 450
// The GEMM of a small int8 convolution (pointwise, or after im2col) when the tiled GEMM would
// leave the GPU mostly idle (compiler/kernels/conv/select.cc): y[m][n] = epilogue(sum_k
// (x[m][k] - zp_x) * w[n][k]) over packed int8 rows x [M][K4P] and the linear family's q8csw
// region (layout in linear_common.glslh). One invocation per (row, word of 4 output channels,
// lane; VKQC_RPT consecutive rows per invocation where one lane does): L lanes split the row's K in 16-byte units of 4 words (lane l takes units l, l + L, ...;
// rows of x and w are multiples of 8 words, the weights' padding is zero, so the words past K in
// the last unit add nothing whatever x holds there) and add their partial sums
// through shared memory, so a layer with few rows and a long K still spreads over many
// invocations, each with a short dependent chain. int32 accumulation, exact: sum x*w minus
// zp_x * sum w (OpSDot with VKQC_INT_DOT, four int8 products otherwise); then, as
// linear_gemv.comp, float(acc) * (s_x * s_w) + bias, relu/relu6, q8to or f32.
// VKQC_RESIDUAL (q8to only): the int8 add that reads this layer's output (passes/fuse_rows.cc) is
// computed here with add.comp's arithmetic on the output byte and binding 3's byte, the sum
// written to binding 2; VKQC_KEEP writes the layer's own output to binding 4 as well.
#extension GL_EXT_control_flow_attributes : require
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint N = 1;
layout(constant_id = 3) const uint KU = 1;      // ceil(K / 16): the 16-byte units that hold K values
layout(constant_id = 4) const uint K4P = 8;     // activation words per row
layout(constant_id = 5) const uint KW = 8;      // weight words per output channel
layout(constant_id = 6) const uint SCALE_OFF = 0;
layout(constant_id = 7) const uint WSUM_OFF = 0;
layout(constant_id = 8) const uint BIAS_OFF = 0;
layout(constant_id = 9) const uint N4P = 8;     // output words per row (q8to)
layout(constant_id = 10) const uint L = 1;      // lanes per output word: a power of 2 dividing the workgroup
layout(constant_id = 11) const uint RED = 1;    // shared partial sums: the workgroup size when L > 1
// Rows per invocation (VKQC_RPT, with one lane): each weight unit loaded serves that many rows.
#ifndef VKQC_RPT
#define VKQC_RPT 1
#endif
const uint RPT = VKQC_RPT;

layout(std430, binding = 0) readonly buffer X { uvec4 xq4[]; };
layout(std430, binding = 1) readonly buffer C { uvec4 cw4[]; };  // the region is padded to 16 bytes
#define CWORD(i) cw4[(i) >> 2u][(i) & 3u]
#ifdef VKQC_OUT_Q8
layout(std430, binding = 2) writeonly buffer Y { uint yq[]; };
#else
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#endif
#ifdef VKQC_RESIDUAL
layout(std430, binding = 3) readonly buffer R { uint rq[]; };
#ifdef VKQC_KEEP
layout(std430, binding = 4) writeonly buffer Z { uint zq[]; };
#endif
#endif

layout(push_constant) uniform Push {
  float act_scale;
  int act_zero_point;
  uint flags;
  float out_inv_scale;
  int out_zero_point;
  float out_scale;      // the fused add's view of this layer's output
  float res_scale;      // the fused add's other input
  int res_zero_point;
  float sum_inv_scale;  // the fused add's output
  int sum_zero_point;
  uint sum_flags;       // its relu / relu6
  uint reserved;
} pc;

shared ivec4 red[RED];

int dot4(uint a, uint b) {
#ifdef VKQC_INT_DOT
  return SDOT(a, b);
#else
  const ivec4 x = ivec4(bitfieldExtract(int(a), 0, 8), bitfieldExtract(int(a), 8, 8), bitfieldExtract(int(a), 16, 8),
                        bitfieldExtract(int(a), 24, 8));
  const ivec4 w = ivec4(bitfieldExtract(int(b), 0, 8), bitfieldExtract(int(b), 8, 8), bitfieldExtract(int(b), 16, 8),
                        bitfieldExtract(int(b), 24, 8));
  return x.x * w.x + x.y * w.y + x.z * w.z + x.w * w.w;
#endif
}

int dot16(uvec4 a, uvec4 b) { return dot4(a.x, b.x) + dot4(a.y, b.y) + dot4(a.z, b.z) + dot4(a.w, b.w); }

#ifdef VKQC_RESIDUAL
float activate(float v, uint flags) {
  if ((flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
  if ((flags & LINEAR_FLAG_RELU6) != 0u) v = clamp(v, 0.0, 6.0);
  return v;
}
#endif

// One output row's epilogue: 4 channels of row m from their int32 sums.
void finish_row(uint m, uint w4, ivec4 acc, ivec4 wsum, vec4 sw, vec4 bias) {
#ifdef VKQC_OUT_Q8
  uint word = 0u;
#endif
#ifdef VKQC_RESIDUAL
  const uint rword = rq[m * N4P + w4];
  uint sum = 0u;
#endif
  [[unroll]] for (uint c = 0u; c < 4u; ++c) {
    const uint ch = w4 * 4u + c;
    if (ch >= N) break;
    float v = float(acc[c] - pc.act_zero_point * wsum[c]) * (pc.act_scale * sw[c]);
    if ((pc.flags & LINEAR_FLAG_BIAS) != 0u) v += bias[c];
    if ((pc.flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
    if ((pc.flags & LINEAR_FLAG_RELU6) != 0u) v = clamp(v, 0.0, 6.0);
#ifdef VKQC_OUT_Q8
    const uint q = quantize_byte(v, pc.out_inv_scale, pc.out_zero_point);
    word |= q << (8u * c);
#ifdef VKQC_RESIDUAL
    precise float ra = pc.res_scale * float(bitfieldExtract(int(rword), int(8u * c), 8) - pc.res_zero_point);
    precise float rb = pc.out_scale * float(bitfieldExtract(int(q), 0, 8) - pc.out_zero_point);
    precise float s = ra + rb;
    sum |= quantize_byte(activate(s, pc.sum_flags), pc.sum_inv_scale, pc.sum_zero_point) << (8u * c);
#endif
#else
    y[m * N + ch] = v;
#endif
  }
#if defined(VKQC_RESIDUAL)
  yq[m * N4P + w4] = sum;
#ifdef VKQC_KEEP
  zq[m * N4P + w4] = word;
#endif
#elif defined(VKQC_OUT_Q8)
  yq[m * N4P + w4] = word;
#endif
}

void main() {
  const uint NW = (N + 3u) / 4u;
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  const uint lane = i % L, j = i / L;
  const uint m0 = (j / NW) * RPT, w4 = j % NW;
  const uvec4 n = min(uvec4(w4 * 4u) + uvec4(0u, 1u, 2u, 3u), uvec4(N - 1u));
  // The epilogue's per-channel constants, loaded first so that their latency overlaps the K loop.
  const ivec4 wsum = ivec4(CWORD(WSUM_OFF + n.x), CWORD(WSUM_OFF + n.y), CWORD(WSUM_OFF + n.z), CWORD(WSUM_OFF + n.w));
  const vec4 sw = uintBitsToFloat(
      uvec4(CWORD(SCALE_OFF + n.x), CWORD(SCALE_OFF + n.y), CWORD(SCALE_OFF + n.z), CWORD(SCALE_OFF + n.w)));
  const vec4 bias = uintBitsToFloat(
      uvec4(CWORD(BIAS_OFF + n.x), CWORD(BIAS_OFF + n.y), CWORD(BIAS_OFF + n.z), CWORD(BIAS_OFF + n.w)));
  // Rows past the end are computed clamped (every invocation reaches the barrier), not written.
  ivec4 acc[RPT];
  [[unroll]] for (uint r = 0u; r < RPT; ++r) acc[r] = ivec4(0);
  for (uint u = lane; u < KU; u += L) {
    const uvec4 w0 = cw4[n.x * (KW / 4u) + u], w1 = cw4[n.y * (KW / 4u) + u];
    const uvec4 w2 = cw4[n.z * (KW / 4u) + u], w3 = cw4[n.w * (KW / 4u) + u];
    [[unroll]] for (uint r = 0u; r < RPT; ++r) {
      const uvec4 xu = xq4[min(m0 + r, M - 1u) * (K4P / 4u) + u];
      acc[r] += ivec4(dot16(xu, w0), dot16(xu, w1), dot16(xu, w2), dot16(xu, w3));
    }
  }
  if (L > 1u) {  // (RPT is 1 then)
    red[gl_LocalInvocationID.x] = acc[0];
    barrier();
    if (lane != 0u) return;
    for (uint l = 1u; l < L; ++l) acc[0] += red[gl_LocalInvocationID.x + l];
  }
  [[unroll]] for (uint r = 0u; r < RPT; ++r)
    if (m0 + r < M) finish_row(m0 + r, w4, acc[r], wsum, sw, bias);
}
