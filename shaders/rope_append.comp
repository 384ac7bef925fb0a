#version 450
// rope of q and k and the KV-cache append in one dispatch (the compiler's row fusion of two rope
// ops into the attention that reads them): one invocation per pair of adjacent values (a word of
// the f16 cache) of one head of one row, q heads first, then KV heads. Each rotated value is
// x_d * cos - x_partner * sin for the first of its pair and x_partner * sin + x_d * cos for the
// second (the rope op's expressions), pairs (i, i + D/2) or, VKQC_INTERLEAVED, (2i, 2i+1). Writes
// q_rot and k_rot as the rope ops would, and k_rot and v at cache position pos + row (f16 round to
// nearest even with VKQC_KV_F16); positions at or past S are never written.
#include "common.glslh"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 1;
layout(constant_id = 2) const uint HQ = 1;
layout(constant_id = 3) const uint HKV = 1;
layout(constant_id = 4) const uint D = 2;
layout(constant_id = 5) const uint S = 1;
layout(constant_id = 6) const uint MAXPOS = 1;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { vec2 v[]; };
layout(std140, binding = 3) uniform P { int pos0; };  // the position: a uniform (not a storage buffer)
layout(std430, binding = 4) readonly buffer T { vec2 cs[]; };
layout(std430, binding = 5) writeonly buffer QR { vec2 qr[]; };
layout(std430, binding = 6) writeonly buffer KR { vec2 kr[]; };
#ifdef VKQC_KV_F16
layout(std430, binding = 7) writeonly buffer KC { uint kc[]; };
layout(std430, binding = 8) writeonly buffer VC { uint vc[]; };
#else
layout(std430, binding = 7) writeonly buffer KC { vec2 kc[]; };
layout(std430, binding = 8) writeonly buffer VC { vec2 vc[]; };
#endif

// The rotated value of dim d of the head at x[base..base+D) (common.glslh's rope helpers).
float rotated(bool is_q, uint base, uint d, uint p) {
  const uint partner = rope_partner(d, D);
  const vec2 c = cs[p * (D / 2u) + rope_column(d, D)];
  const float xd = is_q ? q[base + d] : k[base + d];
  const float xp = is_q ? q[base + partner] : k[base + partner];
  return rope_rotated(xd, xp, rope_first(d, D), c);
}

void main() {
  const uint g = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  const uint half_d = D / 2, qw = HQ * half_d, per_row = qw + HKV * half_d;
  if (g >= ROWS * per_row) return;
  const uint r = g / per_row, rem = g % per_row;
  const uint p = uint(clamp(pos0 + int(r), 0, int(MAXPOS) - 1));
  const bool is_q = rem < qw;
  const uint local = is_q ? rem : rem - qw, h = local / half_d, w = local % half_d;
  const uint width = (is_q ? HQ : HKV) * D, base = r * width + h * D;
  const vec2 y = vec2(rotated(is_q, base, 2u * w, p), rotated(is_q, base, 2u * w + 1u, p));
  if (is_q) {
    qr[(r * width + h * D) / 2u + w] = y;
    return;
  }
  kr[(r * width + h * D) / 2u + w] = y;
  const int pc = pos0 + int(r);
  if (pc < 0 || uint(pc) >= S) return;
  const uint at = (h * S + uint(pc)) * half_d + w;
  const vec2 vv = v[(r * width + h * D) / 2u + w];
#ifdef VKQC_KV_F16
  kc[at] = f32_to_f16(y.x) | (f32_to_f16(y.y) << 16);
  vc[at] = f32_to_f16(vv.x) | (f32_to_f16(vv.y) << 16);
#else
  kc[at] = y;
  vc[at] = vv;
#endif
}
