#version 450
// Dynamic per-token int8 quantization (dq8ca, DESIGN 4): one workgroup per row m of a float
// [M,K] activation computes the row's scale and zero point exactly as
// choose_qparams_per_token_asymmetric does (bit for bit equal to the CPU reference: divisions
// are correctly rounded, nothing is contracted), writes them to params[m] = {scale, zp}, and
// quantizes the row into packed int8 words [M][K4P] (padding bytes zero).
//
// At decode sizes this dispatch sits between two layers on the critical path, so it is built
// for latency: every thread issues all loads of its RV words at once and keeps the values in
// registers (the row is read once); the min/max reduction (and the norm's sum of squares) is a
// subgroup reduction, one barrier and a fold of the subgroups' partials (VKQC_SUBGROUP; else a
// shared-memory tree); one thread derives the parameters (div_rn: a float estimate corrected with
// integer remainders) and, after a second barrier, every thread quantizes from its registers. VKQC_VEC4 (K a
// multiple of 4): the row is read as vec4.
//
// Row ops fused in front (the compiler's row fusion, compiler/passes/fuse_rows.h), computed on the
// registers before the quantization and written out in f32 as well:
//   VKQC_ROW_ADD    s = x + b, written to S (a residual add)
//   VKQC_ROW_NORM   y = v * (1 / sqrt(mean(v^2) + EPS)) * w, written to Y (rms_norm of x or of s)
//   VKQC_ROW_SWIGLU y = silu(x) * b, written to Y
//   VKQC_ROW_PAIRS  y = silu(x[2k]) * x[2k + 1], written to Y: the interleaved outputs of a gate/up
//                   pair (compiler/kernels/linear/pair.h), X rows of 2K values, no B
//   VKQC_NO_QUANT   the row op alone (its consumers do not quantize it dynamically)
#include "common.glslh"
#ifdef VKQC_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x_id = 0) in;   // T, a power of two
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint K = 4;
layout(constant_id = 3) const uint K4P = 8;
layout(constant_id = 4) const uint RV = 1;  // ceil(KV / T): words of the row per thread
layout(constant_id = 5) const float EPS = 1e-5;  // VKQC_ROW_NORM

const uint T = gl_WorkGroupSize.x;
const uint KV = (K + 3u) / 4u;  // words holding real values

// Bindings in order: X, [B], [W], [S], [Y], [Q, P].
#if defined(VKQC_ROW_PAIRS)
#define Y_BINDING 1
#define Q_BINDING 2
#elif defined(VKQC_ROW_SWIGLU)
#define B_BINDING 1
#define Y_BINDING 2
#define Q_BINDING 3
#elif defined(VKQC_ROW_ADD) && defined(VKQC_ROW_NORM)
#define B_BINDING 1
#define W_BINDING 2
#define S_BINDING 3
#define Y_BINDING 4
#define Q_BINDING 5
#elif defined(VKQC_ROW_ADD)
#define B_BINDING 1
#define S_BINDING 2
#define Q_BINDING 3
#elif defined(VKQC_ROW_NORM)
#define W_BINDING 1
#define Y_BINDING 2
#define Q_BINDING 3
#else
#define Q_BINDING 1
#endif

#ifdef VKQC_VEC4
layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };
#ifdef B_BINDING
layout(std430, binding = B_BINDING) readonly buffer Bb { vec4 b4[]; };
#endif
#ifdef W_BINDING
layout(std430, binding = W_BINDING) readonly buffer Ww { vec4 w4[]; };
#endif
#ifdef S_BINDING
layout(std430, binding = S_BINDING) writeonly buffer Ss { vec4 s4[]; };
#endif
#ifdef Y_BINDING
layout(std430, binding = Y_BINDING) writeonly buffer Yy { vec4 y4[]; };
#endif
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
#ifdef B_BINDING
layout(std430, binding = B_BINDING) readonly buffer Bb { float b1[]; };
#endif
#ifdef W_BINDING
layout(std430, binding = W_BINDING) readonly buffer Ww { float w1[]; };
#endif
#ifdef S_BINDING
layout(std430, binding = S_BINDING) writeonly buffer Ss { float s1[]; };
#endif
#ifdef Y_BINDING
layout(std430, binding = Y_BINDING) writeonly buffer Yy { float y1[]; };
#endif
#endif
#ifndef VKQC_NO_QUANT
layout(std430, binding = Q_BINDING) writeonly buffer Q { uint q[]; };
layout(std430, binding = Q_BINDING + 1) writeonly buffer P { RowParams params[]; };
#endif

// Loads word w of row m of a [M][K] float buffer (zeros past K) / stores it (only real values).
#ifdef VKQC_VEC4
#define LOAD(buf4, buf1, m, w) (buf4[(m) * KV + (w)])
#define STORE(buf4, buf1, m, w, val) buf4[(m) * KV + (w)] = (val)
#else
#define LOAD(buf4, buf1, m, w) load_scalar_##buf1(m, w)
#define STORE(buf4, buf1, m, w, val) for (uint b_ = 0u; b_ < 4u; ++b_) if (4u * (w) + b_ < K) buf1[(m) * K + 4u * (w) + b_] = (val)[b_]
#endif

vec4 silu4(vec4 v) { return v / (1.0 + exp(-v)); }
#ifdef VKQC_ROW_PAIRS
// Word w of the row from its interleaved pairs (x rows of 2K values; zeros past K).
vec4 load_pairs(uint m, uint w) {
#ifdef VKQC_VEC4
  const vec4 a = x4[m * 2u * KV + 2u * w], b = x4[m * 2u * KV + 2u * w + 1u];
  return silu4(vec4(a.x, a.z, b.x, b.z)) * vec4(a.y, a.w, b.y, b.w);
#else
  vec4 g = vec4(0.0), u = vec4(0.0);
  for (uint b = 0u; b < 4u; ++b)
    if (4u * w + b < K) {
      g[b] = x[m * 2u * K + 2u * (4u * w + b)];
      u[b] = x[m * 2u * K + 2u * (4u * w + b) + 1u];
    }
  return silu4(g) * u;
#endif
}
#endif
#ifndef VKQC_VEC4
vec4 load_scalar_x(uint m, uint w) {
  vec4 v = vec4(0.0);
  for (uint b = 0u; b < 4u; ++b) v[b] = 4u * w + b < K ? x[m * K + 4u * w + b] : 0.0;
  return v;
}
#ifdef B_BINDING
vec4 load_scalar_b1(uint m, uint w) {
  vec4 v = vec4(0.0);
  for (uint b = 0u; b < 4u; ++b) v[b] = 4u * w + b < K ? b1[m * K + 4u * w + b] : 0.0;
  return v;
}
#endif
#ifdef W_BINDING
vec4 load_scalar_w1(uint m, uint w) {  // the weight row (m ignored)
  vec4 v = vec4(0.0);
  for (uint b = 0u; b < 4u; ++b) v[b] = 4u * w + b < K ? w1[4u * w + b] : 0.0;
  return v;
}
#endif
#endif

shared float smin[T];
shared float smax[T];
shared float s_inv_scale;
shared int s_zp;

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint m = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (m >= M) return;  // uniform across the workgroup
  vec4 v[RV];  // word w = t + j*T of the row: K values 4w..4w+3, zero past K
#ifdef VKQC_ROW_NORM
  // The norm's weights loaded with the row (one round trip to memory, not one more after the
  // sum of squares).
  vec4 gw[RV];
  for (uint j = 0u; j < RV; ++j) gw[j] = t + j * T < KV ? LOAD(w4, w1, 0u, t + j * T) : vec4(0.0);
#endif
  for (uint j = 0u; j < RV; ++j) {
    const uint w = t + j * T;
#ifdef VKQC_ROW_PAIRS
    v[j] = w < KV ? load_pairs(m, w) : vec4(0.0);
    if (w < KV) STORE(y4, y1, m, w, v[j]);
#else
    v[j] = w < KV ? LOAD(x4, x, m, w) : vec4(0.0);
#endif
#if defined(VKQC_ROW_ADD)
    if (w < KV) {
      v[j] += LOAD(b4, b1, m, w);
      STORE(s4, s1, m, w, v[j]);
    }
#elif defined(VKQC_ROW_SWIGLU)
    if (w < KV) {
      v[j] = silu4(v[j]) * LOAD(b4, b1, m, w);
      STORE(y4, y1, m, w, v[j]);
    }
#endif
  }
#ifdef VKQC_ROW_NORM
  {  // sum of squares over the row (zeros past K add nothing), then y = v * inv * w
    float ss = 0.0;
    for (uint j = 0u; j < RV; ++j) ss += dot(v[j], v[j]);
#ifdef VKQC_SUBGROUP
    // One barrier instead of log2(T): the subgroups' sums, then every invocation adds them in
    // the same order (the same value everywhere).
    ss = subgroupAdd(ss);
    if (subgroupElect()) smin[gl_SubgroupID] = ss;
    barrier();
    ss = 0.0;
    for (uint g = 0u; g < gl_NumSubgroups; ++g) ss += smin[g];
#else
    smin[t] = ss;
    barrier();
    for (uint s = T / 2u; s > 0u; s >>= 1) {
      if (t < s) smin[t] += smin[t + s];
      barrier();
    }
    ss = smin[0];
#endif
    const float inv = 1.0 / sqrt(ss / float(K) + EPS);
    barrier();  // smin is reused below
    for (uint j = 0u; j < RV; ++j) {
      const uint w = t + j * T;
      if (w < KV) {
        v[j] = v[j] * inv * gw[j];
        STORE(y4, y1, m, w, v[j]);
      }
    }
  }
#endif
#ifndef VKQC_NO_QUANT
  float lo = 0.0, hi = 0.0;  // min' = min(min(x), 0), max' = max(max(x), 0); zeros past K are harmless
  for (uint j = 0u; j < RV; ++j) {
    lo = min(lo, min(min(v[j].x, v[j].y), min(v[j].z, v[j].w)));
    hi = max(hi, max(max(v[j].x, v[j].y), max(v[j].z, v[j].w)));
  }
#ifdef VKQC_SUBGROUP
  lo = subgroupMin(lo);
  hi = subgroupMax(hi);
  if (subgroupElect()) {
    smin[gl_SubgroupID] = lo;
    smax[gl_SubgroupID] = hi;
  }
  barrier();
  if (gl_SubgroupID == 0u) {  // the first subgroup folds the subgroups' partials
    for (uint g = gl_SubgroupInvocationID; g < gl_NumSubgroups; g += gl_SubgroupSize) {
      lo = min(lo, smin[g]);
      hi = max(hi, smax[g]);
    }
    lo = subgroupMin(lo);
    hi = subgroupMax(hi);
  }
#else
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
  lo = smin[0];
  hi = smax[0];
#endif
#ifdef VKQC_SUBGROUP
  const bool leader = gl_SubgroupID == 0u && gl_SubgroupInvocationID == 0u;  // holds the row's min/max
#else
  const bool leader = t == 0u;
#endif
  if (leader) {
    float scale, inv;
    int zp;
    dq8ca_params(lo, hi, scale, zp, inv);
    params[m] = RowParams(scale, zp);
    s_inv_scale = inv;
    s_zp = zp;
  }
  barrier();
  const float inv = s_inv_scale;
  const int zp = s_zp;
  for (uint j = 0u; j < RV; ++j) {
    const uint w = t + j * T;
    if (w < KV) {
      uint word = 0u;
      for (uint b = 0u; b < 4u; ++b) {
        if (4u * w + b < K) word |= quantize_byte(v[j][b], inv, zp) << (8u * b);
      }
      q[m * K4P + w] = word;
    }
  }
  for (uint w = KV + t; w < K4P; w += T) q[m * K4P + w] = 0u;
#endif
}
