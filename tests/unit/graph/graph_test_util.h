// Shared helpers of the graph front-end tests: temp dirs, byte builders, a small valid graph.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc::testing_util {

// A fresh directory under gtest's temp dir; one per call.
inline std::string MakeTempDir() {
  std::string tmpl = ::testing::TempDir() + "vkqc_graph_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* dir = mkdtemp(buf.data());
  EXPECT_NE(dir, nullptr) << "mkdtemp failed for " << tmpl;
  return dir ? std::string(dir) : ::testing::TempDir();
}

template <typename T>
std::vector<uint8_t> ToBytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

inline ir::ConstData Own(std::vector<uint8_t> bytes) {
  auto owner = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  return ir::ConstData{owner, 0, owner->size()};
}

// Deterministic int8 pattern of n values.
inline std::vector<int8_t> Pattern(size_t n, int seed) {
  std::vector<int8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int8_t>((i * 37 + seed * 11) % 255 - 127);
  return v;
}

// Asserts that `error`'s message contains every fragment.
inline ::testing::AssertionResult MessageHas(const Error& error,
                                             std::initializer_list<std::string> fragments) {
  for (const std::string& f : fragments) {
    if (error.message.find(f) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks \"" << f << "\": " << error.message;
    }
  }
  return ::testing::AssertionSuccess();
}

template <typename R>
::testing::AssertionResult FailsWith(const R& r, std::initializer_list<std::string> fragments) {
  if (r.ok()) return ::testing::AssertionFailure() << "expected an error, got success";
  return MessageHas(r.error(), fragments);
}

// x [tokens, K] -> linear fc1 (q8ta, relu, bias) -> h1 [tokens, N1] -> linear fc2 (float) -> y.
struct TwoLayerDims {
  int64_t k = 8;
  int64_t n1 = 5;
  int64_t n2 = 3;
};

inline ir::Graph MakeTwoLayerGraph(TwoLayerDims d = {}) {
  ir::Graph g;
  auto add = [&](std::string name, std::vector<int64_t> shape, ir::DType dt) -> ir::Tensor& {
    ir::Tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dtype = dt;
    g.tensors.push_back(std::move(t));
    return g.tensors.back();
  };
  auto weight_quant = [](int64_t n, float base) {
    ir::Quant q;
    q.scheme = ir::Scheme::Q8CSW;
    for (int64_t i = 0; i < n; ++i) q.scales.push_back(base * static_cast<float>(i + 1));
    return q;
  };
  add("x", {ir::kSymbolicDim, d.k}, ir::DType::F32);
  ir::Tensor& w1 = add("fc1.weight", {d.n1, d.k}, ir::DType::I8);
  w1.data = Own(ToBytes(Pattern(d.n1 * d.k, 1)));
  w1.quant = weight_quant(d.n1, 0.01f);
  ir::Tensor& b1 = add("fc1.bias", {d.n1}, ir::DType::F32);
  std::vector<float> bias1;
  for (int64_t i = 0; i < d.n1; ++i) bias1.push_back(0.5f * static_cast<float>(i) - 1.0f);
  b1.data = Own(ToBytes(bias1));
  add("h1", {ir::kSymbolicDim, d.n1}, ir::DType::F32);
  ir::Tensor& w2 = add("fc2.weight", {d.n2, d.n1}, ir::DType::I8);
  w2.data = Own(ToBytes(Pattern(d.n2 * d.n1, 2)));
  w2.quant = weight_quant(d.n2, 0.02f);
  add("y", {ir::kSymbolicDim, d.n2}, ir::DType::F32);

  ir::Op fc1;
  fc1.name = "fc1";
  fc1.inputs = {0, 1, 2};
  fc1.outputs = {3};
  fc1.linear.input_quant.scheme = ir::Scheme::Q8TA;
  fc1.linear.input_quant.scales = {0.05f};
  fc1.linear.input_quant.zero_points = {-3};
  fc1.linear.fused_relu = true;
  ir::Op fc2;
  fc2.name = "fc2";
  fc2.inputs = {3, 4};
  fc2.outputs = {5};
  fc2.linear.input_quant.scheme = ir::Scheme::Float;
  g.ops = {fc1, fc2};
  g.inputs = {0};
  g.outputs = {5};
  return g;
}

inline std::vector<uint8_t> ConstBytes(const ir::Tensor& t) {
  if (!t.data) return {};
  return std::vector<uint8_t>(t.data->data(), t.data->data() + t.data->size);
}

}  // namespace vkqc::testing_util
