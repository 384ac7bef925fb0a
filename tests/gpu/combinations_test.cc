// Every op x input x options x output combination that docs/graph-json.md's "Supported
// combinations" table lists, driven from one table (Rows() below): each supported row is compiled
// for the test profile, run on the device with poisoned memory and validation on, and compared
// with the CPU reference (once with the profile's kernels, and once with int-dot accumulation
// forced where the op has quantized activations); each refused row must fail with the documented
// readable message and never with an internal error. DocTableMatchesTests fails when the doc lists
// a row this table lacks, or the other way round.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "combinations_case.h"
#include "compiler/common/half.h"
#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"

#ifndef VKQC_SOURCE_DIR
#error "VKQC_SOURCE_DIR must be defined"
#endif

namespace vkqc {
namespace {

using combos::Case;
using combos::Dq8ca;
using combos::Q8;
using combos::Row;
using testing_graphs::OwnBytes;
using testing_graphs::RandomFloats;
constexpr int64_t S = ir::kSymbolicDim;

// ---- linear ----------------------------------------------------------------------------------
enum class LinX { F32, F32Float, F32Q8ta, F32Dq8ca, I8Q8ta, I8Q8to, I8Dq8ca };
const char* Name(LinX x) {
  switch (x) {
    case LinX::F32: return "f32";
    case LinX::F32Float: return "f32, input_quant float";
    case LinX::F32Q8ta: return "f32, input_quant q8ta";
    case LinX::F32Dq8ca: return "f32, input_quant dq8ca";
    case LinX::I8Q8ta: return "i8 q8ta (graph input)";
    case LinX::I8Q8to: return "i8 q8to (output of a linear)";
    case LinX::I8Dq8ca: return "i8 dq8ca (output of a quantize)";
  }
  return "?";
}

// x [3, 40] (rows of K = 40: five groups of 8; q8gsw: K = 96, three groups of 32) -> linear N = 13 -> y.
void BuildLinear(Case& c, LinX xk, ir::Scheme w, bool out_q8, int act) {
  const int64_t m = 3, k = w == ir::Scheme::Q8GSW ? 96 : 40, n = 13;
  int x;
  if (xk == LinX::I8Q8ta) {
    x = c.Input("x", {m, k}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.03f, 2));
  } else if (xk == LinX::I8Q8to) {
    const int x0 = c.Input("x0", {m, 24});
    x = c.Tensor("x", {m, k}, ir::DType::I8, Q8(ir::Scheme::Q8TO, 0.03f, -4));
    ir::Op& p = c.Op("producer", ir::OpType::Linear, {x0, c.Weight("pw", {k, 24}, ir::Scheme::Q8CSW)}, {x});
    p.linear.input_quant = Q8(ir::Scheme::Q8TA, 0.04f, 1);
    p.linear.output_quant = Q8(ir::Scheme::Q8TO, 0.03f, -4);
  } else if (xk == LinX::I8Dq8ca) {
    const int x0 = c.Input("x0", {m, k});
    x = c.Tensor("x", {m, k}, ir::DType::I8, Dq8ca());
    c.Op("quantize", ir::OpType::Quantize, {x0}, {x});
  } else {
    x = c.Input("x", {m, k});
  }
  std::vector<int> in{x, c.Weight("w", {n, k}, w, w == ir::Scheme::Q8GSW ? 32 : 8)};
  if (act != 2) in.push_back(c.Floats("b", {n}, 0.3f));
  const int y = c.Tensor("y", {m, n}, out_q8 ? ir::DType::I8 : ir::DType::F32,
                         out_q8 ? std::optional<ir::Quant>(Q8(ir::Scheme::Q8TO, 0.02f, 3)) : std::nullopt);
  ir::Op& op = c.Op("fc", ir::OpType::Linear, in, {y});
  if (xk == LinX::F32Float) op.linear.input_quant.scheme = ir::Scheme::Float;
  if (xk == LinX::F32Q8ta) op.linear.input_quant = Q8(ir::Scheme::Q8TA, 0.03f, -2);
  if (xk == LinX::F32Dq8ca) op.linear.input_quant = Dq8ca();
  if (out_q8) op.linear.output_quant = Q8(ir::Scheme::Q8TO, 0.02f, 3);
  op.linear.fused_relu = act == 1;
  op.linear.fused_relu6 = act == 2;
  c.g.outputs = {y};
}

// ---- conv2d ----------------------------------------------------------------------------------
enum class ConvX { F32, F32Float, F32Q8ta, I8Q8ta, I8Q8to };
const char* Name(ConvX x) {
  switch (x) {
    case ConvX::F32: return "f32";
    case ConvX::F32Float: return "f32, input_quant float";
    case ConvX::F32Q8ta: return "f32, input_quant q8ta";
    case ConvX::I8Q8ta: return "i8 q8ta (graph input)";
    case ConvX::I8Q8to: return "i8 q8to (output of a conv2d)";
  }
  return "?";
}
struct ConvGeo {
  const char* name;
  int64_t cin, cout, kh, kw;
  int32_t stride[2], padding[4], dilation[2], groups;
  bool bias;
  ir::Activation act;
};
const ConvGeo kConvGeos[] = {
    {"3x3, padding 1, bias, relu6", 5, 13, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, ir::Activation::Relu6},
    {"3x2, stride 2, padding [0, 1, 2, 0], bias", 6, 9, 3, 2, {2, 2}, {0, 1, 2, 0}, {1, 1}, 1, true,
     ir::Activation::None},
    {"3x3, dilation 2, no bias, relu", 4, 7, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1, false, ir::Activation::Relu},
    {"3x3, groups 3, padding 1, bias", 6, 9, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 3, true, ir::Activation::None},
    {"depthwise 3x3, stride 2, padding 1, bias, relu", 7, 7, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 7, true,
     ir::Activation::Relu},
    {"1x1 (pointwise), bias", 6, 11, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true, ir::Activation::None},
};

void BuildConv(Case& c, ConvX xk, const ConvGeo& g, bool out_q8, ir::Scheme input_quant = ir::Scheme::None) {
  const int64_t n = 2, h = 7, w = 6;
  int x;
  const std::vector<int64_t> xs{n, h, w, g.cin};
  if (xk == ConvX::I8Q8ta) {
    x = c.Input("x", xs, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.03f, 2));
  } else if (xk == ConvX::I8Q8to) {
    const int x0 = c.Input("x0", {n, h, w, 3});
    x = c.Tensor("x", xs, ir::DType::I8, Q8(ir::Scheme::Q8TO, 0.03f, -4));
    ir::Op& p = c.Op("producer", ir::OpType::Conv2d, {x0, c.Weight("pw", {g.cin, 1, 1, 3}, ir::Scheme::Q8CSW)}, {x});
    p.conv2d.input_quant = Q8(ir::Scheme::Q8TA, 0.04f, 1);
    p.conv2d.output_quant = Q8(ir::Scheme::Q8TO, 0.03f, -4);
  } else {
    x = c.Input("x", xs);
  }
  const int64_t oh = (h + g.padding[0] + g.padding[2] - g.dilation[0] * (g.kh - 1) - 1) / g.stride[0] + 1;
  const int64_t ow = (w + g.padding[1] + g.padding[3] - g.dilation[1] * (g.kw - 1) - 1) / g.stride[1] + 1;
  std::vector<int> in{x, c.Weight("w", {g.cout, g.kh, g.kw, g.cin / g.groups}, ir::Scheme::Q8CSW)};
  if (g.bias) in.push_back(c.Floats("b", {g.cout}, 0.3f));
  const int y = c.Tensor("y", {n, oh, ow, g.cout}, out_q8 ? ir::DType::I8 : ir::DType::F32,
                         out_q8 ? std::optional<ir::Quant>(Q8(ir::Scheme::Q8TO, 0.02f, 3)) : std::nullopt);
  ir::Op& op = c.Op("conv", ir::OpType::Conv2d, in, {y});
  ir::Conv2dAttrs& a = op.conv2d;
  std::copy(g.stride, g.stride + 2, a.stride);
  std::copy(g.padding, g.padding + 4, a.padding);
  std::copy(g.dilation, g.dilation + 2, a.dilation);
  a.groups = g.groups;
  a.activation = g.act;
  if (xk == ConvX::F32Float) a.input_quant.scheme = ir::Scheme::Float;
  if (xk == ConvX::F32Q8ta) a.input_quant = Q8(ir::Scheme::Q8TA, 0.03f, -2);
  if (input_quant == ir::Scheme::DQ8CA) a.input_quant = Dq8ca();
  if (out_q8) a.output_quant = Q8(ir::Scheme::Q8TO, 0.02f, 3);
  c.g.outputs = {y};
}

// ---- add, avg_pool2d -------------------------------------------------------------------------
void BuildAdd(Case& c, bool int8, ir::Activation act, bool out_quant = true, bool mixed = false) {
  const std::vector<int64_t> s{2, 5, 3, 7};
  const int a = int8 ? c.Input("a", s, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.05f, 3)) : c.Input("a", s);
  const int b = int8 && !mixed ? c.Input("b", s, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.02f, -7)) : c.Input("b", s);
  const bool q = int8 && out_quant;
  const int y = c.Tensor("y", s, q ? ir::DType::I8 : ir::DType::F32,
                         q ? std::optional<ir::Quant>(Q8(ir::Scheme::Q8TO, 0.04f, -1)) : std::nullopt);
  ir::Op& op = c.Op("add", ir::OpType::Add, {a, b}, {y});
  op.add.activation = act;
  if (q) op.add.output_quant = Q8(ir::Scheme::Q8TO, 0.04f, -1);
  c.g.outputs = {y};
}

enum class PoolKind { Windowed, GlobalNC, GlobalN11C, BadPadding };
void BuildPool(Case& c, bool int8, PoolKind kind, bool out_quant = true) {
  const int64_t n = 2, h = 7, w = 7, ch = 5;
  const int x = int8 ? c.Input("x", {n, h, w, ch}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.05f, 3))
                     : c.Input("x", {n, h, w, ch});
  std::vector<int64_t> ys{n, 4, 7, ch};
  if (kind == PoolKind::GlobalNC) ys = {n, ch};
  if (kind == PoolKind::GlobalN11C) ys = {n, 1, 1, ch};
  if (kind == PoolKind::BadPadding) ys = {n, 8, 7, ch};
  const bool q = int8 && out_quant;
  const int y = c.Tensor("y", ys, q ? ir::DType::I8 : ir::DType::F32,
                         q ? std::optional<ir::Quant>(Q8(ir::Scheme::Q8TO, 0.04f, -2)) : std::nullopt);
  ir::Op& op = c.Op("pool", ir::OpType::AvgPool2d, {x}, {y});
  ir::Pool2dAttrs& a = op.pool;
  if (kind == PoolKind::Windowed || kind == PoolKind::BadPadding) {
    a.kernel[0] = 2;
    a.kernel[1] = 3;
    a.stride[0] = 2;
    a.stride[1] = 1;
    const int32_t pad[4] = {1, 0, 0, 2};
    std::copy(pad, pad + 4, a.padding);
    if (kind == PoolKind::BadPadding) a.padding[0] = 2, a.stride[0] = 1;  // padding == kernel height
  } else {
    a.global = true;
  }
  if (q) a.output_quant = Q8(ir::Scheme::Q8TO, 0.04f, -2);
  c.g.outputs = {y};
}

// ---- quantize / dequantize / mul / silu --------------------------------------------------------
ir::Quant PerChannel(int64_t ch, int32_t axis, bool i32) {
  ir::Quant q{ir::Scheme::Q8PC, {}, {}, axis, 0};
  for (int64_t i = 0; i < ch; ++i) {
    q.scales.push_back(i32 ? 0.0007f * float(i + 1) : 0.01f + 0.004f * float(i));
    q.zero_points.push_back(i32 ? 0 : int32_t(i % 7) - 3);
  }
  return q;
}

// x [2, 3, 4, 7] (f32/f16) -> quantize -> q (i8/i32; per tensor, or per channel along axis 1).
void BuildQuantize(Case& c, ir::DType xt, ir::DType qt, bool per_channel) {
  const std::vector<int64_t> shape{2, 3, 4, 7};
  const int x = c.Input("x", shape, xt);
  const bool i32 = qt == ir::DType::I32;
  const ir::Quant q = per_channel ? PerChannel(3, 1, i32) : Q8(ir::Scheme::Q8TA, i32 ? 0.0003f : 0.02f, i32 ? 0 : -5);
  const int y = c.Tensor("q", shape, qt, q);
  c.Op("quantize", ir::OpType::Quantize, {x}, {y});
  c.g.outputs = {y};
}

// x f32 [5, 37] (rank 2, or [2, 3, 4, 7]) -> quantize dq8ca -> dequantize -> y (per-token int8
// cannot be a graph output).
void BuildQuantizeTokens(Case& c, ir::DType xt, bool rank2) {
  const std::vector<int64_t> shape = rank2 ? std::vector<int64_t>{5, 37} : std::vector<int64_t>{2, 3, 4, 7};
  const int x = c.Input("x", shape, xt);
  const int q = c.Tensor("q", shape, ir::DType::I8, Dq8ca());
  c.Op("quantize", ir::OpType::Quantize, {x}, {q});
  const int y = c.Tensor("y", shape);
  c.Op("dequantize", ir::OpType::Dequantize, {q}, {y});
  c.g.outputs = {y};
}

enum class DqIn { I8Q8ta, I8Q8to, I8Q8pc, I32Q8ta, I32Q8pc, I8Dq8ca, F32 };
const char* Name(DqIn d) {
  switch (d) {
    case DqIn::I8Q8ta: return "i8 q8ta (graph input)";
    case DqIn::I8Q8to: return "i8 q8to (output of a linear)";
    case DqIn::I8Q8pc: return "i8 q8pc axis 1 (graph input)";
    case DqIn::I32Q8ta: return "i32 q8ta (graph input)";
    case DqIn::I32Q8pc: return "i32 q8pc axis 1 (graph input)";
    case DqIn::I8Dq8ca: return "i8 dq8ca (output of a quantize)";
    case DqIn::F32: return "f32";
  }
  return "?";
}

void BuildDequantize(Case& c, DqIn in, ir::DType yt = ir::DType::F32) {
  const std::vector<int64_t> shape{5, 3, 37};
  int q = -1;  // every case sets it
  switch (in) {
    case DqIn::I8Q8ta: q = c.Input("q", shape, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.05f, -3)); break;
    case DqIn::I8Q8pc: q = c.Input("q", shape, ir::DType::I8, PerChannel(3, 1, false)); break;
    case DqIn::I32Q8ta: q = c.Input("q", shape, ir::DType::I32, Q8(ir::Scheme::Q8TA, 0.0003f, 0)); break;
    case DqIn::I32Q8pc: q = c.Input("q", shape, ir::DType::I32, PerChannel(3, 1, true)); break;
    case DqIn::F32: q = c.Input("q", shape); break;
    case DqIn::I8Q8to: {
      const int x = c.Input("x", {15, 37});
      q = c.Tensor("q", {15, 37}, ir::DType::I8, Q8(ir::Scheme::Q8TO, 0.03f, 4));
      ir::Op& p = c.Op("producer", ir::OpType::Linear, {x, c.Weight("pw", {37, 37}, ir::Scheme::Q8CSW)}, {q});
      p.linear.output_quant = Q8(ir::Scheme::Q8TO, 0.03f, 4);
      break;
    }
    case DqIn::I8Dq8ca: {
      const int x = c.Input("x", {15, 37});
      q = c.Tensor("q", {15, 37}, ir::DType::I8, Dq8ca());
      c.Op("quantize", ir::OpType::Quantize, {x}, {q});
      break;
    }
  }
  const int y = c.Tensor("y", c.g.tensors[size_t(q)].shape, yt);
  c.Op("dequantize", ir::OpType::Dequantize, {q}, {y});
  c.g.outputs = {y};
}

void BuildMul(Case& c, bool constant_b) {
  const int a = c.Input("a", {S, 19});
  const int b = constant_b ? c.Floats("b", {3, 19}, 1.0f) : c.Input("b", {S, 19});
  if (constant_b) c.g.tensors[size_t(a)].shape = {3, 19};
  const int y = c.Tensor("y", constant_b ? std::vector<int64_t>{3, 19} : std::vector<int64_t>{S, 19});
  c.Op("mul", ir::OpType::Mul, {a, b}, {y});
  c.g.outputs = {y};
}

void BuildSilu(Case& c) {
  const int a = c.Input("a", {S, 23});
  const int y = c.Tensor("y", {S, 23});
  c.Op("silu", ir::OpType::Silu, {a}, {y});
  c.g.outputs = {y};
}

// ---- decoder ops -----------------------------------------------------------------------------
void BuildEmbedding(Case& c, ir::Scheme table) {
  const int64_t v = 50, ch = table == ir::Scheme::Q8GSW ? 64 : 40;
  const int ids = c.Input("ids", {S}, ir::DType::I32, {}, -3, int32_t(v + 3));  // some out of range: zeros
  int t;
  if (table == ir::Scheme::None) t = c.Floats("table", {v, ch}, 1.0f);
  else t = c.Weight("table", {v, ch}, table, table == ir::Scheme::Q8GSW ? 32 : 8);
  const int y = c.Tensor("y", {S, ch});
  c.Op("embedding", ir::OpType::Embedding, {ids, t}, {y});
  c.g.outputs = {y};
}

void BuildRmsNorm(Case& c) {
  const int x = c.Input("x", {S, 37});
  const int y = c.Tensor("y", {S, 37});
  c.Op("norm", ir::OpType::RmsNorm, {x, c.Floats("w", {37}, 0.5f)}, {y}).norm.eps = 1e-5f;
  c.g.outputs = {y};
}

void BuildRope(Case& c, bool interleaved, bool llama3) {
  const int32_t d = 16;
  const int x = c.Input("x", {S, 3 * d});
  const int pos = c.Input("pos", {1}, ir::DType::I32, {}, 0, 40);
  const int y = c.Tensor("y", {S, 3 * d});
  ir::RopeAttrs& a = c.Op("rope", ir::OpType::Rope, {x, pos}, {y}).rope;
  a.head_dim = d;
  a.interleaved = interleaved;
  a.max_positions = 64;
  if (llama3) {
    a.theta = 500000.0f;
    a.llama3 = true;
    a.factor = 32.0f;
  }
  c.g.outputs = {y};
}

void BuildAttention(Case& c, ir::DType cache) {
  const int32_t hq = 4, hkv = 2, d = 16;
  const int q = c.Input("q", {S, hq * d});
  const int k = c.Input("k", {S, hkv * d});
  const int v = c.Input("v", {S, hkv * d});
  const int pos = c.Input("pos", {1}, ir::DType::I32, {}, 0, 20);
  const int kc = c.Tensor("k_cache", {hkv, 32, d}, cache);
  const int vc = c.Tensor("v_cache", {hkv, 32, d}, cache);
  c.g.tensors[size_t(kc)].state = c.g.tensors[size_t(vc)].state = true;
  const int y = c.Tensor("y", {S, hq * d});
  c.Op("attn", ir::OpType::Attention, {q, k, v, kc, vc, pos}, {y}).attention = {hq, hkv, d, 0.0f};
  c.g.outputs = {y};
}

void BuildArgmax(Case& c) {
  const int x = c.Input("x", {S, 301});
  const int y = c.Tensor("y", {S}, ir::DType::I32);
  c.Op("argmax", ir::OpType::Argmax, {x}, {y});
  c.g.outputs = {y};
}

std::vector<Row> Rows() {
  std::vector<Row> r;
  auto add = [&](std::string op, std::string x, std::string opts, std::string out, std::function<void(Case&)> b,
                 bool quantized = false, std::string refusal = "") {
    r.push_back({std::move(op), std::move(x), std::move(opts), std::move(out), std::move(refusal), std::move(b),
                 quantized});
  };
  // linear: every input kind x every weight scheme x f32 / q8to output.
  for (LinX x : {LinX::F32, LinX::F32Float, LinX::F32Q8ta, LinX::F32Dq8ca, LinX::I8Q8ta, LinX::I8Q8to, LinX::I8Dq8ca})
    for (ir::Scheme w : {ir::Scheme::Q8CSW, ir::Scheme::Q8GSW, ir::Scheme::Q4GSW, ir::Scheme::Q4GAW, ir::Scheme::Q4GMW})
      for (bool q8 : {false, true}) {
        const int act = q8 ? (w == ir::Scheme::Q8CSW || w == ir::Scheme::Q8GSW ? 1 : 0) : (w == ir::Scheme::Q4GAW ? 2 : 0);
        const std::string opts = std::string(ir::SchemeName(w)) + (act == 2 ? ", fused_relu6" : ", bias") +
                                 (act == 1 ? ", fused_relu" : "");
        const bool quantized = x != LinX::F32 && x != LinX::F32Float;
        add("linear", Name(x), opts, q8 ? "i8 q8to" : "f32", [=](Case& c) { BuildLinear(c, x, w, q8, act); },
            quantized);
      }
  add("linear", "i8 q8ta (graph input), input_quant q8ta", "q8csw, bias", "f32",
      [](Case& c) {
        BuildLinear(c, LinX::I8Q8ta, ir::Scheme::Q8CSW, false, 0);
        c.g.ops.back().linear.input_quant = Q8(ir::Scheme::Q8TA, 0.03f, 2);
      },
      false, "so input_quant must be absent");
  add("linear", "f32", "q8csw, fused_relu and fused_relu6", "f32",
      [](Case& c) {
        BuildLinear(c, LinX::F32, ir::Scheme::Q8CSW, false, 1);
        c.g.ops.back().linear.fused_relu6 = true;
      },
      false, "sets both fused_relu and fused_relu6");
  // conv2d: every input kind x every geometry x f32 / q8to output.
  for (ConvX x : {ConvX::F32, ConvX::F32Float, ConvX::F32Q8ta, ConvX::I8Q8ta, ConvX::I8Q8to})
    for (const ConvGeo& geo : kConvGeos)
      for (bool q8 : {false, true})
        add("conv2d", Name(x), geo.name, q8 ? "i8 q8to" : "f32", [x, &geo, q8](Case& c) { BuildConv(c, x, geo, q8); },
            x == ConvX::F32Q8ta || x == ConvX::I8Q8ta || x == ConvX::I8Q8to);
  add("conv2d", "f32, input_quant dq8ca", kConvGeos[0].name, "f32",
      [](Case& c) { BuildConv(c, ConvX::F32, kConvGeos[0], false, ir::Scheme::DQ8CA); }, false,
      "input_quant scheme dq8ca is not supported by conv2d");
  // add
  add("add", "f32 + f32", "none", "f32", [](Case& c) { BuildAdd(c, false, ir::Activation::None); });
  add("add", "f32 + f32", "relu", "f32", [](Case& c) { BuildAdd(c, false, ir::Activation::Relu); });
  add("add", "i8 q8ta + i8 q8ta (different scales)", "none", "i8 q8to",
      [](Case& c) { BuildAdd(c, true, ir::Activation::None); });
  add("add", "i8 q8ta + i8 q8ta (different scales)", "relu6", "i8 q8to",
      [](Case& c) { BuildAdd(c, true, ir::Activation::Relu6); });
  add("add", "i8 q8ta + i8 q8ta (different scales)", "none", "f32",
      [](Case& c) { BuildAdd(c, true, ir::Activation::None, false); }, false,
      "need output_quant q8to (the sum is requantized to int8)");
  add("add", "i8 q8ta + f32", "none", "i8 q8to", [](Case& c) { BuildAdd(c, true, ir::Activation::None, true, true); },
      false, "add takes two f32 or two i8 inputs");
  // avg_pool2d
  const std::pair<PoolKind, const char*> pools[] = {
      {PoolKind::Windowed, "kernel [2, 3], stride [2, 1], padding [1, 0, 0, 2]"},
      {PoolKind::GlobalNC, "global, y [N, C]"},
      {PoolKind::GlobalN11C, "global, y [N, 1, 1, C]"}};
  for (bool int8 : {false, true})
    for (const auto& [kind, name] : pools)
      add("avg_pool2d", int8 ? "i8 q8ta" : "f32", name, int8 ? "i8 q8to" : "f32",
          [int8, kind = kind](Case& c) { BuildPool(c, int8, kind); });
  add("avg_pool2d", "i8 q8ta", pools[0].second, "f32", [](Case& c) { BuildPool(c, true, PoolKind::Windowed, false); },
      false, "so output_quant must be q8to");
  add("avg_pool2d", "f32", "kernel [2, 3], padding 2 on top", "f32",
      [](Case& c) { BuildPool(c, false, PoolKind::BadPadding); }, false, "must be smaller than the kernel");
  // quantize / dequantize: every float type x integer type x granularity, bit exact.
  for (ir::DType xt : {ir::DType::F32, ir::DType::F16})
    for (ir::DType qt : {ir::DType::I8, ir::DType::I32})
      for (bool pc : {false, true})
        add("quantize", std::string(ir::DTypeName(xt)) + " [2, 3, 4, 7]", pc ? "q8pc axis 1" : "q8ta",
            std::string(ir::DTypeName(qt)) + (pc ? " q8pc" : " q8ta"),
            [=](Case& c) { BuildQuantize(c, xt, qt, pc); });
  add("quantize", "f32 [M, K]", "dq8ca (read back by a dequantize)", "i8 dq8ca",
      [](Case& c) { BuildQuantizeTokens(c, ir::DType::F32, true); });
  add("quantize", "f32 [2, 3, 4, 7]", "dq8ca", "i8 dq8ca", [](Case& c) { BuildQuantizeTokens(c, ir::DType::F32, false); },
      false, "per-token (dq8ca) quantize takes rank 2");
  add("quantize", "f16 [M, K]", "dq8ca", "i8 dq8ca", [](Case& c) { BuildQuantizeTokens(c, ir::DType::F16, true); },
      false, "per-token (dq8ca) quantize takes f32");
  add("quantize", "f32 [2, 3, 4, 7]", "q8to", "i8 q8to",
      [](Case& c) {
        BuildQuantize(c, ir::DType::F32, ir::DType::I8, false);
        c.g.tensors.back().quant->scheme = ir::Scheme::Q8TO;
      },
      false, "which quantize cannot write");
  for (DqIn in : {DqIn::I8Q8ta, DqIn::I8Q8to, DqIn::I8Q8pc, DqIn::I32Q8ta, DqIn::I32Q8pc, DqIn::I8Dq8ca})
    for (ir::DType yt : {ir::DType::F32, ir::DType::F16})
      add("dequantize", Name(in), "none", ir::DTypeName(yt), [=](Case& c) { BuildDequantize(c, in, yt); });
  add("dequantize", "f32", "none", "f32", [](Case& c) { BuildDequantize(c, DqIn::F32); }, false,
      "the tensor is already float");
  // elementwise
  add("mul", "f32 * f32", "none", "f32", [](Case& c) { BuildMul(c, false); });
  add("mul", "f32 * constant f32", "none", "f32", [](Case& c) { BuildMul(c, true); }, false, "mul takes no constant inputs");
  add("silu", "f32", "none", "f32", [](Case& c) { BuildSilu(c); });
  // decoder ops
  add("embedding", "i32 ids", "f32 table", "f32", [](Case& c) { BuildEmbedding(c, ir::Scheme::None); });
  add("embedding", "i32 ids", "q8csw table", "f32", [](Case& c) { BuildEmbedding(c, ir::Scheme::Q8CSW); });
  add("embedding", "i32 ids", "q8gsw table", "f32", [](Case& c) { BuildEmbedding(c, ir::Scheme::Q8GSW); });
  add("embedding", "i32 ids", "q4gsw table", "f32", [](Case& c) { BuildEmbedding(c, ir::Scheme::Q4GSW); });
  add("rms_norm", "f32", "f32 weight", "f32", [](Case& c) { BuildRmsNorm(c); });
  add("rope", "f32, i32 position", "halves", "f32", [](Case& c) { BuildRope(c, false, false); });
  add("rope", "f32, i32 position", "interleaved, llama3 scaling", "f32", [](Case& c) { BuildRope(c, true, true); });
  add("attention", "f32 q, k, v, i32 position", "f32 state cache", "f32",
      [](Case& c) { BuildAttention(c, ir::DType::F32); });
  add("attention", "f32 q, k, v, i32 position", "f16 state cache", "f32",
      [](Case& c) { BuildAttention(c, ir::DType::F16); });
  add("argmax", "f32", "none", "i32", [](Case& c) { BuildArgmax(c); });
  combos::AddCnnRows(r);
  combos::AddLayoutRows(r);
  return r;
}

// ---- the doc's table ---------------------------------------------------------------------------
std::string Clean(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
  const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The rows of docs/graph-json.md's "## Supported combinations" table, as Row::Key() strings.
std::vector<std::string> DocRows() {
  std::ifstream f(std::string(VKQC_SOURCE_DIR) + "/docs/graph-json.md");
  std::vector<std::string> rows;
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) in = line == "## Supported combinations";
    if (!in || line.rfind("| ", 0) != 0 || line.rfind("| op ", 0) == 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(Clean(cell));
    while (!cells.empty() && cells.back().empty()) cells.pop_back();
    std::string key;
    for (size_t i = 0; i < cells.size(); ++i) key += (i ? " | " : "") + cells[i];
    rows.push_back(key);
  }
  return rows;
}

TEST(Combinations, DocTableMatchesTests) {
  if (std::getenv("VKQC_PRINT_COMBINATIONS"))  // the doc table's rows, in the table's order
    for (const Row& r : Rows()) std::printf("| %s |\n", r.Key().c_str());
  const std::vector<std::string> doc = DocRows();
  EXPECT_GT(doc.size(), 50u) << "docs/graph-json.md has no '## Supported combinations' table";
  std::set<std::string> tested;
  for (const Row& r : Rows()) EXPECT_TRUE(tested.insert(r.Key()).second) << "duplicate test row: " << r.Key();
  std::set<std::string> documented;
  for (const std::string& d : doc) {
    EXPECT_TRUE(documented.insert(d).second) << "duplicate doc row: " << d;
    EXPECT_TRUE(tested.count(d)) << "documented but not tested: " << d;
  }
  for (const std::string& t : tested) EXPECT_TRUE(documented.count(t)) << "tested but not documented: " << t;
}

// ---- running a row -----------------------------------------------------------------------------
// Compiles, runs and compares one supported row; `force_int_dot` forces int-dot accumulation.
void RunRow(const Row& row, bool force_int_dot) {
  Case c;
  row.build(c);
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  CompileOptions o;
  if (c.g.HasSymbolicDim()) o.tokens = c.tokens;
  if (force_int_dot) o.select.force_accum = linear::Accum::IntDot;
  auto bundle = CompileGraph(c.g, *profile, o, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  combos::RunCheck rc;
  // quantize / dequantize are bit exact (README), transpose / reshape copy and clip clamps values.
  rc.exact = row.op == "quantize" || row.op == "dequantize" || row.op == "transpose" || row.op == "reshape" ||
             row.op == "clip";
  rc.tol = row.options.find("f16") != std::string::npos ? 2e-3 : 2e-5;
  combos::RunAndCheck(c, *bundle, rc);
  gpu_test::ExpectNoValidationMessages(row.Key());
}

class Combinations : public ::testing::TestWithParam<std::string> {};

TEST_P(Combinations, RunOrRefuseAsDocumented) {
  int n = 0;
  for (const Row& row : Rows()) {
    if (row.op != GetParam()) continue;
    ++n;
    SCOPED_TRACE(row.Key());
    if (!row.refusal.empty()) {
      Case c;
      row.build(c);
      auto profile = LoadProfile(gpu_test::TestProfile());
      ASSERT_TRUE(profile.ok());
      CompileOptions o;
      if (c.g.HasSymbolicDim()) o.tokens = c.tokens;
      auto bundle = CompileGraph(c.g, *profile, o, 0);
      ASSERT_FALSE(bundle.ok()) << "compiled, but the doc says it is refused";
      EXPECT_NE(bundle.error().kind, ErrorKind::Internal) << bundle.error().message;
      EXPECT_NE(bundle.error().message.find(row.refusal), std::string::npos) << bundle.error().message;
      continue;
    }
    RunRow(row, false);
    if (row.quantized) RunRow(row, true);
  }
  EXPECT_GT(n, 0);
}

INSTANTIATE_TEST_SUITE_P(Ops, Combinations,
                         ::testing::Values("linear", "conv2d", "add", "avg_pool2d", "quantize", "dequantize", "mul",
                                           "silu", "embedding", "rms_norm", "rope", "attention", "argmax",
                                           "max_pool2d", "concat", "sigmoid", "hard_sigmoid", "hard_swish",
                                           "resize_nearest", "softmax", "transpose", "reshape", "clip"));

TEST(Combinations, EveryOpOfTheTableIsInstantiated) {
  std::set<std::string> ops;
  for (const Row& r : Rows()) ops.insert(r.op);
  EXPECT_EQ(ops.size(), 23u) << "a new op's rows need its name in INSTANTIATE_TEST_SUITE_P";
}

}  // namespace

namespace combos {

std::vector<uint8_t> InputBytes(const Case& c, int t) {
  const ir::Tensor& tt = c.g.tensors[size_t(t)];
  std::vector<uint8_t> b;
  if (tt.dtype == ir::DType::I32) {
    const auto& v = c.int32_inputs.at(tt.name);
    b.resize(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
  } else if (tt.dtype == ir::DType::I8) {
    for (float v : c.inputs.at(tt.name)) b.push_back(uint8_t(int8_t(v)));
  } else if (tt.dtype == ir::DType::F16) {
    for (float v : c.inputs.at(tt.name)) {
      const uint16_t h = FloatToHalf(v);
      b.push_back(uint8_t(h));
      b.push_back(uint8_t(h >> 8));
    }
  } else {
    const auto& v = c.inputs.at(tt.name);
    b.resize(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
  }
  return b;
}

void RunAndCheck(const Case& c, const std::vector<uint8_t>& bundle, const RunCheck& rc) {
  gpu_test::Loaded l;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  mo.max_weight_buffer_bytes = rc.max_weight_buffer_bytes;
  mo.force_staging = rc.force_staging;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), &mo, &l.model), VKQC_OK)
      << vkqc_last_error();
  uint32_t prog = 0;
  if (c.g.HasSymbolicDim()) {
    ASSERT_EQ(vkqc_model_find_program(l.model, uint32_t(c.tokens.front()), &prog), VKQC_OK) << vkqc_last_error();
  }
  for (size_t i = 0; i < c.g.inputs.size(); ++i) {
    const auto b = InputBytes(c, c.g.inputs[i]);
    ASSERT_EQ(vkqc_model_write_input(l.model, prog, uint32_t(i), b.data(), b.size()), VKQC_OK) << vkqc_last_error();
  }
  ASSERT_EQ(vkqc_model_run(l.model, prog), VKQC_OK) << vkqc_last_error();
  std::vector<std::string> variants;
  ref::RunOptions ro;
  ro.tokens = c.g.HasSymbolicDim() ? c.tokens.front() : 0;
  ro.int32_inputs = c.int32_inputs;
  std::map<std::string, std::vector<float>> state;
  ro.state = &state;
  ro.integer_path.assign(c.g.ops.size(), false);
  std::vector<int> layers_of(c.g.ops.size(), 0);
  for (uint32_t i = 0; i < vkqc_model_layer_count(l.model, prog); ++i) {
    vkqc_layer_info li;
    ASSERT_EQ(vkqc_model_layer_info(l.model, prog, i, &li), VKQC_OK);
    variants.push_back(li.variant);
    if (li.op_index < 0) continue;  // a layer the compiler added (an output repack, a split linear's part)
    ASSERT_LT(size_t(li.op_index), c.g.ops.size());
    ro.integer_path[size_t(li.op_index)] = li.integer_path != 0;
    ++layers_of[size_t(li.op_index)];
  }
  ASSERT_TRUE(std::all_of(layers_of.begin(), layers_of.end(), [](int n) { return n == 1; }))
      << "every op has exactly one layer";
  auto want = ref::RunGraphDetailed(c.g, c.inputs, ro);
  ASSERT_TRUE(want.ok()) << want.error().message;
  std::string vs;
  for (const auto& v : variants) vs += (vs.empty() ? "" : ", ") + v;
  for (size_t j = 0; j < c.g.outputs.size(); ++j) {
    const ir::Tensor& yt = c.g.tensors[size_t(c.g.outputs[j])];
    vkqc_tensor_info info;
    ASSERT_EQ(vkqc_model_output_info(l.model, prog, uint32_t(j), &info), VKQC_OK);
    std::vector<uint8_t> got(info.size_bytes);
    ASSERT_EQ(vkqc_model_read_output(l.model, prog, uint32_t(j), got.data(), got.size()), VKQC_OK)
        << vkqc_last_error();
    const std::vector<float>& r = want->outputs.at(yt.name);
    if (yt.dtype == ir::DType::I8) {  // within 1 LSB, unless exact
      ASSERT_EQ(got.size(), r.size());
      int worst = 0;
      for (size_t i = 0; i < r.size(); ++i) worst = std::max(worst, std::abs(int(int8_t(got[i])) - int(r[i])));
      EXPECT_LE(worst, rc.exact ? 0 : 1) << yt.name << " (" << vs << ")";
    } else if (yt.dtype == ir::DType::F16) {
      ASSERT_EQ(got.size(), r.size() * 2);
      for (size_t i = 0; i < r.size(); ++i) {
        const float h = HalfToFloat(uint16_t(got[2 * i] | (got[2 * i + 1] << 8)));
        ASSERT_EQ(h, r[i]) << yt.name << "[" << i << "] (" << vs << ")";
      }
    } else if (yt.dtype == ir::DType::I32) {
      const auto& ri = want->int32_outputs.at(yt.name);
      ASSERT_EQ(got.size(), ri.size() * 4);
      EXPECT_EQ(std::memcmp(got.data(), ri.data(), got.size()), 0) << yt.name << " (" << vs << ")";
    } else {
      ASSERT_EQ(got.size(), r.size() * 4);
      std::vector<float> g(r.size());
      std::memcpy(g.data(), got.data(), got.size());
      // Error relative to the largest reference value (or the magnitude of the sum, where the
      // reference knows it): fp32 accumulation against the double reference.
      double scale = 1e-6, err = 0;
      for (float v : r) scale = std::max(scale, double(std::fabs(v)));
      auto mag = want->magnitude.find(yt.name);
      if (mag != want->magnitude.end())
        for (float v : mag->second) scale = std::max(scale, double(v));
      for (size_t i = 0; i < r.size(); ++i) err = std::max(err, std::fabs(double(g[i]) - r[i]));
      if (rc.exact) EXPECT_EQ(err, 0.0) << yt.name << " (" << vs << ")";
      else EXPECT_LE(err / scale, rc.tol) << yt.name << " (" << vs << ")";
      EXPECT_TRUE(std::all_of(g.begin(), g.end(), [](float v) { return std::isfinite(v); })) << yt.name;
    }
  }
}

}  // namespace combos
}  // namespace vkqc
