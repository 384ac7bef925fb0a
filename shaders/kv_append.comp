#version 450
// Appends the new K and V rows of a run to the KV cache: row t of k/v [ROWS][HKV*D] goes to cache
// position pos0 + t of every KV head (cache [HKV][S][D]). VKQC_KV_F16: the cache holds f16
// (round to nearest even), two per word; else f32. One invocation per pair of values. A position
// at or past S is never written (the runtime refuses such runs before they start).
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 1;
layout(constant_id = 2) const uint HKV = 1;
layout(constant_id = 3) const uint D = 2;
layout(constant_id = 4) const uint S = 1;

layout(std430, binding = 0) readonly buffer K { vec2 k[]; };
layout(std430, binding = 1) readonly buffer Vv { vec2 v[]; };
layout(std140, binding = 2) uniform P { int pos0; };  // the position: a uniform (not a storage buffer)
#ifdef VKQC_KV_F16
layout(std430, binding = 3) writeonly buffer KC { uint kc[]; };
layout(std430, binding = 4) writeonly buffer VC { uint vc[]; };
#else
layout(std430, binding = 3) writeonly buffer KC { vec2 kc[]; };
layout(std430, binding = 4) writeonly buffer VC { vec2 vc[]; };
#endif

void main() {
  const uint g = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  const uint half_d = D / 2, per_row = HKV * half_d;
  if (g >= ROWS * per_row) return;
  const uint t = g / per_row, rem = g % per_row, h = rem / half_d, i = rem % half_d;
  const int p = pos0 + int(t);
  if (p < 0 || uint(p) >= S) return;
  const uint at = (h * S + uint(p)) * half_d + i;
  const vec2 kv = k[g], vv = v[g];
#ifdef VKQC_KV_F16
  kc[at] = f32_to_f16(kv.x) | (f32_to_f16(kv.y) << 16);
  vc[at] = f32_to_f16(vv.x) | (f32_to_f16(vv.y) << 16);
#else
  kc[at] = kv;
  vc[at] = vv;
#endif
}
