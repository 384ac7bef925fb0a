#include "reference/cnn_ops_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/reference.h"

namespace vkqc::ref {
namespace {

std::vector<int64_t> Shape(const ir::Tensor& t, int64_t tokens) {
  std::vector<int64_t> s = t.shape;
  for (int64_t& d : s)
    if (d == ir::kSymbolicDim) d = tokens;
  return s;
}

int64_t Count(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

QParams Params(const ir::Quant& q) { return {q.scales.at(0), q.zero_points.empty() ? 0 : q.zero_points[0]}; }

// An int8 value q of parameters `in` in parameters `out`: the same code when they are equal,
// else clamp(roundEven(s_in * (q - zp_in) * (1 / s_out)) + zp_out).
float Requant(float q, QParams in, QParams out) {
  if (in.scale == out.scale && in.zero_point == out.zero_point) return q;
  const float real = in.scale * float(int32_t(q) - in.zero_point);
  return float(QuantizeInt8(real, 1.0f / out.scale, out.zero_point));
}

Status MaxPool(const ir::Graph& g, const ir::Op& op, int64_t tokens, std::map<int, std::vector<float>>& values) {
  const ir::Tensor& xt = g.tensors[size_t(op.inputs[0])];
  const ir::Pool2dAttrs& a = op.pool;
  const std::vector<int64_t> xs = Shape(xt, tokens);
  const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3];
  const int64_t kh = a.global ? h : a.kernel[0], kw = a.global ? w : a.kernel[1];
  const int64_t sh = a.global ? 1 : a.stride[0], sw = a.global ? 1 : a.stride[1];
  const int64_t pt = a.global ? 0 : a.padding[0], pl = a.global ? 0 : a.padding[1];
  const int64_t oh = a.global ? 1 : (h + a.padding[0] + a.padding[2] - kh) / sh + 1;
  const int64_t ow = a.global ? 1 : (w + a.padding[1] + a.padding[3] - kw) / sw + 1;
  const bool int8 = xt.dtype == ir::DType::I8;
  const std::vector<float>& x = values.at(op.inputs[0]);
  std::vector<float> y(size_t(n * oh * ow * c));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t ch = 0; ch < c; ++ch) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t u = 0; u < kh; ++u)
            for (int64_t v = 0; v < kw; ++v) {
              const int64_t ih = i * sh + u - pt, iw = j * sw + v - pl;
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;  // padded taps never win
              best = std::max(best, x[size_t(((b * h + ih) * w + iw) * c + ch)]);
            }
          y[size_t(((b * oh + i) * ow + j) * c + ch)] =
              int8 ? Requant(best, Params(*xt.quant), Params(a.output_quant)) : best;
        }
  values[op.outputs[0]] = std::move(y);
  return {};
}

Status Concat(const ir::Graph& g, const ir::Op& op, int64_t tokens, std::map<int, std::vector<float>>& values) {
  const ir::Tensor& yt = g.tensors[size_t(op.outputs[0])];
  const std::vector<int64_t> ys = Shape(yt, tokens);
  const int64_t rank = int64_t(ys.size());
  const size_t ax = size_t(op.concat.axis < 0 ? op.concat.axis + rank : op.concat.axis);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d) outer *= ys[d];
  for (size_t d = ax + 1; d < ys.size(); ++d) inner *= ys[d];
  std::vector<float> y(size_t(Count(ys)));
  int64_t at = 0;  // the first index along the axis of the current input
  for (int in : op.inputs) {
    const ir::Tensor& xt = g.tensors[size_t(in)];
    const std::vector<float>& x = values.at(in);
    const int64_t len = Shape(xt, tokens)[ax];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < len; ++k)
        for (int64_t r = 0; r < inner; ++r) {
          const float v = x[size_t((o * len + k) * inner + r)];
          y[size_t((o * ys[ax] + at + k) * inner + r)] =
              xt.dtype == ir::DType::I8 ? Requant(v, Params(*xt.quant), Params(op.concat.output_quant)) : v;
        }
    at += len;
  }
  values[op.outputs[0]] = std::move(y);
  return {};
}

Status Unary(const ir::Op& op, std::map<int, std::vector<float>>& values) {
  const std::vector<float>& x = values.at(op.inputs[0]);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    double r = 0;
    switch (op.type) {
      case ir::OpType::Sigmoid: r = 1.0 / (1.0 + std::exp(-v)); break;
      case ir::OpType::HardSigmoid:
        r = std::max(0.0, std::min(1.0, double(op.unary.alpha) * v + double(op.unary.beta)));
        break;
      default: r = v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5)); break;  // HardSwish
    }
    y[i] = float(r);
  }
  values[op.outputs[0]] = std::move(y);
  return {};
}

Status Resize(const ir::Graph& g, const ir::Op& op, int64_t tokens, std::map<int, std::vector<float>>& values) {
  const std::vector<int64_t> xs = Shape(g.tensors[size_t(op.inputs[0])], tokens);
  const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3], sh = op.resize.scale[0], sw = op.resize.scale[1];
  const std::vector<float>& x = values.at(op.inputs[0]);
  std::vector<float> y(size_t(n * h * sh * w * sw * c));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < h * sh; ++i)
      for (int64_t j = 0; j < w * sw; ++j)
        for (int64_t ch = 0; ch < c; ++ch)
          y[size_t(((b * h * sh + i) * w * sw + j) * c + ch)] = x[size_t(((b * h + i / sh) * w + j / sw) * c + ch)];
  values[op.outputs[0]] = std::move(y);
  return {};
}

Status Softmax(const ir::Op& op, std::map<int, std::vector<float>>& values, int64_t c) {
  const std::vector<float>& x = values.at(op.inputs[0]);
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / size_t(c); ++r) {
    const float* row = x.data() + r * size_t(c);
    double m = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t i = 0; i < c; ++i) m = std::max(m, double(row[i]));
    for (int64_t i = 0; i < c; ++i) sum += std::exp(double(row[i]) - m);
    for (int64_t i = 0; i < c; ++i) y[r * size_t(c) + size_t(i)] = float(std::exp(double(row[i]) - m) / sum);
  }
  values[op.outputs[0]] = std::move(y);
  return {};
}

// y[i] = a[i] * b[j], j the index of b at a's coordinates (b's dims right-aligned with a's; a
// dimension of b of size 1 reads its only entry).
Status BroadcastMul(const ir::Graph& g, const ir::Op& op, int64_t tokens, std::map<int, std::vector<float>>& values) {
  const std::vector<int64_t> as = Shape(g.tensors[size_t(op.inputs[0])], tokens);
  const std::vector<int64_t> bs = Shape(g.tensors[size_t(op.inputs[1])], tokens);
  const std::vector<float>& a = values.at(op.inputs[0]);
  const std::vector<float>& b = values.at(op.inputs[1]);
  const size_t off = as.size() - bs.size();
  std::vector<float> y(a.size());
  std::vector<int64_t> coord(as.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t j = 0;
    for (size_t d = 0; d < bs.size(); ++d) j = j * bs[d] + (bs[d] == 1 ? 0 : coord[off + d]);
    y[i] = a[i] * b[size_t(j)];
    for (size_t d = as.size(); d-- > 0;) {  // next coordinate, row-major
      if (++coord[d] < as[d]) break;
      coord[d] = 0;
    }
  }
  values[op.outputs[0]] = std::move(y);
  return {};
}

}  // namespace

bool IsCnnOp(const ir::Graph& g, const ir::Op& op) {
  switch (op.type) {
    case ir::OpType::MaxPool2d:
    case ir::OpType::Concat:
    case ir::OpType::Sigmoid:
    case ir::OpType::HardSigmoid:
    case ir::OpType::HardSwish:
    case ir::OpType::ResizeNearest:
    case ir::OpType::Softmax:
      return true;
    case ir::OpType::Mul:
      return g.tensors[size_t(op.inputs[0])].shape != g.tensors[size_t(op.inputs[1])].shape;
    default:
      return false;
  }
}

Status RunCnnOp(const ir::Graph& g, const ir::Op& op, int64_t tokens, std::map<int, std::vector<float>>& values) {
  switch (op.type) {
    case ir::OpType::MaxPool2d: return MaxPool(g, op, tokens, values);
    case ir::OpType::Concat: return Concat(g, op, tokens, values);
    case ir::OpType::ResizeNearest: return Resize(g, op, tokens, values);
    case ir::OpType::Softmax: {
      const int64_t c = g.tensors[size_t(op.inputs[0])].shape.back();
      return Softmax(op, values, c == ir::kSymbolicDim ? tokens : c);
    }
    case ir::OpType::Mul: return BroadcastMul(g, op, tokens, values);
    default: return Unary(op, values);
  }
}

}  // namespace vkqc::ref
