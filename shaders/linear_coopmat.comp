#version 450
// Cooperative-matrix GEMM for linear: y[M,N] = epilogue(x[M,K] . W[N,K]^T), on tensor cores through
// VK_NV_cooperative_matrix (Debian's glslang compiles GL_NV_cooperative_matrix, not the KHR one).
//
// A workgroup is WM x WN subgroups of SG invocations; subgroup (wm, wn) owns TM x TN matrix tiles
// of LM x LN outputs, so the workgroup computes a BM x BN block (BM = WM*TM*LM, BN = WN*TN*LN).
// K advances BKW shared words per step (64 int8 or 32 fp16 values for BKW = 16): the next step
// is loaded from global memory into registers while this one multiplies, then stored to shared
// rows of SAS = BKW + 4 words (the skew spreads the rows over the banks). With STAGES = 2 the
// operands have two shared buffers: a step multiplies from one while the next step is stored into
// the other, one barrier per step (instead of a barrier before the store and one after it), and
// the loads of the step after that are in flight during the next step's multiplies.
// A is staged [m][k] and loaded row-major, B is staged [n][k] (the packed weight order) and loaded
// column-major. Rows, channels and K values beyond the layer stage as zeros, and every output is
// bounds checked, so ragged M, N and K need no special case.
//
// Variants (with linear_common.glslh's VKQC_W4, VKQC_W4_ZP, VKQC_ACT_ROW, VKQC_OUT_Q8):
//   VKQC_CM_INT  x is packed int8 rows (quantize_q8ta / quantize_dq8ca, or an int8 input):
//                A = xq, B = w - zp_w as int8, int32 accumulation (DESIGN 4, exact).
//                q8csw: one int32 accumulator over K; the epilogue applies
//                (acc - zp_x * wsum[n]) * s_w[n] * s_x[m] exactly as linear_gemm.comp.
//                int4 and q8gsw (GS a multiple of LK): one int32 accumulator per group of
//                sum_k xq * (w - zp_w), folded into fp32 at the group's end as acc * s_w[n][g]; the
//                zero-point term zp_x * sum_g s_w[n][g] * sum_g(w - zp_w) does not depend on the
//                group's activations, so the B loaders sum it per column in registers over the
//                whole K loop and the epilogue subtracts it once (same function as DESIGN 4's
//                per-group (acc - zp_x * sum(w - zp_w)) * s_w, fp32 rounding in another order).
//                The fold converts without a conversion instruction: the group accumulator
//                starts at the bits of 1.5 * 2^23, so after the group its bits are the float
//                1.5 * 2^23 + sum exactly (|sum| <= 2^22: groups of at most 256, select.cc, times
//                |xq| <= 128 times |w - zp| <= 128), and one subtraction yields sum; one fma with
//                the column's scale folds it.
//   otherwise    x is fp16 rows (convert_f16.comp, once per layer): A = fp16(x),
//                B = fp16(fp16(s_w) * (w - zp_w)) (q4gmw: fp16(fp16(s_w) * w - fp16(m_w))), fp32
//                accumulation; q8csw: B = w exactly, the channel's scale applied to the fp32 sum.
//                fp16 rounding of the operands: the looser tolerance of an fp16 variant (group
//                scales below 2^-14 lose bits as fp16 subnormals; GGUF stores its scales as fp16).
// The per-element fold needs each accumulator component's column, which the extension leaves to
// the implementation: an index tile (bits 0x3F800000 | column, a normal float) is loaded once
// into the same matrix type and read component by component.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#ifdef VKQC_CM_INT
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#else
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#define VKQC_COOPMAT
layout(local_size_x_id = 0) in;
#include "linear_common.glslh"

layout(constant_id = 13) const uint SG = 32;    // subgroup size (pinned where the target allows)
layout(constant_id = 14) const uint WM = 2;     // subgroups along M
layout(constant_id = 15) const uint WN = 4;     // subgroups along N
layout(constant_id = 16) const uint TM = 4;     // matrix tiles per subgroup along M
layout(constant_id = 17) const uint TN = 2;     // matrix tiles per subgroup along N
layout(constant_id = 18) const uint LM = 16;    // matrix shape: LM x LN outputs, LK along K
layout(constant_id = 19) const uint LN = 16;
layout(constant_id = 20) const uint LK = 32;
layout(constant_id = 21) const uint BKW = 16;   // shared words along K per step (multiple of LK/KPW and 4)
layout(constant_id = 22) const uint NSLOT = 2;  // int4 int path: chunk slots of weight sums/scales
layout(constant_id = 23) const uint STAGES = 1; // shared operand buffers: 1, or 2 (one barrier per step)
// VKQC_SPLITK (grouped weights on the int8 path): workgroup z computes K values [z * KSLICE,
// (z + 1) * KSLICE) (KSLICE a multiple of the step and of the group) and writes its partial float
// outputs, zero-point term subtracted, before bias / relu / requantization, to binding 2 as
// [z][M][N]; linear_splitk.comp adds the slices in order and finishes them.
layout(constant_id = 24) const uint KSLICE = 0;

const uint NT = SG * WM * WN;
const uint BM = WM * TM * LM;
const uint BN = WN * TN * LN;
const uint SAS4 = BKW / 4u + 1u;  // shared row stride in uvec4 (BKW + 4 words)
const uint U4 = BKW / 4u;         // uvec4 per staged row per step
#ifdef VKQC_CM_INT
const uint KPW = 4u;              // K values per shared word
#else
const uint KPW = 2u;
#endif
const uint BK = BKW * KPW;        // K values per step
const uint LK4 = LK / KPW / 4u;   // uvec4 per row of one MulAdd's K range
const uint SUB = BKW / (LK / KPW);
const uint TILE4 = LM * LN / 4u;  // uvec4 of one 32-bit LM x LN tile

#ifdef VKQC_CM_INT
#define A_T icoopmatNV<8, gl_ScopeSubgroup, LM, LK>
#define B_T icoopmatNV<8, gl_ScopeSubgroup, LK, LN>
#define C_T icoopmatNV<32, gl_ScopeSubgroup, LM, LN>
#else
#define A_T fcoopmatNV<16, gl_ScopeSubgroup, LM, LK>
#define B_T fcoopmatNV<16, gl_ScopeSubgroup, LK, LN>
#define C_T fcoopmatNV<32, gl_ScopeSubgroup, LM, LN>
#endif
#define F_T fcoopmatNV<32, gl_ScopeSubgroup, LM, LN>

// One shared array: the A rows [0, BOFF), the B rows [BOFF, BOFF + BN * SAS4) during the K loop;
// afterwards (and before it, for the int4 path's index tile) one LM x LN 32-bit tile per
// subgroup at sg * TILE4: the epilogue's staging reuses the operand memory.
const uint BOFF = BM * SAS4;
const uint AB_WORDS = (BM + BN) * SAS4;
const uint OUT_WORDS = WM * WN * TILE4;
shared uvec4 sAB[AB_WORDS * STAGES > OUT_WORDS ? AB_WORDS * STAGES : OUT_WORDS];
#ifdef VKQC_CM_INT
shared int sZx[BM];                  // activation zero point of each row of the block
#else
// The activations as fp16 rows of K4P / 2 uvec4 (8 halves each, zero padded), converted once per
// layer by convert_f16.comp: binding 0 holds those, not the float tensor.
layout(std430, binding = 0) readonly buffer XH { uvec4 xh4[]; };
#endif

#if defined(VKQC_CM_INT) && defined(VKQC_WG)
int sum_i8x4(uint w) {
  return bitfieldExtract(int(w), 0, 8) + bitfieldExtract(int(w), 8, 8) + bitfieldExtract(int(w), 16, 8) +
         bitfieldExtract(int(w), 24, 8);
}
// B units are 32-value chunks of one channel (int4: 4 words in, 8 int8 words out; q8gsw: 8 words).
const uint CPS = BK / 32u;           // chunks per step
const uint B_UNITS = BN * CPS;
const uint BW = 2u;                  // shared uvec4 per unit
shared float sSc[NSLOT * BN];        // per chunk slot and column: the chunk's group scale
shared float sZp[NSLOT * BN];        // after the K loop: per unit, then per column, sum_g s * sum(w - zp)
#define CM_ACC0 C_T(0x4B400000)              // the bits of 1.5 * 2^23
#define CM_GROUP(v) (intBitsToFloat(v) - 12582912.0)
#else
const uint B_UNITS = BN * U4;        // one shared uvec4 per unit
const uint BW = 1u;
#endif
const uint A_UNITS = BM * U4;
const uint A_PT = (A_UNITS + NT - 1u) / NT;
const uint B_PT = (B_UNITS + NT - 1u) / NT;

// ---- global -> registers ------------------------------------------------------------------
// Unit u of the A block for the step starting at K value k0: 16 bytes of one row.
uvec4 load_a(uint m0, uint u, uint k0) {
  const uint r = u / U4, c = u % U4, m = m0 + r;
#ifdef VKQC_CM_INT
  const uint k4 = k0 / 4u + c * 4u;  // activation word (a multiple of 4)
  return (m < M && k4 < K4P) ? xq4[(m * K4P + k4) >> 2] : uvec4(0u);
#else
  const uint k = k0 + c * 8u;        // 8 halves, converted by convert_f16.comp
  return (m < M && k < K) ? xh4[m * (K4P / 2u) + k / 8u] : uvec4(0u);
#endif
}

#if defined(VKQC_CM_INT) && defined(VKQC_WG)
// Chunk (u % CPS) of channel n0 + u / CPS: its 32 weights as (w - zp) int8 words, their sum and
// the group's scale. K is a multiple of 32 here, so a chunk is either inside K or beyond it.
void load_b(uint n0, uint u, uint k0, out uvec4 lo, out uvec4 hi, out int ws, out float sc) {
  const uint n = n0 + u / CPS, k = k0 + (u % CPS) * 32u;
  lo = uvec4(0u);
  hi = uvec4(0u);
  ws = 0;
  sc = 0.0;
  if (n >= N || k >= K) return;
#ifdef VKQC_W8G
  // q8gsw: 32 int8 values as they are stored (8 words), their sum, and the group's scale.
  lo = cw4[(n * KW + k / 4u) >> 2];
  hi = cw4[(n * KW + k / 4u + 4u) >> 2];
  ws = 0;
  for (uint j = 0u; j < 4u; ++j) ws += sum_i8x4(lo[j]) + sum_i8x4(hi[j]);
  sc = weight_scale(n, k / GS);
  return;
#endif
  const uvec4 q = cw4[(n * KW + k / 8u) >> 2];
  const uint g = k / GS, zp = weight_zp(n, g);
  const uvec4 l4 = q & 0x0F0F0F0Fu, h4 = (q >> 4) & 0x0F0F0F0Fu;
  lo = uvec4(nibbles_minus_zp(l4.x, zp), nibbles_minus_zp(h4.x, zp), nibbles_minus_zp(l4.y, zp),
             nibbles_minus_zp(h4.y, zp));
  hi = uvec4(nibbles_minus_zp(l4.z, zp), nibbles_minus_zp(h4.z, zp), nibbles_minus_zp(l4.w, zp),
             nibbles_minus_zp(h4.w, zp));
  const uvec4 t = l4 + h4;                 // bytes <= 30
  const uint b = t.x + t.y + t.z + t.w;    // bytes <= 120: no carries between bytes
  const uint nib_sum = (b & 0xFFu) + ((b >> 8) & 0xFFu) + ((b >> 16) & 0xFFu) + (b >> 24);
  ws = int(nib_sum) - int(32u * zp);
  sc = weight_scale(n, g);
}
#else
// Unit u of the B block: 16 bytes of the staged [n][k] row of channel n0 + u / U4.
uvec4 load_b(uint n0, uint u, uint k0) {
  const uint n = n0 + u / U4, c = u % U4;
#ifdef VKQC_CM_INT
  const uint k4 = k0 / 4u + c * 4u;  // q8csw word; padding words are zero weights
  return (n < N && k4 < KW) ? cw4[(n * KW + k4) >> 2] : uvec4(0u);
#else
  const uint k = k0 + c * 8u;        // 8 values (K is a multiple of 8 for int4)
  if (n >= N || k >= K) return uvec4(0u);
  // Dequantized without a conversion instruction: a nibble or byte v in the mantissa of the half
  // 1024.0 (bits 0x6400 | v) is the half 1024 + v, exact, and masking a word with 0x000F000F /
  // 0x00FF00FF yields two of them at once; one packed subtraction leaves the integers, one packed
  // multiply (fma for q4gmw) scales them: fp16(fp16(s) * (q - zp)) [- fp16(m)]. q8csw leaves B
  // the integers and its channel's scale multiplies the fp32 sum (output_value). The halves come
  // out as K values 0 2 1 3 4 6 5 7 of the 8, the order convert_f16.comp writes the activations in.
#ifdef VKQC_W4
  const uint q = CWORD(n * KW + k / 8u), g = k / GS, zp = weight_zp(n, g);
  const uvec4 e = (uvec4(q, q >> 8u, q >> 4u, q >> 12u) & 0x000F000Fu) | 0x64006400u;
  const f16vec2 z = unpackFloat2x16(0x64006400u | (zp * 0x00010001u));  // 1024 + zp
#else
  const uint w0 = CWORD(n * KW + k / 4u) ^ 0x80808080u;
  const uint w1 = CWORD(n * KW + k / 4u + 1u) ^ 0x80808080u;  // inside KW: K4P is even
  const uvec4 e = (uvec4(w0, w0 >> 8u, w1, w1 >> 8u) & 0x00FF00FFu) | 0x64006400u;  // 1024 + 128 + w
  const f16vec2 z = unpackFloat2x16(0x64806480u);                                   // 1152
#endif
#if defined(VKQC_WG)
  const f16vec2 s = f16vec2(float16_t(weight_scale(n, k / GS)));  // 8 values lie in one group
#ifdef VKQC_W4_MIN
  const f16vec2 mn = f16vec2(-float16_t(weight_min(n, k / GS)));  // q4gmw: w = s * q - m
#else
  const f16vec2 mn = f16vec2(0.0hf);
#endif
#define DQ(v) packFloat2x16(fma(unpackFloat2x16(v) - z, s, mn))
#else
#define DQ(v) packFloat2x16(unpackFloat2x16(v) - z)
#endif
  return uvec4(DQ(e.x), DQ(e.y), DQ(e.z), DQ(e.w));
#undef DQ
#endif
}
#endif

// ---- epilogue -----------------------------------------------------------------------------
// The float output value of accumulator bits `bits` at output (m, n), before bias and relu.
float output_value(uint bits, uint m, uint n, uint r) {
#if defined(VKQC_CM_INT) && defined(VKQC_WG)
  // Folded per group already; the zero-point term of the whole row once.
  return (uintBitsToFloat(bits) - float(sZx[r]) * sZp[(n % BN) * CPS]) * act_scale(m);
#elif defined(VKQC_CM_INT)
  // Exact in int32: acc - zp_x * sum(w); cast before scaling (as linear_gemm.comp).
  return float(int(bits) - sZx[r] * int(CWORD(WSUM_OFF + n))) * weight_scale(n, 0u) * act_scale(m);
#elif defined(VKQC_WG)
  return uintBitsToFloat(bits);
#else
  return uintBitsToFloat(bits) * weight_scale(n, 0u);  // fp16 operands, q8csw: B was w - zp exactly
#endif
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  // Row blocks along x (the fastest-launched dimension): consecutive workgroups share their weight
  // block, so it comes from memory once while they run instead of once per wave of row blocks.
  const uint n0 = gl_WorkGroupID.y * BN;
  const uint m0 = gl_WorkGroupID.x * BM;
#ifdef VKQC_SPLITK
  const uint kbeg = gl_WorkGroupID.z * KSLICE, kend = min(K, kbeg + KSLICE);
#else
  const uint kbeg = 0u, kend = K;
#endif
  const uint rbase = (sg / WN) * TM * LM;  // this subgroup's rows / columns within the block
  const uint cbase = (sg % WN) * TN * LN;
  const uint obase = sg * TILE4;           // its 32-bit tile in sAB (outside the K loop)

#ifdef VKQC_CM_INT
  for (uint r = tid; r < BM; r += NT) sZx[r] = act_zero_point(min(m0 + r, M - 1u));
#endif

#ifndef VKQC_CM_G1
  C_T acc[TM][TN];
#if defined(VKQC_CM_INT) && defined(VKQC_WG)
#define ACC0 CM_ACC0
#else
#define ACC0 C_T(0)
#endif
  [[unroll]] for (uint i = 0u; i < TM; ++i)
    [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = ACC0;
#endif
#if defined(VKQC_CM_INT) && defined(VKQC_WG)
  F_T accf[TM][TN];
  [[unroll]] for (uint i = 0u; i < TM; ++i)
    [[unroll]] for (uint j = 0u; j < TN; ++j) accf[i][j] = F_T(0.0);
  // The index tile: the bits of component c of `idx` are 0x3F800000 | the column of component c
  // of any F_T.
  for (uint e = lane; e < LM * LN; e += SG) sAB[obase + e / 4u][e % 4u] = 0x3F800000u | (e % LN);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  F_T idx;
  coopMatLoadNV(idx, sAB, obase, LN / 4u, false);
  subgroupBarrier();
#endif

  uvec4 ra[A_PT];
  uvec4 rb[B_PT * BW];
#if defined(VKQC_CM_INT) && defined(VKQC_WG)
  float rsc[B_PT];
  float rzs[B_PT];  // this thread's units' zero-point sums, sum over steps of s * sum(w - zp)
  [[unroll]] for (uint i = 0u; i < B_PT; ++i) rzs[i] = 0.0;
#endif

  // Prefetch of the step at K value k0.
#if defined(VKQC_CM_INT) && defined(VKQC_WG)
#define PREFETCH(k0)                                                                              \
  [[unroll]] for (uint i = 0u; i < A_PT; ++i) {                                                   \
    const uint u = tid + i * NT;                                                                  \
    ra[i] = u < A_UNITS ? load_a(m0, u, k0) : uvec4(0u);                                          \
  }                                                                                               \
  [[unroll]] for (uint i = 0u; i < B_PT; ++i) {                                                   \
    const uint u = tid + i * NT;                                                                  \
    if (u < B_UNITS) {                                                                            \
      int ws;                                                                                     \
      load_b(n0, u, k0, rb[2u * i], rb[2u * i + 1u], ws, rsc[i]);                                 \
      rzs[i] = fma(float(ws), rsc[i], rzs[i]);                                                    \
    }                                                                                             \
  }
#else
#define PREFETCH(k0)                                                                              \
  [[unroll]] for (uint i = 0u; i < A_PT; ++i) {                                                   \
    const uint u = tid + i * NT;                                                                  \
    ra[i] = u < A_UNITS ? load_a(m0, u, k0) : uvec4(0u);                                          \
  }                                                                                               \
  [[unroll]] for (uint i = 0u; i < B_PT; ++i) {                                                   \
    const uint u = tid + i * NT;                                                                  \
    rb[i] = u < B_UNITS ? load_b(n0, u, k0) : uvec4(0u);                                          \
  }
#endif

  // The registers' step (at K value ks) into the shared buffer at sb0.
#if defined(VKQC_CM_INT) && defined(VKQC_WG)
#define STORE_B(i, u, ks, sb0)                                                                    \
  {                                                                                               \
    const uint r = u / CPS, ch = u % CPS;                                                         \
    sAB[(sb0) + BOFF + r * SAS4 + ch * 2u] = rb[2u * i];                                          \
    sAB[(sb0) + BOFF + r * SAS4 + ch * 2u + 1u] = rb[2u * i + 1u];                                \
    sSc[(((ks) / 32u + ch) % NSLOT) * BN + r] = rsc[i];                                           \
  }
#else
#define STORE_B(i, u, ks, sb0) sAB[(sb0) + BOFF + (u / U4) * SAS4 + u % U4] = rb[i];
#endif
#define STORE(ks, sb0)                                                                            \
  [[unroll]] for (uint i = 0u; i < A_PT; ++i) {                                                   \
    const uint u = tid + i * NT;                                                                  \
    if (u < A_UNITS) sAB[(sb0) + (u / U4) * SAS4 + u % U4] = ra[i];                               \
  }                                                                                               \
  [[unroll]] for (uint i = 0u; i < B_PT; ++i) {                                                   \
    const uint u = tid + i * NT;                                                                  \
    if (u < B_UNITS) STORE_B(i, u, ks, sb0)                                                       \
  }

  PREFETCH(kbeg)
  for (uint k0 = kbeg; k0 < kend; k0 += BK) {
    const uint sb0 = STAGES == 2u && (((k0 - kbeg) / BK) & 1u) != 0u ? AB_WORDS : 0u;  // this step's buffer
    if (STAGES == 1u || k0 == kbeg) {
      barrier();  // every subgroup is done with the previous step's shared tiles
      STORE(k0, sb0)
      barrier();
      if (k0 + BK < kend) {
        PREFETCH(k0 + BK)
      }
    }

    [[unroll]] for (uint s = 0u; s < SUB; ++s) {
      A_T a[TM];
      [[unroll]] for (uint i = 0u; i < TM; ++i)
        coopMatLoadNV(a[i], sAB, sb0 + (rbase + i * LM) * SAS4 + s * LK4, SAS4, false);
#ifdef VKQC_CM_G1
      // Groups of LK values: each MulAdd is one whole group, folded at once (no int32
      // accumulators live across MulAdds: half the accumulator registers).
      const uint sb = ((k0 / 32u + s) % NSLOT) * BN + cbase;  // this group's scales
      [[unroll]] for (uint j = 0u; j < TN; ++j) {
        B_T b;
        coopMatLoadNV(b, sAB, sb0 + BOFF + (cbase + j * LN) * SAS4 + s * LK4, SAS4, true);
        C_T t[TM];
        [[unroll]] for (uint i = 0u; i < TM; ++i) t[i] = coopMatMulAddNV(a[i], b, CM_ACC0);
        [[unroll]] for (int c = 0; c < idx.length(); ++c) {
          const float sc = sSc[sb + j * LN + (floatBitsToUint(idx[c]) & 0xFFu)];
          [[unroll]] for (uint i = 0u; i < TM; ++i) accf[i][j][c] = fma(CM_GROUP(t[i][c]), sc, accf[i][j][c]);
        }
      }
#else
      [[unroll]] for (uint j = 0u; j < TN; ++j) {
        B_T b;
        coopMatLoadNV(b, sAB, sb0 + BOFF + (cbase + j * LN) * SAS4 + s * LK4, SAS4, true);
        [[unroll]] for (uint i = 0u; i < TM; ++i) acc[i][j] = coopMatMulAddNV(a[i], b, acc[i][j]);
      }
#endif
#if defined(VKQC_CM_INT) && defined(VKQC_WG) && !defined(VKQC_CM_G1)
      // End of a group: fold its int32 accumulators into fp32 (LK == 32: one chunk per MulAdd).
      const uint kg = k0 + (s + 1u) * LK;
      if (kg % GS == 0u && kg <= K) {
        const uint sb = ((kg / 32u - 1u) % NSLOT) * BN + cbase;  // the group's last chunk's scales
        [[unroll]] for (uint j = 0u; j < TN; ++j)
          [[unroll]] for (int c = 0; c < idx.length(); ++c) {
            const float sc = sSc[sb + j * LN + (floatBitsToUint(idx[c]) & 0xFFu)];
            [[unroll]] for (uint i = 0u; i < TM; ++i) accf[i][j][c] = fma(CM_GROUP(acc[i][j][c]), sc, accf[i][j][c]);
          }
        [[unroll]] for (uint i = 0u; i < TM; ++i)
          [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = CM_ACC0;
      }
#endif
    }
    if (STAGES == 2u) {
      // The next step into the other buffer (last read by the previous step, which every
      // subgroup finished before the previous barrier), then the step after it into registers.
      if (k0 + BK < kend) {
        STORE(k0 + BK, AB_WORDS - sb0)
      }
      barrier();
      if (k0 + 2u * BK < kend) {
        PREFETCH(k0 + 2u * BK)
      }
    }
  }

#if defined(VKQC_CM_INT) && defined(VKQC_WG)
  // The zero-point sums per unit, then per column (unit u = column * CPS + chunk).
  [[unroll]] for (uint i = 0u; i < B_PT; ++i) {
    const uint u = tid + i * NT;
    if (u < B_UNITS) sZp[u] = rzs[i];
  }
  barrier();
  for (uint r = tid; r < BN; r += NT) {
    float z = 0.0;
    for (uint ch = 0u; ch < CPS; ++ch) z += sZp[r * CPS + ch];
    sZp[r * CPS] = z;
  }
#endif
  // Epilogue, one tile at a time through this subgroup's tile of sAB, once every subgroup is done
  // reading the last step's operands there.
  barrier();
  [[unroll]] for (uint i = 0u; i < TM; ++i)
    [[unroll]] for (uint j = 0u; j < TN; ++j) {
#if defined(VKQC_CM_INT) && defined(VKQC_WG)
      coopMatStoreNV(accf[i][j], sAB, obase, LN / 4u, false);
#else
      coopMatStoreNV(acc[i][j], sAB, obase, LN / 4u, false);
#endif
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      const uint rt = rbase + i * LM, mt = m0 + rt, nt = n0 + cbase + j * LN;
#ifdef VKQC_OUT_Q8
      for (uint e = lane; e < TILE4; e += SG) {
        const uint r = e / (LN / 4u), c = (e % (LN / 4u)) * 4u, m = mt + r, n = nt + c;
        if (m >= M || n >= N) continue;
        const uvec4 v = sAB[obase + e];
        uint word = 0u;
        [[unroll]] for (uint q = 0u; q < 4u; ++q)
          if (n + q < N) word |= requantize(finish(n + q, output_value(v[q], m, n + q, rt + r))) << (8u * q);
        yq[m * N4P + n / 4u] = word;
      }
#elif defined(VKQC_SPLITK)
      for (uint e = lane; e < LM * LN; e += SG) {
        const uint r = e / LN, m = mt + r, n = nt + e % LN;
        if (m < M && n < N) y[(gl_WorkGroupID.z * M + m) * N + n] = output_value(sAB[obase + e / 4u][e % 4u], m, n, rt + r);
      }
#else
      for (uint e = lane; e < LM * LN; e += SG) {
        const uint r = e / LN, m = mt + r, n = nt + e % LN;
        if (m < M && n < N) y[m * N + n] = finish(n, output_value(sAB[obase + e / 4u][e % 4u], m, n, rt + r));
      }
#endif
      subgroupMemoryBarrierShared();
      subgroupBarrier();
    }
}
