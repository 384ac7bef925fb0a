#include "reference/reference.h"

#include <algorithm>
#include <cfenv>
#include <cmath>

namespace vkqc::ref {

float RoundEven(float v) {
  // std::nearbyint rounds in the current mode; the default mode is to-nearest-even.
  const int old = std::fegetround();
  if (old != FE_TONEAREST) std::fesetround(FE_TONEAREST);
  const float r = std::nearbyint(v);
  if (old != FE_TONEAREST) std::fesetround(old);
  return r;
}

int32_t QuantizeInt8(float x, float inv_scale, int32_t zero_point) {
  const float q = RoundEven(x * inv_scale) + float(zero_point);
  return int32_t(std::clamp(q, -128.0f, 127.0f));
}

void LinearInteger(const LinearArgs& a, float act_scale, int32_t zp, float* y, float* magnitude) {
  const float inv = 1.0f / act_scale;
  std::vector<int32_t> xq(size_t(a.k));
  for (int64_t m = 0; m < a.m; ++m) {
    for (int64_t k = 0; k < a.k; ++k) xq[k] = QuantizeInt8(a.x[m * a.k + k], inv, zp);
    for (int64_t n = 0; n < a.n; ++n) {
      int32_t acc = 0;
      const int8_t* wr = a.w + n * a.k;
      for (int64_t k = 0; k < a.k; ++k) acc += (xq[k] - zp) * int32_t(wr[k]);
      float v = float(acc) * (act_scale * a.w_scales[n]);
      if (magnitude) magnitude[m * a.n + n] = std::fabs(v) + (a.bias ? std::fabs(a.bias[n]) : 0.0f);
      if (a.bias) v += a.bias[n];
      if (a.relu) v = std::max(v, 0.0f);
      y[m * a.n + n] = v;
    }
  }
}

void LinearWeightOnly(const LinearArgs& a, float* y, float* abs_sum) {
  for (int64_t m = 0; m < a.m; ++m) {
    const float* xr = a.x + m * a.k;
    for (int64_t n = 0; n < a.n; ++n) {
      const int8_t* wr = a.w + n * a.k;
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < a.k; ++k) {
        const double t = double(xr[k]) * (double(a.w_scales[n]) * double(wr[k]));
        acc += t;
        mag += std::fabs(t);
      }
      if (a.bias) {
        acc += a.bias[n];
        mag += std::fabs(a.bias[n]);
      }
      if (a.relu) acc = std::max(acc, 0.0);
      y[m * a.n + n] = float(acc);
      if (abs_sum) abs_sum[m * a.n + n] = float(mag);
    }
  }
}

Result<std::map<std::string, std::vector<float>>> RunGraph(
    const ir::Graph& g, const std::map<std::string, std::vector<float>>& inputs, const RunOptions& o) {
  std::map<int, std::vector<float>> values;
  for (int t : g.inputs) {
    const ir::Tensor& ten = g.tensors[t];
    auto it = inputs.find(ten.name);
    if (it == inputs.end()) return UserError("reference: no value for graph input '" + ten.name + "'");
    const int64_t want = ten.NumElements(o.tokens);
    if (int64_t(it->second.size()) != want)
      return UserError("reference: input '" + ten.name + "' has " + std::to_string(it->second.size()) +
                       " elements, expected " + std::to_string(want));
    values[t] = it->second;
  }
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    if (op.type != ir::OpType::Linear) return UserError("reference: unsupported op " + op.name);
    const ir::Tensor& xt = g.tensors[op.inputs[0]];
    const ir::Tensor& wt = g.tensors[op.inputs[1]];
    auto xit = values.find(op.inputs[0]);
    if (xit == values.end()) return UserError("reference: op '" + op.name + "' reads a value not computed yet");
    LinearArgs a;
    a.x = xit->second.data();
    a.k = xt.shape[1];
    a.m = int64_t(xit->second.size()) / a.k;
    a.n = wt.shape[0];
    a.w = reinterpret_cast<const int8_t*>(wt.data->data());
    a.w_scales = wt.quant->scales.data();
    a.bias = op.inputs.size() > 2 ? reinterpret_cast<const float*>(g.tensors[op.inputs[2]].data->data()) : nullptr;
    a.relu = op.linear.fused_relu;
    std::vector<float> y(size_t(a.m * a.n));
    const bool q8ta = op.linear.input_quant.scheme == ir::Scheme::Q8TA;
    const bool integer = q8ta && (o.integer_path.empty() || (i < o.integer_path.size() && o.integer_path[i]));
    if (integer) {
      const auto& q = op.linear.input_quant;
      LinearInteger(a, q.scales[0], q.zero_points.empty() ? 0 : q.zero_points[0], y.data());
    } else {
      LinearWeightOnly(a, y.data(), nullptr);
    }
    values[op.outputs[0]] = std::move(y);
  }
  std::map<std::string, std::vector<float>> out;
  for (int t : g.outputs) out[g.tensors[t].name] = values[t];
  return out;
}

}  // namespace vkqc::ref
