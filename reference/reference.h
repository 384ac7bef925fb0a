// CPU reference of every op and scheme, written from DESIGN section 4 alone. Integer paths are
// int32-exact; float accumulation is in double (a tighter reference than any fp32 kernel).
// Depends only on the graph IR.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc::ref {

// int32 quantization (symmetric): clamp(roundEven(x * inv_scale), INT32_MIN, INT32_MAX).
int32_t QuantizeInt32(float x, float inv_scale);

// roundEven in fp32 (ties to even), as GLSL roundEven.
float RoundEven(float v);
// q = clamp(roundEven(x * inv_scale) + zp, -128, 127), inv_scale = 1/scale computed once in fp32.
int32_t QuantizeInt8(float x, float inv_scale, int32_t zero_point);

struct QParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};
// dq8ca: choose_qparams_per_token_asymmetric over one row of k values (DESIGN 4).
QParams ChooseQParamsPerToken(const float* row, int64_t k);

// Weights as signed integers (q - zp) per [N][K], with one scale per group of `group_size`
// along K (group_size == K for per-channel q8csw).
struct DecodedWeights {
  int64_t n = 0, k = 0, group_size = 0;
  std::vector<int32_t> w;      // [N][K]
  std::vector<float> scales;   // [N][K / group_size]
  std::vector<float> mins;     // q4gmw: [N][K / group_size], w = s * q - m; else empty
};
DecodedWeights DecodeWeights(const ir::Tensor& weight);

struct LinearOut {
  std::vector<float> y;          // [M][N] float outputs (before any q8to requantization)
  std::vector<float> magnitude;  // [M][N] sum of |terms| + |bias|: the scale of rounding error
};

// Integer path: xq [M][K] int8 values with per-row parameters (one entry: per tensor).
// acc_g = sum_{k in g} (xq - zp_x) * (w - zp_w) in int32; y = sum_g acc_g * s_x * s_w[n][g] + bias.
// q4gmw: y = sum_g s_x * (s_w[n][g] * acc_g - m[n][g] * sum_{k in g} (xq - zp_x)) + bias.
LinearOut LinearQuantized(const std::vector<int32_t>& xq, const std::vector<QParams>& row_params, int64_t m,
                          const DecodedWeights& w, const float* bias, bool relu);
// Weight-only function: y = sum_k x * s_w[n][g] * (w - zp_w) + bias.
LinearOut LinearWeightOnly(const float* x, int64_t m, const DecodedWeights& w, const float* bias, bool relu);

// q8to: requantize float outputs per tensor.
std::vector<float> Requantize(const std::vector<float>& y, float scale, int32_t zero_point);

float Silu(float x);

struct RunOptions {
  int64_t tokens = 0;  // value of the symbolic dimension (0: graph is static)
  // Per op: true = the quantized-activation (integer) function where the op quantizes its
  // activations; false = the weight-only function (the dequant fallback). Empty: integer for
  // every op with quantized activations. A bundle's layers say which one they compiled to.
  std::vector<bool> integer_path;
  // Values of i32 graph inputs (exact; the float map cannot hold every int32). f16 inputs are
  // given as floats and rounded to f16 on the way in, as the device sees them.
  std::map<std::string, std::vector<int32_t>> int32_inputs;
  // KV caches (state tensors) by name, [Hkv][S][D] values: read and updated by attention ops.
  // nullptr, or a missing entry: zeros (a fresh state).
  std::map<std::string, std::vector<float>>* state = nullptr;
};

struct GraphResult {
  std::map<std::string, std::vector<float>> outputs;    // int8 tensors hold their integer values
  std::map<std::string, std::vector<float>> magnitude;  // float outputs of linear ops only
  std::map<std::string, std::vector<int32_t>> int32_outputs;  // i32 outputs, exact (also in outputs, rounded)
};

// Runs the whole graph. Inputs are f32 values (int8 inputs: their integer values).
Result<GraphResult> RunGraphDetailed(const ir::Graph& graph, const std::map<std::string, std::vector<float>>& inputs,
                                     const RunOptions& options);
Result<std::map<std::string, std::vector<float>>> RunGraph(
    const ir::Graph& graph, const std::map<std::string, std::vector<float>>& inputs, const RunOptions& options);

// Legacy single-layer helpers of the q8csw path (tests of the math by hand).
struct LinearArgs {
  const float* x = nullptr;
  int64_t m = 0, k = 0, n = 0;
  const int8_t* w = nullptr;
  const float* w_scales = nullptr;
  const float* bias = nullptr;
  bool relu = false;
};
void LinearInteger(const LinearArgs& a, float act_scale, int32_t act_zero_point, float* y,
                   float* magnitude = nullptr);
void LinearWeightOnly(const LinearArgs& a, float* y, float* abs_sum);

}  // namespace vkqc::ref
