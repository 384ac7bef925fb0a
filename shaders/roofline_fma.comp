#version 450
// FMA-rate microbenchmark of `vkqc roofline` (tools/vkqc/roofline_bundles.cc): fp32 (vec4) or,
// with VKQC_FP16, fp16 (f16vec4, needs shaderFloat16). Each invocation runs 8 independent vec4
// chains a = fma(a, mul, add), 4 steps per chain per loop iteration, ITERS iterations:
// 8 * 4 * 4 * ITERS scalar FMAs. mul < 1 keeps every value finite (a tends to add / (1 - mul)).
// Each workgroup's XOR of the results' bits goes to out_words[workgroup].
#ifdef VKQC_FP16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define VEC f16vec4
#define SCALAR float16_t
#else
#define VEC vec4
#define SCALAR float
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITERS = 1;

layout(std430, binding = 0) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Push {
  float mul;
  float add;
  uint seed;
  uint reserved;
} pc;
shared uint wg_xor;

#define STEP(a) a = fma(a, m, c)
#define STEP8 STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5); STEP(a6); STEP(a7)

void main() {
  if (gl_LocalInvocationIndex == 0u) wg_xor = 0u;
  barrier();
  const VEC m = VEC(SCALAR(pc.mul)), c = VEC(SCALAR(pc.add));
  const float x = float((gl_GlobalInvocationID.x ^ pc.seed) & 1023u) * (1.0 / 1024.0);
  VEC a0 = VEC(SCALAR(x)), a1 = VEC(SCALAR(x + 0.125)), a2 = VEC(SCALAR(x + 0.25)), a3 = VEC(SCALAR(x + 0.375));
  VEC a4 = VEC(SCALAR(x + 0.5)), a5 = VEC(SCALAR(x + 0.625)), a6 = VEC(SCALAR(x + 0.75)), a7 = VEC(SCALAR(x + 0.875));
  for (uint it = 0u; it < ITERS; ++it) {
    STEP8;
    STEP8;
    STEP8;
    STEP8;
  }
  const vec4 s = vec4((a0 + a1) + (a2 + a3)) + vec4((a4 + a5) + (a6 + a7));
  const uvec4 u = floatBitsToUint(s);
  atomicXor(wg_xor, u.x ^ u.y ^ u.z ^ u.w);
  barrier();
  if (gl_LocalInvocationIndex == 0u) out_words[gl_WorkGroupID.x] = wg_xor;
}
