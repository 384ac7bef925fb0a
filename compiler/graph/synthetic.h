// Builds in-memory linear graphs with random (fixed-seed) weights: compiler and GPU tests, and the
// synthetic layers `vkqc tune` times.
#pragma once
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/graph/ir.h"

namespace vkqc::testing_graphs {

inline ir::ConstData OwnBytes(const void* p, size_t n) {
  auto owner = std::make_shared<std::vector<uint8_t>>(n);
  if (n) std::memcpy(owner->data(), p, n);
  return ir::ConstData{owner, 0, n};
}

// Appends a tensor without data to g; returns its index.
inline int AddTensor(ir::Graph& g, const std::string& name, std::vector<int64_t> shape,
                     ir::DType dt = ir::DType::F32) {
  ir::Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dt;
  g.tensors.push_back(std::move(t));
  return int(g.tensors.size() - 1);
}

struct LayerSpec {
  int64_t k = 4, n = 4;
  bool q8ta = true;       // static int8 activations; else weight-only (float)
  float act_scale = 0.02f;
  int32_t act_zp = 3;
  bool bias = true;
  bool relu = false;
};

// A chain of linear layers x[M,K0] -> ... -> y. `m` may be ir::kSymbolicDim.
inline ir::Graph MakeLinearChain(int64_t m, const std::vector<LayerSpec>& layers, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> wdist(-127, 127);
  std::uniform_real_distribution<float> sdist(0.5f, 1.5f);
  std::uniform_real_distribution<float> bdist(-0.5f, 0.5f);
  ir::Graph g;
  auto add = [&](ir::Tensor t) {
    g.tensors.push_back(std::move(t));
    return int(g.tensors.size() - 1);
  };
  int x = add({"x", {m, layers[0].k}, ir::DType::F32, {}, {}});
  g.inputs = {x};
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& l = layers[i];
    const std::string p = std::string("l").append(std::to_string(i));
    std::vector<int8_t> w(size_t(l.n * l.k));
    for (auto& v : w) v = int8_t(wdist(rng));
    ir::Quant wq;
    wq.scheme = ir::Scheme::Q8CSW;
    for (int64_t c = 0; c < l.n; ++c) wq.scales.push_back(sdist(rng) / (60.0f * std::sqrt(float(l.k))));
    int wt = add({p + ".w", {l.n, l.k}, ir::DType::I8, wq, OwnBytes(w.data(), w.size())});
    ir::Op op;
    op.name = p;
    op.type = ir::OpType::Linear;
    op.inputs = {x, wt};
    if (l.bias) {
      std::vector<float> b(size_t(l.n));
      for (auto& v : b) v = bdist(rng);
      op.inputs.push_back(add({p + ".b", {l.n}, ir::DType::F32, {}, OwnBytes(b.data(), b.size() * 4)}));
    }
    const bool last = i + 1 == layers.size();
    int y = add({last ? "y" : p + ".out", {m, l.n}, ir::DType::F32, {}, {}});
    op.outputs = {y};
    if (l.q8ta) {
      op.linear.input_quant.scheme = ir::Scheme::Q8TA;
      op.linear.input_quant.scales = {l.act_scale};
      op.linear.input_quant.zero_points = {l.act_zp};
    } else {
      op.linear.input_quant.scheme = ir::Scheme::Float;
    }
    op.linear.fused_relu = l.relu;
    g.ops.push_back(std::move(op));
    x = y;
  }
  g.outputs = {x};
  return g;
}

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace vkqc::testing_graphs

namespace vkqc::testing_graphs {

// One linear layer with any weight/activation/output scheme (issue 3 schemes).
struct QLayerSpec {
  int64_t m = 1, k = 64, n = 8;
  ir::Scheme weights = ir::Scheme::Q4GSW;  // Q8CSW, Q8GSW, Q4GSW, Q4GAW
  int64_t group_size = 32;
  ir::Scheme act = ir::Scheme::DQ8CA;      // Float, Q8TA, DQ8CA
  bool x_int8 = false;                     // x is an int8 graph input (per-tensor params)
  bool out_q8 = false;                     // q8to output
  bool bias = true;
  bool relu = false;
};

inline ir::Graph MakeQLayer(const QLayerSpec& s, uint32_t seed) {
  std::mt19937 rng(seed);
  ir::Graph g;
  auto add = [&](ir::Tensor t) {
    g.tensors.push_back(std::move(t));
    return int(g.tensors.size() - 1);
  };
  ir::Tensor xt{"x", {s.m, s.k}, s.x_int8 ? ir::DType::I8 : ir::DType::F32, {}, {}};
  if (s.x_int8) xt.quant = ir::Quant{ir::Scheme::Q8TA, {0.05f}, {int32_t(seed % 11) - 5}, 0, 0};
  const int x = add(xt);
  g.inputs = {x};
  ir::Quant wq;
  wq.scheme = s.weights;
  std::vector<uint8_t> wdata;
  const bool int4 = s.weights == ir::Scheme::Q4GSW || s.weights == ir::Scheme::Q4GAW || s.weights == ir::Scheme::Q4GMW;
  const int64_t groups = int4 || s.weights == ir::Scheme::Q8GSW ? s.k / s.group_size : 1;
  if (s.weights == ir::Scheme::Q8GSW) wq.group_size = int32_t(s.group_size);
  if (int4) {
    wq.group_size = int32_t(s.group_size);
    wdata.assign(size_t((s.n * s.k + 1) / 2), 0);
    for (int64_t i = 0; i < s.n * s.k; ++i) wdata[i / 2] |= uint8_t((rng() % 16) << (4 * (i % 2)));
    if (s.weights == ir::Scheme::Q4GAW)
      for (int64_t i = 0; i < s.n * groups; ++i) wq.zero_points.push_back(int32_t(rng() % 16));
  } else {
    wdata.resize(size_t(s.n * s.k));
    for (auto& b : wdata) b = uint8_t(int(rng() % 255) - 127);
  }
  std::uniform_real_distribution<float> sd(0.5f, 1.5f);
  const float base = int4 ? 1.0f / (8.0f * std::sqrt(float(s.k))) : 1.0f / (60.0f * std::sqrt(float(s.k)));
  for (int64_t i = 0; i < s.n * groups; ++i) wq.scales.push_back(sd(rng) * base);
  if (s.weights == ir::Scheme::Q4GMW)  // w = s * q - m, q in [0, 15]: a minimum near -7.5 s
    for (int64_t i = 0; i < s.n * groups; ++i) wq.mins.push_back(wq.scales[size_t(i)] * (7.0f + float(rng() % 5) * 0.25f));
  const int w = add({"w", {s.n, s.k}, int4 ? (s.weights == ir::Scheme::Q4GSW ? ir::DType::I4 : ir::DType::U4) : ir::DType::I8,
                     wq, OwnBytes(wdata.data(), wdata.size())});
  ir::Op op;
  op.name = "fc";
  op.type = ir::OpType::Linear;
  op.inputs = {x, w};
  if (s.bias) {
    std::vector<float> b(size_t(s.n));
    std::uniform_real_distribution<float> bd(-0.5f, 0.5f);
    for (auto& v : b) v = bd(rng);
    op.inputs.push_back(add({"b", {s.n}, ir::DType::F32, {}, OwnBytes(b.data(), b.size() * 4)}));
  }
  ir::Tensor yt{"y", {s.m, s.n}, s.out_q8 ? ir::DType::I8 : ir::DType::F32, {}, {}};
  if (s.out_q8) {
    op.linear.output_quant = ir::Quant{ir::Scheme::Q8TO, {0.02f}, {3}, 0, 0};
    yt.quant = op.linear.output_quant;
  }
  const int y = add(yt);
  op.outputs = {y};
  g.outputs = {y};
  if (s.x_int8) op.linear.input_quant.scheme = ir::Scheme::None;
  else if (s.act == ir::Scheme::Q8TA) op.linear.input_quant = ir::Quant{ir::Scheme::Q8TA, {0.03f}, {-2}, 0, 0};
  else op.linear.input_quant.scheme = s.act;
  op.linear.fused_relu = s.relu;
  g.ops.push_back(std::move(op));
  return g;
}

// Input bytes for MakeQLayer(s, ...)'s x: random int8 codes when s.x_int8, else floats whose rows
// have different ranges (so per-token parameters matter). `xf` receives the values as floats.
inline std::vector<uint8_t> QLayerInput(const QLayerSpec& s, uint32_t seed, std::vector<float>* xf) {
  const int64_t m = s.m, k = s.k;
  std::vector<uint8_t> input;
  xf->clear();
  if (s.x_int8) {
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < m * k; ++i) {
      const int8_t v = int8_t(int(rng() % 256) - 128);
      input.push_back(uint8_t(v));
      xf->push_back(float(v));
    }
  } else {
    *xf = RandomFloats(size_t(m * k), seed, 1.5f);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < k; ++j) (*xf)[r * k + j] = (*xf)[r * k + j] * float(1 + r % 5) + 0.3f * float(r % 3);
    input.resize(xf->size() * 4);
    std::memcpy(input.data(), xf->data(), input.size());
  }
  return input;
}

}  // namespace vkqc::testing_graphs
