// Shared helpers of the graph front-end tests: temp dirs, byte builders, a small valid graph.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"
#include "compiler/graph/safetensors.h"

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

// Packs 4-bit values (i4 in [-8, 7] or u4 in [0, 15]) two per byte, low nibble first.
inline std::vector<uint8_t> Pack4(const std::vector<int>& v) {
  std::vector<uint8_t> out((v.size() + 1) / 2, 0);
  for (size_t i = 0; i < v.size(); ++i) {
    out[i / 2] |= static_cast<uint8_t>((v[i] & 0x0F) << (4 * (i % 2)));
  }
  return out;
}

// Deterministic 4-bit pattern of n values covering the whole range: [-8, 7] or [0, 15].
inline std::vector<int> Int4Pattern(size_t n, int seed, bool is_signed) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<int>((i * 7 + seed * 3) % 16) - (is_signed ? 8 : 0);
  return v;
}

// `n` positive scales (or zero points in [0, 15] via Int4Pattern) for grouped weights.
inline std::vector<float> Scales(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base * static_cast<float>(1 + i % 7);
  return v;
}

// The int4 MLP block of docs/graph-json.md, in IR form (tensor indices in brackets):
//   x [0] f32 [tokens, D]
//   gate [3] = linear(x, gate.weight [1] i4 q4gsw [F, D]), input dq8ca
//   up [4]   = linear(x, up.weight [2] u4 q4gaw [F, D]), input dq8ca
//   act [5]  = silu(gate);  h [6] = mul(act, up)
//   y [9]    = linear(h, down.weight [7] i4 q4gsw [D, F], down.bias [8]), input dq8ca
// Ops: 0 gate_proj, 1 up_proj, 2 act_fn (silu), 3 gated (mul), 4 down_proj.
struct Int4MlpDims {
  int64_t d = 64;
  int64_t f = 96;
  int32_t group = 32;
};

inline ir::Graph MakeInt4MlpGraph(Int4MlpDims dims = {}) {
  ir::Graph g;
  auto add = [&](std::string name, std::vector<int64_t> shape, ir::DType dt) -> ir::Tensor& {
    ir::Tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dtype = dt;
    g.tensors.push_back(std::move(t));
    return g.tensors.back();
  };
  auto weight = [&](std::string name, int64_t n, int64_t k, ir::Scheme scheme, int seed) {
    const bool sym = scheme == ir::Scheme::Q4GSW;
    ir::Tensor& w = add(std::move(name), {n, k}, sym ? ir::DType::I4 : ir::DType::U4);
    w.data = Own(Pack4(Int4Pattern(static_cast<size_t>(n * k), seed, sym)));
    ir::Quant q;
    q.scheme = scheme;
    q.group_size = dims.group;
    const size_t groups = static_cast<size_t>(n * (k / dims.group));
    q.scales = Scales(groups, 0.001f * static_cast<float>(seed));
    if (!sym) {
      for (int z : Int4Pattern(groups, seed + 1, false)) q.zero_points.push_back(z);
    }
    w.quant = q;
  };
  const int64_t tok = ir::kSymbolicDim;
  add("x", {tok, dims.d}, ir::DType::F32);
  weight("gate.weight", dims.f, dims.d, ir::Scheme::Q4GSW, 1);
  weight("up.weight", dims.f, dims.d, ir::Scheme::Q4GAW, 2);
  add("gate", {tok, dims.f}, ir::DType::F32);
  add("up", {tok, dims.f}, ir::DType::F32);
  add("act", {tok, dims.f}, ir::DType::F32);
  add("h", {tok, dims.f}, ir::DType::F32);
  weight("down.weight", dims.d, dims.f, ir::Scheme::Q4GSW, 3);
  std::vector<float> bias(static_cast<size_t>(dims.d));
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  add("down.bias", {dims.d}, ir::DType::F32).data = Own(ToBytes(bias));
  add("y", {tok, dims.d}, ir::DType::F32);

  auto op = [&](std::string name, ir::OpType type, std::vector<int> in, int out) {
    ir::Op o;
    o.name = std::move(name);
    o.type = type;
    o.inputs = std::move(in);
    o.outputs = {out};
    if (type == ir::OpType::Linear) o.linear.input_quant.scheme = ir::Scheme::DQ8CA;
    g.ops.push_back(o);
  };
  op("gate_proj", ir::OpType::Linear, {0, 1}, 3);
  op("up_proj", ir::OpType::Linear, {0, 2}, 4);
  op("act_fn", ir::OpType::Silu, {3}, 5);
  op("gated", ir::OpType::Mul, {5, 4}, 6);
  op("down_proj", ir::OpType::Linear, {6, 7, 8}, 9);
  g.inputs = {0};
  g.outputs = {9};
  return g;
}

// x [0] i8 [tokens, 16] with its own q8ta quant (0.1, 3) -> linear "proj" (proj.weight [1]
// q8csw [8, 16], no input_quant, relu, output_quant q8to (0.2, -5)) -> y [2] i8 [tokens, 8]
// carrying the same q8to quant.
inline ir::Graph MakeQ8toGraph() {
  ir::Graph g;
  ir::Tensor x;
  x.name = "x";
  x.shape = {ir::kSymbolicDim, 16};
  x.dtype = ir::DType::I8;
  x.quant = ir::Quant{ir::Scheme::Q8TA, {0.1f}, {3}, 0, 0};
  ir::Tensor w;
  w.name = "proj.weight";
  w.shape = {8, 16};
  w.dtype = ir::DType::I8;
  w.data = Own(ToBytes(Pattern(8 * 16, 3)));
  w.quant = ir::Quant{ir::Scheme::Q8CSW, Scales(8, 0.01f), {}, 0, 0};
  ir::Quant out_q{ir::Scheme::Q8TO, {0.2f}, {-5}, 0, 0};
  ir::Tensor y;
  y.name = "y";
  y.shape = {ir::kSymbolicDim, 8};
  y.dtype = ir::DType::I8;
  y.quant = out_q;
  g.tensors = {x, w, y};
  ir::Op op;
  op.name = "proj";
  op.inputs = {0, 1};
  op.outputs = {2};
  op.linear.fused_relu = true;
  op.linear.output_quant = out_q;
  g.ops = {op};
  g.inputs = {0};
  g.outputs = {2};
  return g;
}

inline std::vector<uint8_t> ConstBytes(const ir::Tensor& t) {
  if (!t.data) return {};
  return std::vector<uint8_t>(t.data->data(), t.data->data() + t.data->size);
}

// The "quantize once" example of docs/graph-json.md, in IR form (tensor indices in brackets):
//   x [0] f32 [tokens, 16] -> quantize "quant_x" -> xq [1] i8 [tokens, 16], quant dq8ca
//   ya [5] = linear "proj_a"(xq, a.weight [2] i8 q8csw [8, 16])
//   yb [6] = linear "proj_b"(xq, b.weight [3] i4 q4gsw [4, 16] groups of 8, b.bias [4])
// Both linears read the int8 xq (no input_quant). Ops: 0 quant_x, 1 proj_a, 2 proj_b.
inline ir::Graph MakeQuantizeGraph() {
  ir::Graph g;
  auto add = [&](std::string name, std::vector<int64_t> shape, ir::DType dt) -> ir::Tensor& {
    ir::Tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dtype = dt;
    g.tensors.push_back(std::move(t));
    return g.tensors.back();
  };
  const int64_t tok = ir::kSymbolicDim;
  add("x", {tok, 16}, ir::DType::F32);
  add("xq", {tok, 16}, ir::DType::I8).quant = ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0};
  ir::Tensor& a = add("a.weight", {8, 16}, ir::DType::I8);
  a.data = Own(ToBytes(Pattern(8 * 16, 4)));
  a.quant = ir::Quant{ir::Scheme::Q8CSW, Scales(8, 0.01f), {}, 0, 0};
  ir::Tensor& b = add("b.weight", {4, 16}, ir::DType::I4);
  b.data = Own(Pack4(Int4Pattern(4 * 16, 5, true)));
  b.quant = ir::Quant{ir::Scheme::Q4GSW, Scales(4 * 2, 0.02f), {}, 0, 8};
  add("b.bias", {4}, ir::DType::F32).data = Own(ToBytes(std::vector<float>{0.5f, -1, 0, 2}));
  add("ya", {tok, 8}, ir::DType::F32);
  add("yb", {tok, 4}, ir::DType::F32);
  auto op = [&](std::string name, ir::OpType type, std::vector<int> in, int out) {
    ir::Op o;
    o.name = std::move(name);
    o.type = type;
    o.inputs = std::move(in);
    o.outputs = {out};
    g.ops.push_back(o);
  };
  op("quant_x", ir::OpType::Quantize, {0}, 1);
  op("proj_a", ir::OpType::Linear, {1, 2}, 5);
  op("proj_b", ir::OpType::Linear, {1, 3, 4}, 6);
  g.inputs = {0};
  g.outputs = {5, 6};
  return g;
}

// The entries of the documented example's shared.safetensors, holding MakeQuantizeGraph's data.
inline std::vector<SafetensorsEntry> QuantizeGraphWeights() {
  const ir::Graph g = MakeQuantizeGraph();
  return {
      {"a.weight", "I8", {8, 16}, ConstBytes(g.tensors[2])},
      {"a.scales", "F32", {8}, ToBytes(g.tensors[2].quant->scales)},
      {"b.weight", "U8", {4, 8}, ConstBytes(g.tensors[3])},
      {"b.scales", "F32", {4, 2}, ToBytes(g.tensors[3].quant->scales)},
      {"b.bias", "F32", {4}, ConstBytes(g.tensors[4])},
  };
}

// The small int8 CNN of docs/graph-json.md ("A small int8 CNN"), in IR form (tensor indices in
// brackets; N is the symbolic dimension "batch"):
//   x [0] f32 [N, 8, 8, 3] -> quantize "quant_x" -> xq [1] i8 q8ta (0.02, 5)
//   h1 [4] = conv2d "stem"(xq, stem.weight [2] [8, 3, 3, 3], stem.bias [3]) stride 2, padding 1,
//            relu6, q8to (0.025, -128): [N, 4, 4, 8]
//   h2 [7] = conv2d "dw"(h1, dw.weight [5] [8, 3, 3, 1], dw.bias [6]) groups 8 (depthwise),
//            padding 1, relu6, q8to (0.025, -128)
//   h3 [9] = conv2d "pw"(h2, pw.weight [8] [8, 1, 1, 8]) q8to (0.04, 2)
//   h4 [10] = add "residual"(h1, h3) q8to (0.05, -10)
//   pooled [11] = avg_pool2d "pool"(h4) global, q8to (0.05, -10): i8 [N, 8]
//   feat [12] = dequantize "dequant"(pooled): f32 [N, 8]
//   y [15] = linear "fc"(feat, fc.weight [13] [4, 8], fc.bias [14]) (weight-only): f32 [N, 4]
// Ops: 0 quant_x, 1 stem, 2 dw, 3 pw, 4 residual, 5 pool, 6 dequant, 7 fc.
inline ir::Graph MakeCnnGraph() {
  ir::Graph g;
  g.symbolic_dim = "batch";
  auto add = [&](std::string name, std::vector<int64_t> shape, ir::DType dt) -> ir::Tensor& {
    ir::Tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dtype = dt;
    g.tensors.push_back(std::move(t));
    return g.tensors.back();
  };
  auto weight = [&](std::string name, std::vector<int64_t> shape, float base, int seed) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    const int64_t cout = shape[0];
    ir::Tensor& w = add(std::move(name), std::move(shape), ir::DType::I8);
    w.data = Own(ToBytes(Pattern(n, seed)));
    w.quant = ir::Quant{ir::Scheme::Q8CSW, Scales(static_cast<size_t>(cout), base), {}, 0, 0};
  };
  auto bias = [&](std::string name, int64_t n, float base) {
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = base * static_cast<float>(i % 5) - 0.5f;
    add(std::move(name), {n}, ir::DType::F32).data = Own(ToBytes(v));
  };
  auto q8 = [](ir::Scheme s, float scale, int32_t zp) { return ir::Quant{s, {scale}, {zp}, 0, 0}; };
  const int64_t n = ir::kSymbolicDim;
  const ir::Quant relu6_q = q8(ir::Scheme::Q8TO, 0.025f, -128);
  const ir::Quant pw_q = q8(ir::Scheme::Q8TO, 0.04f, 2);
  const ir::Quant sum_q = q8(ir::Scheme::Q8TO, 0.05f, -10);
  add("x", {n, 8, 8, 3}, ir::DType::F32);                                           // 0
  add("xq", {n, 8, 8, 3}, ir::DType::I8).quant = q8(ir::Scheme::Q8TA, 0.02f, 5);   // 1
  weight("stem.weight", {8, 3, 3, 3}, 0.01f, 1);                                    // 2
  bias("stem.bias", 8, 0.25f);                                                      // 3
  add("h1", {n, 4, 4, 8}, ir::DType::I8).quant = relu6_q;                           // 4
  weight("dw.weight", {8, 3, 3, 1}, 0.02f, 2);                                      // 5
  bias("dw.bias", 8, 0.125f);                                                       // 6
  add("h2", {n, 4, 4, 8}, ir::DType::I8).quant = relu6_q;                           // 7
  weight("pw.weight", {8, 1, 1, 8}, 0.005f, 3);                                     // 8
  add("h3", {n, 4, 4, 8}, ir::DType::I8).quant = pw_q;                              // 9
  add("h4", {n, 4, 4, 8}, ir::DType::I8).quant = sum_q;                             // 10
  add("pooled", {n, 8}, ir::DType::I8).quant = sum_q;                               // 11
  add("feat", {n, 8}, ir::DType::F32);                                              // 12
  weight("fc.weight", {4, 8}, 0.01f, 4);                                            // 13
  bias("fc.bias", 4, 0.5f);                                                         // 14
  add("y", {n, 4}, ir::DType::F32);                                                 // 15

  auto op = [&](std::string name, ir::OpType type, std::vector<int> in, int out) -> ir::Op& {
    ir::Op o;
    o.name = std::move(name);
    o.type = type;
    o.inputs = std::move(in);
    o.outputs = {out};
    g.ops.push_back(o);
    return g.ops.back();
  };
  op("quant_x", ir::OpType::Quantize, {0}, 1);
  ir::Conv2dAttrs& stem = op("stem", ir::OpType::Conv2d, {1, 2, 3}, 4).conv2d;
  stem.stride[0] = stem.stride[1] = 2;
  for (int32_t& p : stem.padding) p = 1;
  stem.activation = ir::Activation::Relu6;
  stem.output_quant = relu6_q;
  ir::Conv2dAttrs& dw = op("dw", ir::OpType::Conv2d, {4, 5, 6}, 7).conv2d;
  for (int32_t& p : dw.padding) p = 1;
  dw.groups = 8;
  dw.activation = ir::Activation::Relu6;
  dw.output_quant = relu6_q;
  op("pw", ir::OpType::Conv2d, {7, 8}, 9).conv2d.output_quant = pw_q;
  op("residual", ir::OpType::Add, {4, 9}, 10).add.output_quant = sum_q;
  ir::Pool2dAttrs& pool = op("pool", ir::OpType::AvgPool2d, {10}, 11).pool;
  pool.global = true;
  pool.output_quant = sum_q;
  op("dequant", ir::OpType::Dequantize, {11}, 12);
  op("fc", ir::OpType::Linear, {12, 13, 14}, 15);
  g.inputs = {0};
  g.outputs = {15};
  return g;
}

// The entries of the documented CNN example's cnn.safetensors, holding MakeCnnGraph's data.
inline std::vector<SafetensorsEntry> CnnGraphWeights() {
  const ir::Graph g = MakeCnnGraph();
  std::vector<SafetensorsEntry> out;
  for (const ir::Tensor& t : g.tensors) {
    if (!t.is_constant()) continue;
    out.push_back({t.name, t.dtype == ir::DType::I8 ? "I8" : "F32", t.shape, ConstBytes(t)});
    if (t.quant) {
      const std::string base = t.name.substr(0, t.name.find('.'));
      out.push_back({base + ".scales",
                     "F32",
                     {static_cast<int64_t>(t.quant->scales.size())},
                     ToBytes(t.quant->scales)});
    }
  }
  return out;
}

// The ```json blocks of docs/graph-json.md, in order (read from the source tree, so the
// documented JSON is what is tested).
inline std::vector<std::string> DocJsonBlocks() {
  const std::string path = std::string(VKQC_SOURCE_DIR) + "/docs/graph-json.md";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<std::string> blocks;
  for (size_t pos = 0; (pos = text.find("```json\n", pos)) != std::string::npos;) {
    pos += 8;
    const size_t end = text.find("\n```", pos);
    if (end == std::string::npos) break;
    blocks.push_back(text.substr(pos, end - pos));
    pos = end + 4;
  }
  return blocks;
}

// Field-by-field equality of two graphs (constant bytes compared by value).
inline void ExpectSameGraph(const ir::Graph& a, const ir::Graph& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const ir::Tensor& x = a.tensors[i];
    const ir::Tensor& y = b.tensors[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.dtype, y.dtype);
    ASSERT_EQ(x.quant.has_value(), y.quant.has_value());
    if (x.quant) {
      EXPECT_EQ(x.quant->scheme, y.quant->scheme);
      EXPECT_EQ(x.quant->scales, y.quant->scales);
      EXPECT_EQ(x.quant->zero_points, y.quant->zero_points);
      EXPECT_EQ(x.quant->axis, y.quant->axis);
      EXPECT_EQ(x.quant->group_size, y.quant->group_size);
    }
    EXPECT_EQ(x.is_constant(), y.is_constant());
    EXPECT_EQ(x.state, y.state);
    EXPECT_EQ(ConstBytes(x), ConstBytes(y));
  }
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const ir::Op& x = a.ops[i];
    const ir::Op& y = b.ops[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_EQ(x.linear.fused_relu, y.linear.fused_relu);
    EXPECT_EQ(x.linear.input_quant.scheme, y.linear.input_quant.scheme);
    EXPECT_EQ(x.linear.input_quant.scales, y.linear.input_quant.scales);
    EXPECT_EQ(x.linear.input_quant.zero_points, y.linear.input_quant.zero_points);
    EXPECT_EQ(x.linear.input_quant.axis, y.linear.input_quant.axis);
    EXPECT_EQ(x.linear.input_quant.group_size, y.linear.input_quant.group_size);
    EXPECT_EQ(x.linear.output_quant.scheme, y.linear.output_quant.scheme);
    EXPECT_EQ(x.linear.output_quant.scales, y.linear.output_quant.scales);
    EXPECT_EQ(x.linear.output_quant.zero_points, y.linear.output_quant.zero_points);
    EXPECT_EQ(x.linear.fused_relu6, y.linear.fused_relu6);
    EXPECT_TRUE(x.linear == y.linear) << x.name;
    EXPECT_TRUE(x.conv2d == y.conv2d) << x.name;
    EXPECT_TRUE(x.add == y.add) << x.name;
    EXPECT_TRUE(x.pool == y.pool) << x.name;
    EXPECT_TRUE(x.norm == y.norm) << x.name;
    EXPECT_TRUE(x.rope == y.rope) << x.name;
    EXPECT_TRUE(x.attention == y.attention) << x.name;
  }
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.symbolic_dim, b.symbolic_dim);
}

}  // namespace vkqc::testing_util
