#version 450
// clip over COUNT f32 values: y = min(max(x, lo), hi); either bound may be infinite (relu: lo 0,
// hi +inf). The bounds are push constants, so every clip op shares one pipeline per size.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint COUNT = 1;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Push {
  float lo;
  float hi;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i >= COUNT) return;
  y[i] = min(max(x[i], pc.lo), pc.hi);
}
