// Linear op family: variant choice, weight packing and dispatch parameters.
// Variants (DESIGN 5): linear_<act>_q8csw_<accum>_<algo>, accum in {dot, dequant},
// algo in {gemm, gemv}. dot = int32 accumulation with the packed int8 dot product after a
// quantize_q8ta dispatch; dequant = int8 weights dequantized in the shader, fp32 accumulation,
// activation quantization skipped (the weight-only function, DESIGN 4).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"
#include "compiler/profile/profile.h"

namespace vkqc::linear {

enum class Algo { Gemm, Gemv };
enum class Accum { IntDot, Dequant };
const char* AlgoName(Algo a);    // "gemm" / "gemv"
const char* AccumName(Accum a);  // "dot" / "dequant"

struct LinearShape {
  int64_t m = 1, k = 1, n = 1;
  ir::Scheme act = ir::Scheme::Float;  // Float or Q8TA
  bool has_bias = false;
  bool relu = false;
};

struct SelectOptions {
  std::optional<Algo> force_algo;
  std::optional<Accum> force_accum;
  uint32_t gemv_max_m = 0;  // 0: the profile's sidecar value, else kDefaultGemvMaxM
};
constexpr uint32_t kDefaultGemvMaxM = 8;

// A layer's kernel choice. Pure data: selection is a function of (shape, profile, options).
struct LinearChoice {
  Algo algo = Algo::Gemm;
  Accum accum = Accum::Dequant;
  // GEMM: workgroup tx*ty threads, rm x rn outputs per thread, bk4 packed words per K step.
  uint32_t tx = 16, ty = 16, rm = 4, rn = 4, bk4 = 8;
  // GEMV: `threads` per workgroup (power of two), nr channels and mb rows per workgroup,
  // subgroup_size > 0 pins the subgroup width and enables the subgroupAdd reduction.
  uint32_t threads = 128, nr = 4, mb = 1, subgroup_size = 0;
  std::string reason;  // human-readable: why this variant (printed by vkqc inspect)

  std::string VariantName(ir::Scheme act) const;
  uint32_t SharedMemoryBytes() const;
  uint32_t Invocations() const { return algo == Algo::Gemm ? tx * ty : threads; }
};

Result<LinearChoice> SelectLinear(const LinearShape& shape, const TargetProfile& profile,
                                  const SelectOptions& options);

// ---- packing ------------------------------------------------------------------------------
// Packed weights: [N][K4P] little-endian words, each word 4 consecutive int8 K values of one
// output channel; K4P = ceil(K/4) rounded up to kKWordAlign; padding bytes are zero. The one
// layout serves both GEMM (row tiles) and GEMV (uvec4 chunks), so programs share weights.
constexpr uint32_t kKWordAlign = 8;
uint32_t PackedK4(int64_t k);

// Channel params: 16 bytes per output channel {f32 weight_scale, i32 weight_sum, f32 bias, 0}
// (shaders/common.glslh ChannelParams).
struct PackedLinear {
  std::vector<uint8_t> weights;
  std::vector<uint8_t> channel_params;
};
PackedLinear PackQ8csw(const int8_t* w, int64_t n, int64_t k, const float* scales,
                       const float* bias /* nullable */);
// Inverse of PackQ8csw's weight part (for round-trip tests and inspection).
std::vector<int8_t> UnpackQ8csw(const std::vector<uint8_t>& packed, int64_t n, int64_t k);

// ---- dispatch parameters ------------------------------------------------------------------
// Push constants; twins of the GLSL blocks, checked against SPIR-V reflection at compile time.
struct LinearPush {
  float act_scale;
  int32_t act_zero_point;
  uint32_t flags;  // kFlagRelu | kFlagBias
  float reserved;
};
static_assert(sizeof(LinearPush) == 16);
constexpr uint32_t kFlagRelu = 1, kFlagBias = 2;

struct QuantizePush {
  float inv_scale;
  int32_t zero_point;
};
static_assert(sizeof(QuantizePush) == 8);

struct ShaderKey {
  std::string source;                 // file in shaders/
  std::vector<std::string> defines;   // e.g. "VKQC_INT_DOT"
};

struct SpecValue {
  uint32_t id;
  uint32_t value;
};

struct DispatchParams {
  ShaderKey shader;
  std::vector<SpecValue> spec;
  uint32_t local_size[3];
  uint32_t group_count[3];
  uint32_t required_subgroup_size = 0;
  uint32_t shared_memory_bytes = 0;
  std::vector<uint8_t> push;
};

// The quantize_q8ta dispatch feeding an int-dot layer (x float [M,K] -> packed [M][K4P]).
DispatchParams QuantizeDispatch(int64_t m, int64_t k, float scale, int32_t zero_point,
                                const TargetProfile& profile);
// The linear dispatch itself.
DispatchParams LinearDispatch(const LinearShape& shape, const LinearChoice& choice,
                              float act_scale, int32_t act_zero_point, const TargetProfile& profile);

// Grid helper: spreads `groups` over x (<= max_x) and y.
void SplitGroups(uint64_t groups, uint32_t max_x, uint32_t out[2]);

}  // namespace vkqc::linear
