// The microbenchmarks of `vkqc roofline` as ordinary vkqc bundles (plain data, no device): each is
// a BundlePlan with shaders from shaders/roofline_*.comp compiled by the shader library, one
// program whose arena holds the benchmark's buffers, written with WriteBundle, so the runtime
// loads, records and times it like any compiled model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/result.h"

namespace vkqc {

enum class RooflineKernel { Read, IntDot, Fma32, Fma16, CoopMatInt8, CoopMatFp16, DispatchChain, GridBarrier };

inline constexpr uint32_t kRooflineWorkgroupSize = 256;
// DispatchChain / GridBarrier (shaders/roofline_sync.comp): workgroups of this size, one word each.
inline constexpr uint32_t kRooflineSyncWorkgroupSize = 64;
// GridBarrier: loads a spinning workgroup makes before it gives up (the grid was not all resident).
inline constexpr uint32_t kRooflineSpinCap = 1u << 18;
// RooflineBundle::measured_layer of the sync kernels: the whole program is timed.
inline constexpr uint32_t kRooflineWholeProgram = UINT32_MAX;

struct RooflineBundleParams {
  RooflineKernel kernel = RooflineKernel::Read;
  uint32_t groups = 1;  // workgroups of kRooflineWorkgroupSize invocations (x dimension)
  uint64_t bytes = 0;   // Read: size of the streamed buffer; a multiple of 256, at most 4 GiB
  uint32_t iters = 1;   // IntDot / Fma* / CoopMat*: loop iterations per invocation; DispatchChain /
                        // GridBarrier: dependent steps (dispatches, or rounds of one dispatch)
  // CoopMat*: VK_KHR_cooperative_matrix MulAdd shape (sint8 x sint8 + sint32, or float16 x
  // float16 + float32); a workgroup is one subgroup of `subgroup` invocations, pinned as the
  // required subgroup size when `pin_subgroup`.
  uint32_t m = 16, n = 16, k = 16, subgroup = 32;
  bool pin_subgroup = false;
};

struct RooflineBundle {
  std::vector<uint8_t> bytes;  // the .vkqb
  uint32_t measured_layer = 0; // the layer whose timestamps give the measurement
  // Work of the measured layer: bytes read (Read) or operations (8 per dot, 2 per FMA).
  double work = 0;
  std::string out_tensor;  // arena tensor holding one result word per workgroup of that layer
  // DispatchChain / GridBarrier: the result words start `out_offset` words into out_tensor (each
  // must equal the step count); GridBarrier: `flag_tensor`'s word 1 is non-zero when a spinning
  // workgroup gave up.
  uint32_t out_offset = 0;
  std::string flag_tensor;
};

// Read: layers "fill" (writes hashed contents), "read (warm-up)" and "read"; the measured one is
// the last. The warm-up pass leaves the cache in the state of a pass that only read, so the
// measured pass sees neither dirty lines nor the fill's cache-resident tail. The two reads write
// the same result words, so a barrier orders them. Compute kernels: one layer, one dispatch.
// DispatchChain: a seed dispatch, then `iters` dependent one-step dispatches (a barrier before each);
// GridBarrier: a seed dispatch, then one dispatch of `iters` rounds with a grid barrier after each
// (shaders/roofline_sync.comp); both timed as the whole program (kRooflineWholeProgram), so the
// cost of one step is the slope between two step counts.
// Errors: parameters out of range (InternalError: the caller sizes them), shader compilation.
Result<RooflineBundle> BuildRooflineBundle(const RooflineBundleParams& params);

// Operations per invocation and loop iteration of the compute kernels (8 chains x 4 steps, times
// 8 ops per dot or 4 lanes x 2 ops per vec4 FMA). CoopMat*: per workgroup (one subgroup) and
// iteration, 8 MulAdds of 2 * m * n * k.
inline constexpr uint32_t kRooflineOpsPerIter = 256;
inline constexpr uint32_t kRooflineCoopMatChains = 8;

// The hash the fill pass writes (word i of the buffer = {h, h ^ 0x9e3779b9, 3h, ~h}, h = hash(i)).
uint32_t RooflineHash(uint32_t x);
// XOR of every 32-bit word of a filled buffer of `words` uvec4: what the XOR of all of a read
// pass's result words must be.
uint32_t RooflineExpectedXor(uint64_t words);

}  // namespace vkqc
