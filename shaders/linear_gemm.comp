#version 450
// Tiled GEMM for linear: y[M,N] = epilogue(x[M,K] . W[N,K]^T).
// Variants (defines): VKQC_INT_DOT: x is packed int8 (quantize_q8ta), int32 accumulation with
// OpSDot; otherwise x is float and int8 weights are dequantized in the shader (fp32 accumulation).
// Workgroup TX x TY threads computes a BM x BN block (BM = TY*RM, BN = TX*RN); thread (tx,ty)
// owns rows ty + i*TY and columns tx + j*TX. K advances BK4 packed words (4*BK4 values) per step.
// Weights: [N][K4P] packed words, K zero-padded (padding contributes exactly zero).
#include "common.glslh"

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const uint M = 1;
layout(constant_id = 3) const uint N = 1;
layout(constant_id = 4) const uint K = 4;
layout(constant_id = 5) const uint K4P = 8;   // multiple of BK4
layout(constant_id = 6) const uint RM = 4;
layout(constant_id = 7) const uint RN = 4;
layout(constant_id = 8) const uint BK4 = 8;

const uint TX = gl_WorkGroupSize.x;
const uint TY = gl_WorkGroupSize.y;
const uint BM = TY * RM;
const uint BN = TX * RN;
const uint NT = TX * TY;
const uint SBK = BK4 + 1;  // padded shared row stride (bank conflicts)

#ifdef VKQC_INT_DOT
layout(std430, binding = 0) readonly buffer X { uint xq[]; };
shared uint sA[BM * SBK];
#define ACC_T int
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
shared vec4 sA[BM * SBK];
#define ACC_T float
#endif
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer P { ChannelParams params[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
shared uint sB[BN * SBK];

layout(push_constant) uniform Push {
  float act_scale;
  int act_zero_point;
  uint flags;
  float reserved;
} pc;

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint tid = ty * TX + tx;
  const uint n0 = gl_WorkGroupID.x * BN;
  const uint m0 = gl_WorkGroupID.y * BM;

  ACC_T acc[RM * RN];
  for (uint i = 0; i < RM * RN; ++i) acc[i] = ACC_T(0);

  for (uint k4 = 0; k4 < K4P; k4 += BK4) {
    for (uint i = tid; i < BM * BK4; i += NT) {
      const uint r = i / BK4, c = i % BK4, m = m0 + r;
#ifdef VKQC_INT_DOT
      sA[r * SBK + c] = m < M ? xq[m * K4P + k4 + c] : 0u;
#else
      vec4 v = vec4(0.0);
      const uint k = (k4 + c) * 4u;
      if (m < M) {
        for (uint j = 0; j < 4u; ++j) {
          if (k + j < K) v[j] = x[m * K + k + j];
        }
      }
      sA[r * SBK + c] = v;
#endif
    }
    for (uint i = tid; i < BN * BK4; i += NT) {
      const uint r = i / BK4, c = i % BK4, n = n0 + r;
      sB[r * SBK + c] = n < N ? w[n * K4P + k4 + c] : 0u;
    }
    barrier();
    for (uint c = 0; c < BK4; ++c) {
      for (uint i = 0; i < RM; ++i) {
        const uint a_idx = (ty + i * TY) * SBK + c;
        for (uint j = 0; j < RN; ++j) {
          const uint b = sB[(tx + j * TX) * SBK + c];
#ifdef VKQC_INT_DOT
          acc[i * RN + j] += SDOT(sA[a_idx], b);
#else
          acc[i * RN + j] += dot(sA[a_idx], unpack_i8x4(b));
#endif
        }
      }
    }
    barrier();
  }

  for (uint i = 0; i < RM; ++i) {
    const uint m = m0 + ty + i * TY;
    if (m >= M) continue;
    for (uint j = 0; j < RN; ++j) {
      const uint n = n0 + tx + j * TX;
      if (n >= N) continue;
      const ChannelParams p = params[n];
#ifdef VKQC_INT_DOT
      float v = float(acc[i * RN + j] - pc.act_zero_point * p.weight_sum) *
                (pc.act_scale * p.weight_scale);
#else
      float v = acc[i * RN + j] * p.weight_scale;
#endif
      if ((pc.flags & LINEAR_FLAG_BIAS) != 0u) v += p.bias;
      if ((pc.flags & LINEAR_FLAG_RELU) != 0u) v = max(v, 0.0);
      y[m * N + n] = v;
    }
  }
}
