#include "reference/decoder_reference.h"

#include "compiler/common/half.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/reference.h"

namespace vkqc::ref {
namespace {

Result<int32_t> Position(const ir::Op& op, int slot, DecoderValues& v) {
  auto it = v.ints.find(op.inputs[size_t(slot)]);
  if (it == v.ints.end() || it->second.empty()) return UserError("reference: op '" + op.name + "' has no position");
  return it->second[0];
}

Status Embedding(const ir::Graph& g, const ir::Op& op, DecoderValues& v) {
  const ir::Tensor& table = g.tensors[op.inputs[1]];
  const std::vector<int32_t>& ids = v.ints.at(op.inputs[0]);
  const int64_t rows = table.shape[0], d = table.shape[1];
  std::vector<float> y(ids.size() * size_t(d), 0.0f);
  DecodedWeights w;
  if (table.dtype != ir::DType::F32) w = DecodeWeights(table);
  const float* f = reinterpret_cast<const float*>(table.data->data());
  for (size_t t = 0; t < ids.size(); ++t) {
    const int64_t id = ids[t];
    if (id < 0 || id >= rows) continue;  // out of range: zeros
    for (int64_t c = 0; c < d; ++c)
      y[t * size_t(d) + size_t(c)] =
          table.dtype == ir::DType::F32
              ? f[id * d + c]
              : w.scales[size_t(id * (d / w.group_size) + c / w.group_size)] * float(w.w[size_t(id * d + c)]);
  }
  v.values[op.outputs[0]] = std::move(y);
  return {};
}

Status RmsNorm(const ir::Graph& g, const ir::Op& op, DecoderValues& v) {
  const std::vector<float>& x = v.values.at(op.inputs[0]);
  const float* w = reinterpret_cast<const float*>(g.tensors[op.inputs[1]].data->data());
  const int64_t d = g.tensors[op.inputs[0]].shape.back(), rows = int64_t(x.size()) / d;
  std::vector<float> y(x.size()), mag(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < d; ++c) ss += double(x[r * d + c]) * x[r * d + c];
    const double inv = 1.0 / std::sqrt(ss / double(d) + double(op.norm.eps));
    for (int64_t c = 0; c < d; ++c) {
      y[r * d + c] = float(double(x[r * d + c]) * inv * w[c]);
      mag[r * d + c] = std::fabs(y[r * d + c]);
    }
  }
  v.values[op.outputs[0]] = std::move(y);
  v.magnitude[op.outputs[0]] = std::move(mag);
  return {};
}

Status Rope(const ir::Graph& g, const ir::Op& op, DecoderValues& v) {
  const ir::RopeAttrs& a = op.rope;
  const std::vector<float>& x = v.values.at(op.inputs[0]);
  VKQC_ASSIGN_OR_RETURN(const int32_t pos, Position(op, 1, v));
  const int64_t width = g.tensors[op.inputs[0]].shape.back(), rows = int64_t(x.size()) / width;
  const int64_t half = a.head_dim / 2;
  if (pos < 0 || pos + rows > a.max_positions)
    return UserError("reference: op '" + op.name + "': positions " + std::to_string(pos) + ".." +
                     std::to_string(pos + rows - 1) + " exceed max_positions " + std::to_string(a.max_positions));
  const std::vector<float> table = ir::RopeTable(a);
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < width / a.head_dim; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const int64_t base = r * width + h * a.head_dim;
        const int64_t i0 = base + (a.interleaved ? 2 * i : i), i1 = base + (a.interleaved ? 2 * i + 1 : i + half);
        const float c = table[size_t(((pos + r) * half + i) * 2)], s = table[size_t(((pos + r) * half + i) * 2 + 1)];
        y[i0] = x[i0] * c - x[i1] * s;
        y[i1] = x[i0] * s + x[i1] * c;
      }
  v.values[op.outputs[0]] = std::move(y);
  return {};
}

Status Attention(const ir::Graph& g, const ir::Op& op, DecoderValues& v) {
  const ir::AttentionAttrs& a = op.attention;
  const std::vector<float>& q = v.values.at(op.inputs[0]);
  const std::vector<float>& kn = v.values.at(op.inputs[1]);
  const std::vector<float>& vn = v.values.at(op.inputs[2]);
  const ir::Tensor& kct = g.tensors[op.inputs[3]];
  const ir::Tensor& vct = g.tensors[op.inputs[4]];
  VKQC_ASSIGN_OR_RETURN(const int32_t pos, Position(op, 5, v));
  const int64_t hq = a.num_heads, hkv = a.num_kv_heads, d = a.head_dim, s = kct.shape[1];
  const int64_t rows = int64_t(q.size()) / (hq * d);
  if (pos < 0 || pos + rows > s)
    return UserError("reference: op '" + op.name + "': positions " + std::to_string(pos) + ".." +
                     std::to_string(pos + rows - 1) + " exceed the cache's " + std::to_string(s));
  std::map<std::string, std::vector<float>> local;
  auto& st = v.state ? *v.state : local;
  std::vector<float>& kc = st[kct.name];
  std::vector<float>& vc = st[vct.name];
  kc.resize(size_t(hkv * s * d), 0.0f);
  vc.resize(size_t(hkv * s * d), 0.0f);
  const bool f16 = kct.dtype == ir::DType::F16;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < hkv; ++h)
      for (int64_t c = 0; c < d; ++c) {
        const size_t at = size_t((h * s + pos + r) * d + c), from = size_t((r * hkv + h) * d + c);
        kc[at] = f16 ? RoundToHalf(kn[from]) : kn[from];
        vc[at] = f16 ? RoundToHalf(vn[from]) : vn[from];
      }
  const double scale = a.Scale();
  std::vector<float> y(q.size()), mag(q.size());
  std::vector<double> p;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kvh = h / (hq / hkv), len = pos + r + 1;
      const float* qr = &q[size_t((r * hq + h) * d)];
      p.assign(size_t(len), 0.0);
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += double(qr[c]) * kc[size_t((kvh * s + j) * d + c)];
        p[size_t(j)] = dot * scale;
        mx = std::max(mx, p[size_t(j)]);
      }
      double sum = 0;
      for (double& e : p) sum += (e = std::exp(e - mx));
      for (int64_t c = 0; c < d; ++c) {
        double acc = 0, m = 0;
        for (int64_t j = 0; j < len; ++j) {
          const double val = vc[size_t((kvh * s + j) * d + c)];
          acc += p[size_t(j)] * val;
          m += p[size_t(j)] * std::fabs(val);
        }
        y[size_t((r * hq + h) * d + c)] = float(acc / sum);
        mag[size_t((r * hq + h) * d + c)] = float(m / sum);
      }
    }
  v.values[op.outputs[0]] = std::move(y);
  v.magnitude[op.outputs[0]] = std::move(mag);
  return {};
}

Status Argmax(const ir::Graph& g, const ir::Op& op, DecoderValues& v) {
  const std::vector<float>& x = v.values.at(op.inputs[0]);
  const int64_t n = g.tensors[op.inputs[0]].shape.back(), rows = int64_t(x.size()) / n;
  std::vector<int32_t> idx(static_cast<size_t>(rows));
  std::vector<float> f(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t j = 1; j < n; ++j)
      if (x[size_t(r * n + j)] > x[size_t(r * n + best)]) best = j;
    idx[size_t(r)] = int32_t(best);
    f[size_t(r)] = float(best);
  }
  v.ints[op.outputs[0]] = std::move(idx);
  v.values[op.outputs[0]] = std::move(f);
  return {};
}

}  // namespace

bool IsDecoderOp(ir::OpType t) {
  return t == ir::OpType::Embedding || t == ir::OpType::RmsNorm || t == ir::OpType::Rope ||
         t == ir::OpType::Attention || t == ir::OpType::Argmax;
}

Status RunDecoderOp(const ir::Graph& g, const ir::Op& op, int64_t tokens, DecoderValues& v) {
  (void)tokens;
  switch (op.type) {
    case ir::OpType::Embedding: return Embedding(g, op, v);
    case ir::OpType::RmsNorm: return RmsNorm(g, op, v);
    case ir::OpType::Rope: return Rope(g, op, v);
    case ir::OpType::Attention: return Attention(g, op, v);
    case ir::OpType::Argmax: return Argmax(g, op, v);
    default: return InternalError("reference: RunDecoderOp on a " + std::string(ir::OpTypeName(op.type)));
  }
}

}  // namespace vkqc::ref
