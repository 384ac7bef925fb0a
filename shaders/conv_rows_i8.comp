#version 450
// The GEMM of a small int8 convolution (pointwise, or after im2col) when the tiled GEMM would
// leave the GPU mostly idle (compiler/kernels/conv/select.cc): y[m][n] = epilogue(sum_k
// (x[m][k] - zp_x) * w[n][k]) over packed int8 rows x [M][K4P] and the linear family's q8csw
// region (layout in linear_common.glslh). One invocation per (row, word of 4 output channels,
// lane), or per VKQC_RPT consecutive rows where one lane covers K: L lanes split the row's K in
// 16-byte units of 4 words (lane l takes units l, l + L, ...; rows of x and w are multiples of 8
// words and the weights' padding is zero, so the words past K in the last unit add nothing,
// whatever x holds there) and add their partial sums through shared memory, so a layer with few
// rows and a long K still spreads over many invocations, each with a short dependent chain. int32 accumulation, exact: sum x*w minus
// zp_x * sum w (OpSDot with VKQC_INT_DOT, four int8 products otherwise); then, as
// linear_gemv.comp, float(acc) * (s_x * s_w) + bias, relu/relu6, q8to or f32.
// VKQC_RESIDUAL (q8to only): the int8 add that reads this layer's output (passes/fuse_rows.cc) is
// computed here with add.comp's arithmetic on the output byte and binding 3's byte, the sum
// written to binding 2; VKQC_KEEP writes the layer's own output to binding 4 as well.
// VKQC_DWPW (pointwise layers): x is the output of the int8 depthwise convolution that only this
// layer reads (passes/fuse_rows.cc). A workgroup takes P consecutive rows (pixels) and NS of the
// ceil(N/4) output words: it first computes the rows' depthwise outputs into shared memory (once
// per workgroup: each slice of the output words recomputes them), from that convolution's input
// (binding 0, [N*DH][DW] pixels of C4I words) and weights (binding 5, dwconv_i8.comp's region) with
// dwconv_i8.comp's integer taps and epilogue (so each byte is the one that kernel would write), then
// the P x NS output words, L lanes each, read x from there.
// VKQC_CHAIN (with VKQC_DWPW and q8to, every output word in the workgroup: NS = ceil(N/4)): the
// pointwise int8 convolution that reads this layer's output (or its fused add's sum) is computed
// here too (passes/fuse_rows.cc conv_next): the workgroup's P rows, as written, go to shared memory
// and each of their P x ceil(EN/4) output words of that convolution (weights binding 6, the linear
// family's q8csw region; output binding 7) is one invocation's, with this kernel's own epilogue
// arithmetic on its parameters. No pixel is computed twice: a pointwise convolution reads only its
// own pixel.
// VKQC_POOL (pointwise layers, q8to): the int8 global average pool that is this layer's only
// reader (passes/fuse_rows.cc) is computed here and only its output written (binding 2): a
// workgroup takes one image and NS output words; its PP pixel slots (L lanes each) compute the
// image's output bytes, PP pixels per round, and add them up (int32, exact); the sums go through
// shared memory and avgpool.comp's arithmetic (avg_pool_byte) gives the pooled word.
// VKQC_GATHER (im2col'd layers with K <= 64): no im2col pass; one invocation per row and GWPI
// consecutive output words gathers the row's K bytes once (im2col_i8.comp's bytes: the input zero
// point for padded taps; with VKQC_GATHER_F32 each tap of the float input quantized as
// VKQC_IM2COL_Q does) into registers, then computes its words from them. One lane.
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
#ifdef VKQC_DWPW
layout(constant_id = 12) const uint DH = 1;   // the depthwise convolution: input height and width,
layout(constant_id = 13) const uint DW = 1;
layout(constant_id = 14) const uint C4I = 8;  // its input words per pixel,
layout(constant_id = 15) const uint DKH = 1;  // kernel, stride, padding, dilation,
layout(constant_id = 16) const uint DKW = 1;
layout(constant_id = 17) const uint DSH = 1;
layout(constant_id = 18) const uint DSW = 1;
layout(constant_id = 19) const uint DPT = 0;
layout(constant_id = 20) const uint DPL = 0;
layout(constant_id = 21) const uint DDH = 1;
layout(constant_id = 22) const uint DDW = 1;
layout(constant_id = 23) const uint DOH = 1;  // output height and width (this layer's rows),
layout(constant_id = 24) const uint DOW = 1;
layout(constant_id = 25) const uint DCW = 1;  // weight words per tap (ceil(channels / 4)),
layout(constant_id = 26) const uint DSCALE_OFF = 0;
layout(constant_id = 27) const uint DBIAS_OFF = 0;
layout(constant_id = 28) const uint DC = 1;   // channels (this layer's K)
layout(constant_id = 29) const uint P = 1;    // rows (pixels) per workgroup
layout(constant_id = 30) const uint XS = 1;   // P * KU
layout(constant_id = 31) const uint NS = 1;   // output words per workgroup (a slice of ceil(N/4))
shared uvec4 xs[XS];
#endif
#ifdef VKQC_CHAIN
layout(constant_id = 32) const uint EN = 1;     // the chained convolution: output channels,
layout(constant_id = 33) const uint EKU = 1;    // 16-byte units of its K (this layer's N),
layout(constant_id = 34) const uint EKW = 8;    // weight words per output channel,
layout(constant_id = 35) const uint ESCALE_OFF = 0;
layout(constant_id = 36) const uint EWSUM_OFF = 0;
layout(constant_id = 37) const uint EBIAS_OFF = 0;
layout(constant_id = 38) const uint EN4P = 8;   // output words per row
layout(constant_id = 39) const uint YS = 1;     // P * EKU
shared uvec4 ys[YS];
#endif
#ifdef VKQC_GATHER
layout(constant_id = 12) const uint GH = 1;    // the convolution: input height, width, channels,
layout(constant_id = 13) const uint GW = 1;
layout(constant_id = 14) const uint GC = 1;
layout(constant_id = 15) const uint GC4P = 8;  // input words per pixel (int8 input),
layout(constant_id = 16) const uint GKH = 1;   // kernel, stride, padding, dilation,
layout(constant_id = 17) const uint GKW = 1;
layout(constant_id = 18) const uint GSH = 1;
layout(constant_id = 19) const uint GSW = 1;
layout(constant_id = 20) const uint GPT = 0;
layout(constant_id = 21) const uint GPL = 0;
layout(constant_id = 22) const uint GDH = 1;
layout(constant_id = 23) const uint GDW = 1;
layout(constant_id = 24) const uint GOH = 1;   // output height and width,
layout(constant_id = 25) const uint GOW = 1;
layout(constant_id = 26) const uint GWPI = 1;  // output words per invocation
#ifdef VKQC_GATHER_F32
layout(std430, binding = 0) readonly buffer XF { float xf[]; };
#else
layout(std430, binding = 0) readonly buffer XG { uint xg[]; };
#endif
#endif

#ifdef VKQC_POOL
layout(constant_id = 12) const uint HW = 1;  // pixels per image (this layer's rows per image)
layout(constant_id = 13) const uint NS = 1;  // output words per workgroup
layout(constant_id = 14) const uint PP = 1;  // pixel slots per workgroup (WG / (L * NS))
#endif

#if !defined(VKQC_DWPW) && !defined(VKQC_GATHER)
layout(std430, binding = 0) readonly buffer X { uvec4 xq4[]; };
#endif
layout(std430, binding = 1) readonly buffer C { uvec4 cw4[]; };  // the region is padded to 16 bytes
#define CWORD(i) cw4[(i) >> 2u][(i) & 3u]
#ifdef VKQC_OUT_Q8
layout(std430, binding = 2) writeonly buffer Y { uint yq[]; };
#else
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#endif
#ifdef VKQC_DWPW
layout(std430, binding = 0) readonly buffer XI { uint xin[]; };  // the depthwise convolution's input
layout(std430, binding = 5) readonly buffer D { uint dw[]; };    // its weights region
#endif
#ifdef VKQC_CHAIN
layout(std430, binding = 6) readonly buffer E { uvec4 ew4[]; };
#define EWORD(i) ew4[(i) >> 2u][(i) & 3u]
layout(std430, binding = 7) writeonly buffer EY { uint eyq[]; };
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
  float in_inv_scale;   // VKQC_GATHER_F32: 1 / the input quantization's scale
  float dw_act_scale;   // the depthwise convolution (VKQC_DWPW): its input,
  int dw_act_zero_point;
  uint dw_flags;        // bias, relu / relu6,
  float dw_out_inv_scale;  // output (this layer's x)
  int dw_out_zero_point;
  float e_act_scale;    // the chained convolution (VKQC_CHAIN): its input (this kernel's output),
  int e_act_zero_point;
  uint e_flags;         // bias, relu / relu6,
  float e_out_inv_scale;  // output
  int e_out_zero_point;
  uint reserved1, reserved2;
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

// The epilogue's per-channel constants of channels n: weight sums, scales, bias.
void channel_constants(uvec4 n, out ivec4 wsum, out vec4 sw, out vec4 bias) {
  wsum = ivec4(CWORD(WSUM_OFF + n.x), CWORD(WSUM_OFF + n.y), CWORD(WSUM_OFF + n.z), CWORD(WSUM_OFF + n.w));
  sw = uintBitsToFloat(uvec4(CWORD(SCALE_OFF + n.x), CWORD(SCALE_OFF + n.y), CWORD(SCALE_OFF + n.z),
                             CWORD(SCALE_OFF + n.w)));
  bias = uintBitsToFloat(uvec4(CWORD(BIAS_OFF + n.x), CWORD(BIAS_OFF + n.y), CWORD(BIAS_OFF + n.z),
                               CWORD(BIAS_OFF + n.w)));
}

// A channel's output value (before the output quantization) from its int32 sum. (Scalars: with
// the vectors and a component index, the NVIDIA compiler kept the depthwise-fused kernels' vectors
// in memory, 0.5-0.7 us a layer. `precise`: without it the H100's compiler fused the multiply and
// the bias add, and its bytes left the CPU reference's by one LSB here and there: end to end the
// MobileNetV2-shaped example's logits 1e-2 of max |logit| off instead of 6e-8.)
float channel_value(int acc, int wsum, float sw, float bias) {
  precise float v = float(acc - pc.act_zero_point * wsum) * (pc.act_scale * sw);
  if ((pc.flags & LINEAR_FLAG_BIAS) != 0u) v += bias;
  if ((pc.flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
  if ((pc.flags & LINEAR_FLAG_RELU6) != 0u) v = clamp(v, 0.0, 6.0);
  return v;
}

// One output row's epilogue: 4 channels of row m from their int32 sums. Returns the q8to word it
// writes to binding 2 (the sum with VKQC_RESIDUAL; 0 for f32 outputs).
uint finish_row(uint m, uint w4, ivec4 acc, ivec4 wsum, vec4 sw, vec4 bias) {
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
    const float v = channel_value(acc[c], wsum[c], sw[c], bias[c]);
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
  return sum;
#elif defined(VKQC_OUT_Q8)
  yq[m * N4P + w4] = word;
  return word;
#else
  return 0u;
#endif
}

#ifdef VKQC_DWPW
ivec4 sbytes4(uint w) {
  return ivec4(bitfieldExtract(int(w), 0, 8), bitfieldExtract(int(w), 8, 8), bitfieldExtract(int(w), 16, 8),
               bitfieldExtract(int(w), 24, 8));
}

// Word q (channels 4q .. 4q + 3) of the depthwise convolution's output at pixel m: dwconv_i8.comp.
uint dw_word(uint m, uint q) {
  if (q >= DCW) return 0u;  // K padding: the pointwise weights are zero there
  const uint ow = m % DOW, oh = (m / DOW) % DOH, nb = m / (DOW * DOH);
  ivec4 acc = ivec4(0);
  for (uint kh = 0u; kh < DKH; ++kh) {
    const int ih = int(oh * DSH + kh * DDH) - int(DPT);
    const bool row_in = ih >= 0 && ih < int(DH);
    for (uint kw = 0u; kw < DKW; ++kw) {
      const int iw = int(ow * DSW + kw * DDW) - int(DPL);
      const bool in_image = row_in && iw >= 0 && iw < int(DW);
      const uint pixel = (nb * DH + uint(clamp(ih, 0, int(DH) - 1))) * DW + uint(clamp(iw, 0, int(DW) - 1));
      const ivec4 xv = sbytes4(xin[pixel * C4I + q]) - pc.dw_act_zero_point;
      acc += (in_image ? xv : ivec4(0)) * sbytes4(dw[(kh * DKW + kw) * DCW + q]);
    }
  }
  uint word = 0u;
  for (uint j = 0u; j < 4u; ++j) {
    const uint c = q * 4u + j;
    if (c >= DC) break;
    precise float v = float(acc[j]) * (pc.dw_act_scale * uintBitsToFloat(dw[DSCALE_OFF + c]));
    if ((pc.dw_flags & LINEAR_FLAG_BIAS) != 0u) v += uintBitsToFloat(dw[DBIAS_OFF + c]);
    if ((pc.dw_flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
    if ((pc.dw_flags & LINEAR_FLAG_RELU6) != 0u) v = clamp(v, 0.0, 6.0);
    word |= quantize_byte(v, pc.dw_out_inv_scale, pc.dw_out_zero_point) << (8u * j);
  }
  return word;
}

void main() {
  const uint NW = (N + 3u) / 4u, t = gl_LocalInvocationID.x, WG = gl_WorkGroupSize.x;
  const uint slices = (NW + NS - 1u) / NS, g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint m0 = (g / slices) * P, w0 = (g % slices) * NS;
  // 1. The depthwise outputs of the workgroup's rows, once each.
  for (uint jj = t; jj < P * KU * 4u; jj += WG) {
    const uint p = jj / (KU * 4u), q = jj % (KU * 4u);
    xs[p * KU + q / 4u][q % 4u] = dw_word(min(m0 + p, M - 1u), q);
  }
  barrier();
  // 2. One output word per L lanes (P * NS * L <= the workgroup).
  const uint lane = t % L, o = t / L, p = o / NS, w4 = min(w0 + o % NS, NW - 1u);
  const bool live = p < P && w0 + o % NS < NW;
  const uvec4 n = min(uvec4(w4 * 4u) + uvec4(0u, 1u, 2u, 3u), uvec4(N - 1u));
  ivec4 wsum;
  vec4 sw, bias;
  channel_constants(n, wsum, sw, bias);
  ivec4 acc = ivec4(0);
  if (live)
    for (uint u = lane; u < KU; u += L) {
      const uvec4 xu = xs[p * KU + u];
      acc += ivec4(dot16(xu, cw4[n.x * (KW / 4u) + u]), dot16(xu, cw4[n.y * (KW / 4u) + u]),
                   dot16(xu, cw4[n.z * (KW / 4u) + u]), dot16(xu, cw4[n.w * (KW / 4u) + u]));
    }
#ifndef VKQC_CHAIN
  if (L > 1u) {
    red[t] = acc;
    barrier();
    if (lane != 0u) return;
    for (uint l = 1u; l < L; ++l) acc += red[t + l];
  }
  if (live && m0 + p < M) finish_row(m0 + p, w4, acc, wsum, sw, bias);
}
#else
  // (Every invocation reaches the barriers below.) The rows' words past N are never written: the
  // chained weights are zero there, so they add nothing whatever the shared memory holds.
  if (L > 1u) {
    red[t] = acc;
    barrier();
    if (lane == 0u)
      for (uint l = 1u; l < L; ++l) acc += red[t + l];
  }
  if (lane == 0u && live && m0 + p < M) ys[p * EKU + w4 / 4u][w4 % 4u] = finish_row(m0 + p, w4, acc, wsum, sw, bias);
  barrier();
  // 3. The chained convolution: one output word of one row per invocation and round.
  const uint ENW = (EN + 3u) / 4u;
  for (uint o3 = t; o3 < P * ENW; o3 += WG) {
    const uint p3 = o3 / ENW, e4 = o3 % ENW, m = m0 + p3;
    if (m >= M) break;  // (o3 grows: every later row is past M too)
    const uvec4 ne = min(uvec4(e4 * 4u) + uvec4(0u, 1u, 2u, 3u), uvec4(EN - 1u));
    ivec4 eacc = ivec4(0);
    for (uint u = 0u; u < EKU; ++u) {
      const uvec4 xu = ys[p3 * EKU + u];
      eacc += ivec4(dot16(xu, ew4[ne.x * (EKW / 4u) + u]), dot16(xu, ew4[ne.y * (EKW / 4u) + u]),
                    dot16(xu, ew4[ne.z * (EKW / 4u) + u]), dot16(xu, ew4[ne.w * (EKW / 4u) + u]));
    }
    // channel_value's arithmetic on the chained convolution's parameters (a copy, not a shared
    // function with parameters: channel_value's code is what the other variants were timed with).
    uint word = 0u;
    [[unroll]] for (uint c = 0u; c < 4u; ++c) {
      const uint ch = e4 * 4u + c;
      if (ch >= EN) break;
      precise float v = float(eacc[c] - pc.e_act_zero_point * int(EWORD(EWSUM_OFF + ch))) *
                        (pc.e_act_scale * uintBitsToFloat(EWORD(ESCALE_OFF + ch)));
      if ((pc.e_flags & LINEAR_FLAG_BIAS) != 0u) v += uintBitsToFloat(EWORD(EBIAS_OFF + ch));
      if ((pc.e_flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
      if ((pc.e_flags & LINEAR_FLAG_RELU6) != 0u) v = clamp(v, 0.0, 6.0);
      word |= quantize_byte(v, pc.e_out_inv_scale, pc.e_out_zero_point) << (8u * c);
    }
    eyq[m * EN4P + e4] = word;
  }
}
#endif
#elif defined(VKQC_POOL)
void main() {
  const uint NW = (N + 3u) / 4u, t = gl_LocalInvocationID.x;
  const uint slices = (NW + NS - 1u) / NS, g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint nb = g / slices, w0 = (g % slices) * NS;
  const uint lane = t % L, o = (t / L) % NS, slot = t / (L * NS);
  const uint w4 = min(w0 + o, NW - 1u);
  const bool live = w0 + o < NW;
  const uvec4 n = min(uvec4(w4 * 4u) + uvec4(0u, 1u, 2u, 3u), uvec4(N - 1u));
  ivec4 wsum;
  vec4 sw, bias;
  channel_constants(n, wsum, sw, bias);
  ivec4 pooled = ivec4(0);  // the sum of this slot's pixels' output codes
  for (uint r = 0u; r < (HW + PP - 1u) / PP; ++r) {
    const uint p = slot + r * PP, m = nb * HW + min(p, HW - 1u);
    ivec4 acc = ivec4(0);
    for (uint u = lane; u < KU; u += L) {
      const uvec4 xu = xq4[m * (K4P / 4u) + u];
      acc += ivec4(dot16(xu, cw4[n.x * (KW / 4u) + u]), dot16(xu, cw4[n.y * (KW / 4u) + u]),
                   dot16(xu, cw4[n.z * (KW / 4u) + u]), dot16(xu, cw4[n.w * (KW / 4u) + u]));
    }
    if (L > 1u) {  // lane 0's sum is the pixel's (the other lanes' are not used)
      red[t] = acc;
      barrier();
      for (uint l = 1u; l < L; ++l) acc += red[t - lane + l];
      barrier();  // before the next round's partial sums
    }
    if (p < HW)
      [[unroll]] for (uint c = 0u; c < 4u; ++c)
        pooled[c] += bitfieldExtract(int(quantize_byte(channel_value(acc[c], wsum[c], sw[c], bias[c]), pc.out_inv_scale,
                                                       pc.out_zero_point)), 0, 8);
  }
  red[t] = pooled;
  barrier();
  if (lane != 0u || slot != 0u || !live) return;
  for (uint s = 1u; s < PP; ++s) pooled += red[t + s * L * NS];
  uint word = 0u;
  [[unroll]] for (uint c = 0u; c < 4u; ++c)
    if (w4 * 4u + c < N)
      word |= avg_pool_byte(pooled[c], int(HW), pc.out_scale, pc.out_zero_point, pc.sum_inv_scale, pc.sum_zero_point)
              << (8u * c);
  yq[nb * N4P + w4] = word;
}
#elif defined(VKQC_GATHER)
// Byte k of GEMM row m, the one im2col_i8.comp writes. Every tap is loaded (clamped into the
// image) and padded ones replaced, so the loads need not wait on branches.
uint gather_byte(uint m, uint k) {
  if (k >= GKH * GKW * GC) return 0u;  // K padding: the weights are zero there
  const uint c = k % GC, t = k / GC, kw = t % GKW, kh = t / GKW;
  const uint ow = m % GOW, oh = (m / GOW) % GOH, nb = m / (GOW * GOH);
  const int ih = int(oh * GSH + kh * GDH) - int(GPT), iw = int(ow * GSW + kw * GDW) - int(GPL);
  const bool in_image = ih >= 0 && iw >= 0 && ih < int(GH) && iw < int(GW);
  const uint pixel = (nb * GH + uint(clamp(ih, 0, int(GH) - 1))) * GW + uint(clamp(iw, 0, int(GW) - 1));
#ifdef VKQC_GATHER_F32
  const uint b = quantize_byte(xf[pixel * GC + c], pc.in_inv_scale, pc.act_zero_point);
#else
  const uint b = (xg[pixel * GC4P + c / 4u] >> (8u * (c % 4u))) & 0xFFu;
#endif
  return in_image ? b : uint(pc.act_zero_point) & 0xFFu;
}

void main() {
  const uint NW = (N + 3u) / 4u, chunks = (NW + GWPI - 1u) / GWPI;
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  const uint m = i / chunks, wb = (i % chunks) * GWPI;
  if (m >= M) return;  // one lane: no barrier
  uvec4 xr[4];  // KU <= 4
  [[unroll]] for (uint u = 0u; u < 4u; ++u) {
    xr[u] = uvec4(0u);
    if (u < KU)
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        const uint k = (u * 4u + j) * 4u;
        xr[u][j] = gather_byte(m, k) | (gather_byte(m, k + 1u) << 8) | (gather_byte(m, k + 2u) << 16) |
                   (gather_byte(m, k + 3u) << 24);
      }
  }
  for (uint wi = 0u; wi < GWPI; ++wi) {
    const uint w4 = wb + wi;
    if (w4 >= NW) break;
    const uvec4 n = min(uvec4(w4 * 4u) + uvec4(0u, 1u, 2u, 3u), uvec4(N - 1u));
    ivec4 wsum;
    vec4 sw, bias;
    channel_constants(n, wsum, sw, bias);
    ivec4 acc = ivec4(0);
    [[unroll]] for (uint u = 0u; u < 4u; ++u)
      if (u < KU)
        acc += ivec4(dot16(xr[u], cw4[n.x * (KW / 4u) + u]), dot16(xr[u], cw4[n.y * (KW / 4u) + u]),
                     dot16(xr[u], cw4[n.z * (KW / 4u) + u]), dot16(xr[u], cw4[n.w * (KW / 4u) + u]));
    finish_row(m, w4, acc, wsum, sw, bias);
  }
}
#else
void main() {
  const uint NW = (N + 3u) / 4u;
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  const uint lane = i % L, j = i / L;
  const uint m0 = (j / NW) * RPT, w4 = j % NW;
  const uvec4 n = min(uvec4(w4 * 4u) + uvec4(0u, 1u, 2u, 3u), uvec4(N - 1u));
  // The epilogue's per-channel constants, loaded first so that their latency overlaps the K loop.
  ivec4 wsum;
  vec4 sw, bias;
  channel_constants(n, wsum, sw, bias);
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
#endif
