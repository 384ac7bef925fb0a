#version 450
// Packed int8 dot-product microbenchmark of `vkqc roofline` (tools/vkqc/roofline_bundles.cc).
// Each invocation runs 8 independent chains acc = OpSDot(acc, b) + acc (one packed 4x8-bit
// signed dot with int32 accumulation, the dp4a form: 4 multiplies + 4 adds), 4 steps per chain per
// loop iteration, ITERS iterations: 8 * 4 * ITERS dots. The dot's operand is the chain's own
// accumulator, so nothing can be hoisted out of the loop; each workgroup's XOR of the results goes
// to out_words[workgroup].
#define VKQC_INT_DOT
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITERS = 1;

layout(std430, binding = 0) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Push {
  uint seed;
  uint operand;  // the b of every dot (runtime data, so the compiler cannot fold it)
  uint reserved0, reserved1;
} pc;
shared uint wg_xor;

#define STEP(a) a = SDOT(uint(a), b) + a
#define STEP8 STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5); STEP(a6); STEP(a7)

void main() {
  if (gl_LocalInvocationIndex == 0u) wg_xor = 0u;
  barrier();
  const uint g = gl_GlobalInvocationID.x ^ pc.seed;
  const uint b = pc.operand;
  int a0 = int(g), a1 = int(g + 1u), a2 = int(g + 2u), a3 = int(g + 3u);
  int a4 = int(g + 4u), a5 = int(g + 5u), a6 = int(g + 6u), a7 = int(g + 7u);
  for (uint it = 0u; it < ITERS; ++it) {
    STEP8;
    STEP8;
    STEP8;
    STEP8;
  }
  atomicXor(wg_xor, uint((a0 ^ a1) ^ (a2 ^ a3) ^ (a4 ^ a5) ^ (a6 ^ a7)));
  barrier();
  if (gl_LocalInvocationIndex == 0u) out_words[gl_WorkGroupID.x] = wg_xor;
}
