#version 450
#extension GL_EXT_control_flow_attributes : require
// Weight prefetch (compiler/passes/prefetch.h): reads WORDS 16-byte words of the weight segment
// (the range the next barrier interval's dispatches read) so they are in the GPU's last-level
// cache when those dispatches start. It runs beside the dispatches before that barrier (a norm's
// one-workgroup row kernel, the decode attention), which leave most of the GPU idle. Each
// invocation issues all of its UNR loads before it uses any. The result is never needed: an
// invocation whose words XOR to MAGIC (a push constant the host sets) writes one word of the
// compiler-owned sink state, so the loads cannot be removed as dead code; that write changes
// nothing anyone reads.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint UNR = 8;

layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
layout(std430, binding = 1) writeonly buffer Sink { uint sink[]; };
layout(push_constant) uniform Push {
  uint words;  // 16-byte words of the range
  uint magic;
};

void main() {
  const uint t = gl_GlobalInvocationID.x;
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uvec4 v[UNR];
  [[unroll]] for (uint j = 0u; j < UNR; ++j) {
    const uint i = t + j * stride;
    v[j] = i < words ? w[i] : uvec4(0u);
  }
  uvec4 acc = uvec4(0u);
  [[unroll]] for (uint j = 0u; j < UNR; ++j) acc ^= v[j];
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == magic) sink[0] = t;
}
