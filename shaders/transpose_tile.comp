#version 450
// Batched 2-d transpose of f32 through shared memory: x [B, R, C] -> y [B, C, R]
// (compiler/kernels/layout/layout.h). One workgroup of 32 x ROWS invocations per 32 x 32 tile,
// tiles numbered flat over the grid; each invocation moves 32 / ROWS values in and out, reading
// along C and writing along R, so both are coalesced. The tile's rows are padded to 33 values so
// the column reads hit distinct shared-memory banks.
layout(local_size_x = 32, local_size_y_id = 1) in;
layout(constant_id = 2) const uint B = 1;
layout(constant_id = 3) const uint R = 1;
layout(constant_id = 4) const uint C = 1;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

shared float tile[32][33];

void main() {
  const uint tiles_c = (C + 31u) / 32u, tiles_r = (R + 31u) / 32u;
  const uint t = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (t >= tiles_c * tiles_r * B) return;  // the whole workgroup: barrier() stays uniform
  const uint c0 = (t % tiles_c) * 32u, r0 = ((t / tiles_c) % tiles_r) * 32u, b = t / (tiles_c * tiles_r);
  const uint lx = gl_LocalInvocationID.x;
  for (uint j = gl_LocalInvocationID.y; j < 32u; j += gl_WorkGroupSize.y) {
    const uint r = r0 + j, c = c0 + lx;
    if (r < R && c < C) tile[j][lx] = x[(b * R + r) * C + c];
  }
  barrier();
  for (uint j = gl_LocalInvocationID.y; j < 32u; j += gl_WorkGroupSize.y) {
    const uint c = c0 + j, r = r0 + lx;
    if (r < R && c < C) y[(b * C + c) * R + r] = tile[lx][j];
  }
}
