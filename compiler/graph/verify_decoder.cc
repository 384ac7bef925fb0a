// Verification of the transformer-decoder ops (embedding, rms_norm, rope, attention, argmax)
// and of state tensors. The semantics are in ir.h and DESIGN 4.2.
#include <algorithm>
#include <cmath>

#include "compiler/graph/verify_ops.h"

namespace vkqc::verify {
namespace {

using ir::DType;
using ir::Tensor;

bool IsGraphInput(const ir::Graph& g, int t) { return std::find(g.inputs.begin(), g.inputs.end(), t) != g.inputs.end(); }

// A non-constant f32 activation input.
Status FloatInput(const OpCtx& c, size_t i, const char* role) {
  const Tensor& t = c.In(i);
  if (t.is_constant() || t.state || t.dtype != DType::F32)
    return c.Fail(std::string(role) + " " + Quote(t.name) + " must be a non-constant f32 tensor, but is " +
                  (t.is_constant() ? "a constant " : t.state ? "a state tensor " : "") + ir::DTypeName(t.dtype));
  return {};
}

// The position input: the graph input i32 [1] holding the position of row 0.
Status PositionInput(const OpCtx& c, size_t i) {
  const Tensor& p = c.In(i);
  if (p.dtype != DType::I32 || p.shape != std::vector<int64_t>{1} || !IsGraphInput(c.g, c.op.inputs[i]))
    return c.Fail("position input " + Quote(p.name) + " must be a graph input i32 [1] (the position of the first "
                  "row, set per run), but is " + std::string(IsGraphInput(c.g, c.op.inputs[i]) ? "" : "not a graph "
                  "input, ") + ir::DTypeName(p.dtype) + " " + Dims(c.g, p.shape));
  return {};
}

Status SameShapeFloatOutput(const OpCtx& c, const Tensor& like) {
  const Tensor& y = c.Out(0);
  if (y.dtype != DType::F32 || y.shape != like.shape)
    return c.Fail("output " + Quote(y.name) + " is " + ir::DTypeName(y.dtype) + " " + Dims(c.g, y.shape) +
                  "; it must be f32 " + Dims(c.g, like.shape));
  return {};
}

}  // namespace

Status CheckEmbedding(const OpCtx& c) {
  const Tensor& ids = c.In(0);
  const Tensor& table = c.In(1);
  if (ids.is_constant() || ids.dtype != DType::I32 || ids.shape.size() != 1)
    return c.Fail("ids " + Quote(ids.name) + " must be a non-constant i32 [tokens] tensor, but is " +
                  (ids.is_constant() ? "a constant " : "") + ir::DTypeName(ids.dtype) + " " + Dims(c.g, ids.shape));
  if (!table.is_constant() || table.shape.size() != 2)
    return c.Fail("table " + Quote(table.name) + " must be a constant [vocab, dim] tensor, but is " +
                  (table.is_constant() ? "" : "not a constant, ") + Dims(c.g, table.shape));
  const int64_t v = table.shape[0], d = table.shape[1];
  const ir::Scheme s = table.quant ? table.quant->scheme : ir::Scheme::None;
  if (table.dtype == DType::F32) {
    if (table.quant) return c.Fail("f32 table " + Quote(table.name) + " takes no quant");
  } else if ((table.dtype == DType::I8 && (s == ir::Scheme::Q8CSW || s == ir::Scheme::Q8GSW)) ||
             (table.dtype == DType::I4 && s == ir::Scheme::Q4GSW)) {
    VKQC_TRY(CheckWeight(c, table, v, d));
  } else {
    return c.Fail("table " + Quote(table.name) + " is " + ir::DTypeName(table.dtype) +
                  (table.quant ? std::string(" ") + ir::SchemeName(s) : std::string()) +
                  "; an embedding table is f32, i8 q8csw (one scale per row), i8 q8gsw or i4 q4gsw (groups along the row)");
  }
  std::vector<int64_t> want = ids.shape;
  want.push_back(d);
  const Tensor& y = c.Out(0);
  if (y.dtype != DType::F32 || y.shape != want)
    return c.Fail("output " + Quote(y.name) + " is " + ir::DTypeName(y.dtype) + " " + Dims(c.g, y.shape) +
                  "; it must be f32 " + Dims(c.g, want));
  return {};
}

Status CheckRmsNorm(const OpCtx& c) {
  VKQC_TRY(FloatInput(c, 0, "input"));
  const Tensor& x = c.In(0);
  const Tensor& w = c.In(1);
  const int64_t d = x.shape.empty() ? 0 : x.shape.back();
  if (x.shape.empty() || d == ir::kSymbolicDim) return c.Fail("input " + Quote(x.name) + " needs a concrete last axis");
  if (!w.is_constant() || w.dtype != DType::F32 || w.shape != std::vector<int64_t>{d})
    return c.Fail("weight " + Quote(w.name) + " must be a constant f32 [" + Num(d) + "], but is " +
                  (w.is_constant() ? "" : "not a constant, ") + ir::DTypeName(w.dtype) + " " + Dims(c.g, w.shape));
  if (!(std::isfinite(c.op.norm.eps) && c.op.norm.eps > 0.0f))
    return c.Fail("eps is " + std::to_string(c.op.norm.eps) + "; it must be a finite number > 0");
  return SameShapeFloatOutput(c, x);
}

Status CheckRope(const OpCtx& c) {
  VKQC_TRY(FloatInput(c, 0, "input"));
  VKQC_TRY(PositionInput(c, 1));
  const Tensor& x = c.In(0);
  const ir::RopeAttrs& a = c.op.rope;
  if (a.head_dim < 2 || a.head_dim % 2 || a.head_dim > 1024)
    return c.Fail("head_dim is " + Num(a.head_dim) + "; it must be even, 2..1024");
  if (x.shape.size() != 2 || x.shape[1] % a.head_dim)
    return c.Fail("input " + Quote(x.name) + " is " + Dims(c.g, x.shape) + "; rope takes [tokens, heads * " +
                  Num(a.head_dim) + "]");
  if (!(std::isfinite(a.theta) && a.theta > 1.0f)) return c.Fail("theta must be a finite number > 1");
  if (a.max_positions < 1 || a.max_positions > (1 << 20))
    return c.Fail("max_positions is " + Num(a.max_positions) + "; it must be 1..1048576 (the table size)");
  if (a.llama3 && !(a.factor >= 1.0f && a.low_freq_factor > 0.0f && a.high_freq_factor > a.low_freq_factor &&
                    a.original_max_position >= 1 && std::isfinite(a.factor) && std::isfinite(a.high_freq_factor)))
    return c.Fail("llama3 scaling needs factor >= 1, 0 < low_freq_factor < high_freq_factor and "
                  "original_max_position >= 1");
  if (!a.llama3 && !(a.factor == 1.0f && a.low_freq_factor == 1.0f && a.high_freq_factor == 4.0f &&
                     a.original_max_position == 8192))
    return c.Fail("scaling parameters are set but no scaling type is; give \"scaling\": {\"type\": \"llama3\", ...}");
  return SameShapeFloatOutput(c, x);
}

Status CheckAttention(const OpCtx& c) {
  const ir::AttentionAttrs& a = c.op.attention;
  if (a.num_heads < 1 || a.num_kv_heads < 1 || a.num_heads % a.num_kv_heads)
    return c.Fail("num_heads " + Num(a.num_heads) + " must be a positive multiple of num_kv_heads " +
                  Num(a.num_kv_heads));
  if (a.head_dim < 2 || a.head_dim % 2 || a.head_dim > 256)
    return c.Fail("head_dim is " + Num(a.head_dim) + "; attention supports even head sizes 2..256");
  if (!std::isfinite(a.scale) || a.scale < 0.0f) return c.Fail("scale must be finite and >= 0 (0: 1/sqrt(head_dim))");
  const char* roles[3] = {"q", "k", "v"};
  const int64_t widths[3] = {int64_t(a.num_heads) * a.head_dim, int64_t(a.num_kv_heads) * a.head_dim,
                             int64_t(a.num_kv_heads) * a.head_dim};
  const Tensor& q = c.In(0);
  const std::string rows =
      q.shape.empty() ? "tokens" : q.shape[0] == ir::kSymbolicDim ? c.g.symbolic_dim : Num(q.shape[0]);
  for (size_t i = 0; i < 3; ++i) {
    VKQC_TRY(FloatInput(c, i, roles[i]));
    const Tensor& t = c.In(i);
    if (t.shape.size() != 2 || t.shape[1] != widths[i] || t.shape[0] != q.shape[0])
      return c.Fail(std::string(roles[i]) + " " + Quote(t.name) + " is " + Dims(c.g, t.shape) + "; it must be [" +
                    rows + ", " + Num(widths[i]) + "] (heads x head_dim)");
  }
  const Tensor& kc = c.In(3);
  const Tensor& vc = c.In(4);
  for (const Tensor* t : {&kc, &vc}) {
    if (!t->state)
      return c.Fail("cache " + Quote(t->name) + " must be a state tensor (\"state\": true): the KV cache persists "
                    "across runs");
    if (t->shape.size() != 3 || t->shape[0] != a.num_kv_heads || t->shape[2] != a.head_dim)
      return c.Fail("cache " + Quote(t->name) + " is " + Dims(c.g, t->shape) + "; it must be [num_kv_heads " +
                    Num(a.num_kv_heads) + ", max_context, head_dim " + Num(a.head_dim) + "]");
  }
  if (kc.shape != vc.shape || kc.dtype != vc.dtype)
    return c.Fail("caches " + Quote(kc.name) + " and " + Quote(vc.name) + " differ in shape or dtype");
  if (c.op.inputs[3] == c.op.inputs[4]) return c.Fail("the K and V caches must be different tensors");
  VKQC_TRY(PositionInput(c, 5));
  return SameShapeFloatOutput(c, q);
}

Status CheckArgmax(const OpCtx& c) {
  VKQC_TRY(FloatInput(c, 0, "input"));
  const Tensor& x = c.In(0);
  if (x.shape.empty() || x.shape.back() == ir::kSymbolicDim)
    return c.Fail("input " + Quote(x.name) + " needs a concrete last axis");
  std::vector<int64_t> want(x.shape.begin(), x.shape.end() - 1);
  if (want.empty()) want.push_back(1);
  const Tensor& y = c.Out(0);
  if (y.dtype != DType::I32 || y.shape != want)
    return c.Fail("output " + Quote(y.name) + " is " + ir::DTypeName(y.dtype) + " " + Dims(c.g, y.shape) +
                  "; argmax writes i32 " + Dims(c.g, want) + " (the index of each row's maximum)");
  return {};
}

Status CheckStateTensors(const ir::Graph& g, const std::string& origin) {
  std::vector<int> uses(g.tensors.size(), 0);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    for (size_t s = 0; s < op.inputs.size(); ++s) {
      const Tensor& t = g.tensors[op.inputs[s]];
      if (!t.state) continue;
      if (op.type != ir::OpType::Attention || (s != 3 && s != 4))
        return UserError(origin + ": op " + Num(int64_t(i)) + " " + Quote(op.name) + " (" + ir::OpTypeName(op.type) +
                         ") reads the state tensor " + Quote(t.name) +
                         "; state tensors are KV caches, read and written only by attention ops");
      if (++uses[op.inputs[s]] > 1)
        return UserError(origin + ": state tensor " + Quote(t.name) +
                         " is the cache of more than one attention op; give each its own");
    }
  }
  for (size_t ti = 0; ti < g.tensors.size(); ++ti) {
    const Tensor& t = g.tensors[ti];
    if (!t.state) continue;
    const std::string who = origin + ": state tensor " + Quote(t.name);
    if (t.is_constant()) return UserError(who + " has constant data; state starts as zeros");
    if (t.quant) return UserError(who + " has a quant; a KV cache is f16 or f32");
    if (t.dtype != DType::F16 && t.dtype != DType::F32)
      return UserError(who + " is " + ir::DTypeName(t.dtype) + "; a KV cache is f16 (default) or f32");
    for (int64_t d : t.shape)
      if (d == ir::kSymbolicDim) return UserError(who + " needs a concrete shape (the max context is its size)");
    for (int io : g.inputs)
      if (io == int(ti)) return UserError(who + " is a graph input; state lives on the device between runs");
    for (int io : g.outputs)
      if (io == int(ti)) return UserError(who + " is a graph output; state lives on the device between runs");
  }
  return {};
}

}  // namespace vkqc::verify
