// CPU reference of every op and scheme, written from DESIGN section 4 alone. The integer path
// is int32-exact; float paths accumulate in double (a tighter reference than any fp32 kernel).
// Depends only on the graph IR.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc::ref {

// roundEven in fp32 (ties to even), as GLSL roundEven.
float RoundEven(float v);
// q = clamp(roundEven(x * inv_scale) + zp, -128, 127), inv_scale = 1/scale computed once in fp32.
int32_t QuantizeInt8(float x, float inv_scale, int32_t zero_point);

struct LinearArgs {
  const float* x = nullptr;      // [M, K]
  int64_t m = 0, k = 0, n = 0;
  const int8_t* w = nullptr;     // [N, K]
  const float* w_scales = nullptr;  // [N]
  const float* bias = nullptr;   // [N] or null
  bool relu = false;
};

// Integer path (static per-tensor int8 activations): acc = sum_k (xq - zp) * wq in int32,
// y = float(acc) * (s_x * s_w[n]) + bias, then relu. `magnitude` (nullable, [M,N]) receives
// |float(acc) * s_x * s_w| + |bias|, the scale of the fp32 epilogue's rounding.
void LinearInteger(const LinearArgs& a, float act_scale, int32_t act_zero_point, float* y,
                   float* magnitude = nullptr);

// Weight-only function (float activations, and the dequant fallback of q8ta layers):
// y = sum_k x * (s_w * wq) + bias, then relu. `abs_sum` (nullable, [M,N]) receives
// sum_k |x * s_w * wq| + |bias|, the scale of the rounding error an fp32 kernel may make.
void LinearWeightOnly(const LinearArgs& a, float* y, float* abs_sum);

struct RunOptions {
  int64_t tokens = 0;  // value of the symbolic dimension (0: graph is static)
  // Per op: true = integer path where the op has q8ta activations. Empty: integer path for
  // every q8ta op. A bundle's layers say which path they compiled to (vkqc_layer_info).
  std::vector<bool> integer_path;
};

// Runs the whole graph. Inputs and outputs are f32, keyed by tensor name.
Result<std::map<std::string, std::vector<float>>> RunGraph(
    const ir::Graph& graph, const std::map<std::string, std::vector<float>>& inputs, const RunOptions& options);

}  // namespace vkqc::ref
