#version 450
// Dependency-latency microbenchmarks of `vkqc roofline` (tools/vkqc/roofline_bundles.cc): what one
// dependent step costs when the steps are dispatches separated by pipeline barriers, and when
// they are rounds of one dispatch separated by an in-kernel grid barrier (the design question of
// a persistent kernel). Both compute the same thing, so the host checks either exactly: a grid of
// G workgroups holds one word per workgroup; in each step workgroup g reads the words of g and of
// g + 1 (mod G) that the previous step wrote and writes max of them + 1, so after S steps every
// word is S (every step read what the one before wrote, across workgroups).
//
// VKQC_SEED   zeros the G words of binding 0 (and, VKQC_GRID, the counter and flag of binding 1).
// default     one step: binding 0 the previous words (read), binding 1 this step's (written).
// VKQC_GRID   ROUNDS steps in one dispatch over two halves of binding 0 (words [0, G) and [G, 2G):
//             round r reads half r % 2, writes the other), each followed by a grid barrier: a workgroup's word is
//             stored, memoryBarrierBuffer, one atomicAdd on the counter, then its first invocation
//             spins (atomic reads) until the counter reaches G * (r + 1). That needs every workgroup of the grid
//             resident at once, which Vulkan does not promise: each spin gives up after SPIN_CAP
//             loads, raising the flag (binding 1, word 1) that ends every workgroup's loop, so a grid
//             larger than the device can hold ends in bounded time with the flag set, never hangs.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROUNDS = 1;  // VKQC_GRID: steps per dispatch
layout(constant_id = 2) const uint SPIN_CAP = 262144;

#if defined(VKQC_SEED)
layout(std430, binding = 0) writeonly buffer Vals { uint vals[]; };
#ifdef VKQC_GRID
layout(std430, binding = 1) writeonly buffer Sync { uint sync_words[]; };
#endif
#elif defined(VKQC_GRID)
layout(std430, binding = 0) coherent volatile buffer Vals { uint vals[]; };
layout(std430, binding = 1) coherent volatile buffer Sync { uint counter; uint failed; };
shared uint s_go;
#else
layout(std430, binding = 0) readonly buffer In { uint in_vals[]; };
layout(std430, binding = 1) writeonly buffer Out { uint out_vals[]; };
#endif

void main() {
  const uint g = gl_WorkGroupID.x, G = gl_NumWorkGroups.x;
  const bool first = gl_LocalInvocationIndex == 0u;
#if defined(VKQC_SEED)
  if (first) vals[g] = 0u;
#ifdef VKQC_GRID
  if (first && g == 0u) {
    sync_words[0] = 0u;
    sync_words[1] = 0u;
  }
#endif
#elif defined(VKQC_GRID)
  for (uint r = 0u; r < ROUNDS; ++r) {
    const uint src = (r & 1u) * G, dst = G - src;
    if (first) {
      vals[dst + g] = max(vals[src + g], vals[src + (g + 1u) % G]) + 1u;
      memoryBarrierBuffer();
      const uint target = G * (r + 1u);
      // The spin reads the counter and the flag by atomics: they are performed where the atomicAdds
      // are (plain loads of a coherent volatile buffer stayed stale on NVIDIA: the spins gave up).
      uint seen = atomicAdd(counter, 1u) + 1u, spins = 0u;
      bool stop = false;
      while (seen < target && !stop && spins < SPIN_CAP) {
        seen = atomicOr(counter, 0u);
        stop = atomicOr(failed, 0u) != 0u;
        ++spins;
      }
      if (seen < target && !stop) atomicOr(failed, 1u);  // gave up: every workgroup stops
      memoryBarrierBuffer();
      s_go = seen >= target && !stop ? 1u : 0u;
    }
    barrier();
    const bool go = s_go != 0u;
    barrier();  // every invocation has read s_go before the next round's first one writes it
    if (!go) return;  // uniform across the workgroup
  }
#else
  if (first) out_vals[g] = max(in_vals[g], in_vals[(g + 1u) % G]) + 1u;
#endif
}
