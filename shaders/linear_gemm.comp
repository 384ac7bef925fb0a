#version 450
// Tiled GEMM for linear: y[M,N] = epilogue(x[M,K] . W[N,K]^T); variants in linear_common.glslh.
// A workgroup of TX x TY threads computes a BM x BN block (BM = TY*RM, BN = TX*RN); thread
// (tx,ty) owns rows ty + i*TY and the RN consecutive columns tx*RN + j (so an int8 output row
// segment is one word). K advances BK4 packed words (4*BK4 values) per step; weights are
// decoded to int8 words (w - zp) into shared memory as they are loaded. Grouped layers (int4,
// q8gsw) fold their int32 group accumulators into fp32 at every group boundary.
layout(local_size_x_id = 0, local_size_y_id = 1) in;
#include "linear_common.glslh"

layout(constant_id = 13) const uint BK4 = 8;  // divides K4P
layout(constant_id = 14) const uint RM = 4;   // rows per thread

const uint RN = 4u;
const uint TX = gl_WorkGroupSize.x;
const uint TY = gl_WorkGroupSize.y;
const uint BM = TY * RM;
const uint BN = TX * RN;
const uint NT = TX * TY;
const uint SBK = BK4 + 1u;  // padded row stride of sA (bank conflicts)
const uint SBK4 = BK4 / 4u + 1u;  // int-dot sA: padded row stride in uvec4 (BK4 is a multiple of 8)
#ifdef VKQC_WG
const uint K4 = K / 4u;     // real activation words; int4 padding words are masked
#else
const uint K4 = K4P;        // q8 padding bytes are zero weights
#endif

#ifdef VKQC_INT_DOT
// Activation words as uvec4 of 4 consecutive K words: the inner loop reads 4 words per row with
// one 16-byte shared load instead of four 4-byte ones.
shared uvec4 sA4[BM * SBK4];
#else
shared vec4 sA[BM * SBK];
#endif
shared uvec4 sB[BK4 * (BN / 4u)];  // [k word][4 columns]: int8 words (w - zp)
#ifdef VKQC_WG
// Scales of the groups that end at word c of this K step ([c][column]; other rows unused),
// loaded with the tile so the fold in the inner loop reads shared memory, not global.
shared float sS[BK4 * BN];
#endif
#ifdef VKQC_W4_MIN
shared float sM[BK4 * BN];  // q4gmw: the groups' minimums, beside their scales
#endif

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint tid = ty * TX + tx;
  const uint n0 = gl_WorkGroupID.x * BN;
  const uint m0 = gl_WorkGroupID.y * BM;

#ifdef VKQC_INT_DOT
  ivec4 acc[RM];
  int zx[RM];
  for (uint i = 0u; i < RM; ++i) {
    acc[i] = ivec4(0);
    zx[i] = act_zero_point(min(m0 + ty + i * TY, M - 1u));
  }
  ivec4 wsum = ivec4(0);  // per column: sum of (w - zp) in the current group
#else
  vec4 accd[RM];
  for (uint i = 0u; i < RM; ++i) accd[i] = vec4(0.0);
#endif
  vec4 accf[RM];  // folded fp32 accumulators (int4 groups)
  for (uint i = 0u; i < RM; ++i) accf[i] = vec4(0.0);
#ifdef VKQC_W4_MIN
  // Per row: sum of the activations over the current group (int: of x - zx), for the minimum.
#ifdef VKQC_INT_DOT
#define XSUM_T int
#else
#define XSUM_T float
#endif
  XSUM_T xsum[RM];
  for (uint i = 0u; i < RM; ++i) xsum[i] = XSUM_T(0);
#endif

  for (uint k4 = 0u; k4 < K4P; k4 += BK4) {
    for (uint i = tid; i < BM * BK4; i += NT) {
      const uint r = i / BK4, c = i % BK4, m = m0 + r;
#if defined(VKQC_INT_DOT)
      sA4[r * SBK4 + c / 4u][c % 4u] = m < M ? xq[m * K4P + k4 + c] : 0u;
#elif defined(VKQC_X_Q8)
      // int8 input on the dequant path: dequantize x as it is loaded (padding words are zero).
      sA[r * SBK + c] = (m < M && k4 + c < K4P) ? (unpack_i8x4(xq[m * K4P + k4 + c]) - float(act_zero_point(m))) * act_scale(m)
                                                 : vec4(0.0);
#else
      vec4 v = vec4(0.0);
      const uint k = (k4 + c) * 4u;
      if (m < M) {
        for (uint j = 0u; j < 4u; ++j) {
          if (k + j < K) v[j] = x[m * K + k + j];
        }
      }
      sA[r * SBK + c] = v;
#endif
    }
    for (uint i = tid; i < BN * BK4; i += NT) {
      const uint r = i / BK4, c = i % BK4, n = n0 + r;
      const uint w = (n < N && k4 + c < K4) ? weight_word(n, k4 + c) : 0u;
      sB[c * (BN / 4u) + r / 4u][r % 4u] = w;
    }
#ifdef VKQC_WG
    for (uint i = tid; i < BN * BK4; i += NT) {
      const uint c = i / BN, col = i % BN, kg = k4 + c, n = n0 + col;
      if (((kg + 1u) * 4u) % GS == 0u && kg < K4) {
        sS[i] = n < N ? weight_scale(n, (kg * 4u) / GS) : 0.0;
#ifdef VKQC_W4_MIN
        sM[i] = n < N ? weight_min(n, (kg * 4u) / GS) : 0.0;
#endif
      }
    }
#endif
    barrier();
    for (uint c4 = 0u; c4 < BK4 / 4u; ++c4) {
#ifdef VKQC_INT_DOT
      uvec4 a4[RM];
      for (uint i = 0u; i < RM; ++i) a4[i] = sA4[(ty + i * TY) * SBK4 + c4];
#endif
      for (uint q = 0u; q < 4u; ++q) {
        const uint c = 4u * c4 + q;
        const uvec4 b = sB[c * (BN / 4u) + tx];
#ifdef VKQC_INT_DOT
#ifdef VKQC_WG
        wsum += ivec4(SDOT(b.x, 0x01010101u), SDOT(b.y, 0x01010101u), SDOT(b.z, 0x01010101u),
                      SDOT(b.w, 0x01010101u));
#endif
        for (uint i = 0u; i < RM; ++i) {
          const uint a = a4[i][q];
          acc[i] += ivec4(SDOT(a, b.x), SDOT(a, b.y), SDOT(a, b.z), SDOT(a, b.w));
#ifdef VKQC_W4_MIN
          if (k4 + c < K4) xsum[i] += SDOT(a, 0x01010101u) - 4 * zx[i];  // real words only
#endif
        }
#else
        const vec4 w0 = unpack_i8x4(b.x), w1 = unpack_i8x4(b.y), w2 = unpack_i8x4(b.z), w3 = unpack_i8x4(b.w);
        for (uint i = 0u; i < RM; ++i) {
          const vec4 a = sA[(ty + i * TY) * SBK + c];
          accd[i] += vec4(dot(a, w0), dot(a, w1), dot(a, w2), dot(a, w3));
#ifdef VKQC_W4_MIN
          xsum[i] += dot(a, vec4(1.0));  // padding words are zero
#endif
        }
#endif
#ifdef VKQC_WG
        const uint kg = k4 + c;  // global activation word
        if (((kg + 1u) * 4u) % GS == 0u && kg < K4) {
          vec4 s;
          for (uint j = 0u; j < RN; ++j) s[j] = sS[c * BN + tx * RN + j];
#ifdef VKQC_W4_MIN
          vec4 mn;
          for (uint j = 0u; j < RN; ++j) mn[j] = sM[c * BN + tx * RN + j];
#endif
          for (uint i = 0u; i < RM; ++i) {
#ifdef VKQC_INT_DOT
            accf[i] += vec4(acc[i] - zx[i] * wsum) * s;
            acc[i] = ivec4(0);
#else
            accf[i] += accd[i] * s;
            accd[i] = vec4(0.0);
#endif
#ifdef VKQC_W4_MIN
            accf[i] -= float(xsum[i]) * mn;
            xsum[i] = XSUM_T(0);
#endif
          }
#ifdef VKQC_INT_DOT
          wsum = ivec4(0);
#endif
        }
#endif
      }
    }
    barrier();
  }

#ifndef VKQC_WG
  // q8csw: one group per channel, folded once.
  vec4 s;
  ivec4 wsi;
  for (uint j = 0u; j < RN; ++j) {
    const uint n = min(n0 + tx * RN + j, N - 1u);
    s[j] = weight_scale(n, 0u);
    wsi[j] = int(cw[WSUM_OFF + n]);
  }
  for (uint i = 0u; i < RM; ++i) {
#ifdef VKQC_INT_DOT
    // Exact in int32: acc - zp * sum(w); cast before scaling.
    accf[i] = vec4(acc[i] - zx[i] * wsi) * s;
#else
    accf[i] = accd[i] * s;
#endif
  }
#endif

  for (uint i = 0u; i < RM; ++i) {
    const uint m = m0 + ty + i * TY;
    if (m >= M) continue;
#ifdef VKQC_INT_DOT
    const float sx = act_scale(m);
#else
    const float sx = 1.0;
#endif
#ifdef VKQC_OUT_Q8
    uint word = 0u;
#endif
    for (uint j = 0u; j < RN; ++j) {
      const uint n = n0 + tx * RN + j;
      if (n >= N) continue;
      const float v = finish(n, accf[i][j] * sx);
#ifdef VKQC_OUT_Q8
      word |= requantize(v) << (8u * j);
#else
      y[m * N + n] = v;
#endif
    }
#ifdef VKQC_OUT_Q8
    if (n0 + tx * RN < N) yq[m * N4P + (n0 + tx * RN) / 4u] = word;
#endif
  }
}
