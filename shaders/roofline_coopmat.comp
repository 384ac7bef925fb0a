#version 450
// Cooperative-matrix MulAdd microbenchmark of `vkqc roofline` (tools/vkqc/roofline_bundles.cc),
// written against GL_NV_cooperative_matrix like linear_coopmat.comp and translated to
// VK_KHR_cooperative_matrix (VKQC_CM_KHR). A workgroup is one subgroup: it loads two A and four B
// tiles of hashed values from shared memory and runs 8 independent accumulation chains
// c[i][j] = A[i] x B[j] + c[i][j] (a 2 x 4 register tile, as a GEMM's inner loop), ITERS
// iterations: 8 * ITERS MulAdds of 2 * LM * LN * LK operations. The sum of the chains goes
// through shared memory into one XOR word per workgroup (out_words[workgroup]), so no MulAdd is
// dead. VKQC_CM_INT: sint8 x sint8 + sint32 (products wrap, which is defined); otherwise
// float16 x float16 + float32 with operands in [0, 1) (no overflow for any ITERS used).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#ifdef VKQC_CM_INT
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#else
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITERS = 1;
layout(constant_id = 2) const uint LM = 16;
layout(constant_id = 3) const uint LN = 16;
layout(constant_id = 4) const uint LK = 16;

layout(std430, binding = 0) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Push {
  uint seed;
  uint reserved0, reserved1, reserved2;
} pc;

#ifdef VKQC_CM_INT
#define A_T icoopmatNV<8, gl_ScopeSubgroup, LM, LK>
#define B_T icoopmatNV<8, gl_ScopeSubgroup, LK, LN>
#define C_T icoopmatNV<32, gl_ScopeSubgroup, LM, LN>
const uint EPW = 4u;  // operand elements per 32-bit word
#else
#define A_T fcoopmatNV<16, gl_ScopeSubgroup, LM, LK>
#define B_T fcoopmatNV<16, gl_ScopeSubgroup, LK, LN>
#define C_T fcoopmatNV<32, gl_ScopeSubgroup, LM, LN>
const uint EPW = 2u;
#endif
const uint AW = LM * LK / EPW;  // words of one A tile
const uint BW = LK * LN / EPW;  // words of one B tile
shared uint sIn[2u * AW + 4u * BW];
shared uint sOut[LM * LN];
shared uint wg_xor;

uint hash(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

void main() {
  const uint lane = gl_LocalInvocationIndex, n = gl_WorkGroupSize.x;
  if (lane == 0u) wg_xor = 0u;
  for (uint i = lane; i < 2u * AW + 4u * BW; i += n) {
    const uint h = hash(i ^ pc.seed ^ (gl_WorkGroupID.x << 12));
#ifdef VKQC_CM_INT
    sIn[i] = h;
#else
    sIn[i] = h & 0x3BFF3BFFu;  // two halves in [0, 1)
#endif
  }
  barrier();
  A_T a0, a1;
  B_T b0, b1, b2, b3;
  coopMatLoadNV(a0, sIn, 0u, LK / EPW, false);
  coopMatLoadNV(a1, sIn, AW, LK / EPW, false);
  coopMatLoadNV(b0, sIn, 2u * AW, LK / EPW, true);
  coopMatLoadNV(b1, sIn, 2u * AW + BW, LK / EPW, true);
  coopMatLoadNV(b2, sIn, 2u * AW + 2u * BW, LK / EPW, true);
  coopMatLoadNV(b3, sIn, 2u * AW + 3u * BW, LK / EPW, true);
  C_T c00 = C_T(0), c01 = C_T(0), c02 = C_T(0), c03 = C_T(0);
  C_T c10 = C_T(0), c11 = C_T(0), c12 = C_T(0), c13 = C_T(0);
  for (uint it = 0u; it < ITERS; ++it) {
    c00 = coopMatMulAddNV(a0, b0, c00);
    c01 = coopMatMulAddNV(a0, b1, c01);
    c02 = coopMatMulAddNV(a0, b2, c02);
    c03 = coopMatMulAddNV(a0, b3, c03);
    c10 = coopMatMulAddNV(a1, b0, c10);
    c11 = coopMatMulAddNV(a1, b1, c11);
    c12 = coopMatMulAddNV(a1, b2, c12);
    c13 = coopMatMulAddNV(a1, b3, c13);
  }
  const C_T sum = ((c00 + c01) + (c02 + c03)) + ((c10 + c11) + (c12 + c13));
  coopMatStoreNV(sum, sOut, 0u, LN, false);
  barrier();
  uint x = 0u;
  for (uint e = lane; e < LM * LN; e += n) x ^= sOut[e];
  atomicXor(wg_xor, x);
  barrier();
  if (lane == 0u) out_words[gl_WorkGroupID.x] = wg_xor;
}
