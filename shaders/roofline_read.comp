#version 450
// Stream-read microbenchmark of `vkqc roofline` (tools/vkqc/roofline_bundles.cc).
// Read (default): with T invocations in the grid, invocation i reads the uvec4 words
// i, i+T, i+2T, ... of `data` (each step the grid reads one contiguous block), four independent
// 16-byte loads per step. Every word is read exactly once; the XOR of all a workgroup read goes to
// out_words[workgroup], so no load can be eliminated and the host can check the sum
// (RooflineExpectedXor).
// VKQC_FILL: writes RooflineHash-based contents into `data` instead, so the read streams
// non-constant data (hardware that compresses zero or constant memory could flatter it).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint WORDS = 16;  // uvec4 words of data

#ifdef VKQC_FILL
layout(std430, binding = 0) writeonly buffer Data { uvec4 data[]; };
#else
layout(std430, binding = 0) readonly buffer Data { uvec4 data[]; };
layout(std430, binding = 1) writeonly buffer Out { uint out_words[]; };
shared uint wg_xor;
#endif

// Must equal RooflineHash in tools/vkqc/roofline_bundles.cc.
uint roofline_hash(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

void main() {
  const uint T = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint i = gl_GlobalInvocationID.x;
#ifdef VKQC_FILL
  for (; i < WORDS; i += T) {
    const uint h = roofline_hash(i);
    data[i] = uvec4(h, h ^ 0x9e3779b9u, h * 3u, ~h);
  }
#else
  if (gl_LocalInvocationIndex == 0u) wg_xor = 0u;
  barrier();
  uvec4 acc = uvec4(0u);
  for (; i + 3u * T < WORDS; i += 4u * T) {
    const uvec4 a = data[i], b = data[i + T], c = data[i + 2u * T], d = data[i + 3u * T];
    acc ^= (a ^ b) ^ (c ^ d);
  }
  for (; i < WORDS; i += T) acc ^= data[i];
  atomicXor(wg_xor, acc.x ^ acc.y ^ acc.z ^ acc.w);
  barrier();
  if (gl_LocalInvocationIndex == 0u) out_words[gl_WorkGroupID.x] = wg_xor;
#endif
}
