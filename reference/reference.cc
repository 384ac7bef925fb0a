#include "reference/reference.h"

#include "compiler/common/half.h"

#include "reference/cnn_ops_reference.h"
#include "reference/decoder_reference.h"
#include "reference/layout_reference.h"

#include "reference/conv_reference.h"

#include <algorithm>
#include <cfenv>
#include <cfloat>
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

int32_t QuantizeInt32(float x, float inv_scale) {
  const float r = RoundEven(x * inv_scale);
  if (std::isnan(r)) return 0;
  if (r >= 2147483648.0f) return INT32_MAX;
  if (r <= -2147483648.0f) return INT32_MIN;
  return int32_t(r);
}

int32_t QuantizeInt8(float x, float inv_scale, int32_t zero_point) {
  const float q = RoundEven(x * inv_scale) + float(zero_point);
  return int32_t(std::clamp(q, -128.0f, 127.0f));
}

QParams ChooseQParamsPerToken(const float* row, int64_t k) {
  float mn = 0.0f, mx = 0.0f;  // min' = min(min(x), 0), max' = max(max(x), 0)
  for (int64_t i = 0; i < k; ++i) {
    mn = std::min(mn, row[i]);
    mx = std::max(mx, row[i]);
  }
  const float qmin = -128.0f, qmax = 127.0f;
  const float scale = std::max((mx - mn) / 255.0f, FLT_EPSILON);
  const float dmin = mn / scale, dmax = mx / scale;
  const float err_min = qmin + dmin, err_max = qmax + dmax;
  const float zp = (err_min + err_max > 0.0f) ? qmin - dmin : qmax - dmax;
  return {scale, int32_t(std::clamp(RoundEven(zp), qmin, qmax))};
}

DecodedWeights DecodeWeights(const ir::Tensor& t) {
  DecodedWeights d;
  d.n = t.shape[0];
  d.k = t.shape[1];
  const ir::Quant& q = *t.quant;
  const uint8_t* data = t.data->data();
  d.w.resize(size_t(d.n * d.k));
  if (q.scheme == ir::Scheme::Q8CSW || q.scheme == ir::Scheme::Q8GSW) {
    d.group_size = q.scheme == ir::Scheme::Q8GSW ? q.group_size : d.k;
    for (int64_t i = 0; i < d.n * d.k; ++i) d.w[i] = int8_t(data[i]);
  } else {
    d.group_size = q.group_size;
    const int64_t groups = d.k / d.group_size;
    for (int64_t i = 0; i < d.n * d.k; ++i) {
      int32_t v = (data[i / 2] >> (4 * (i % 2))) & 0xF;
      if (q.scheme == ir::Scheme::Q4GSW) {
        v = v >= 8 ? v - 16 : v;  // symmetric, q in [-8, 7]
      } else if (q.scheme == ir::Scheme::Q4GMW) {
        // q in [0, 15] as stored; the minimum is applied per group
      } else {
        const int64_t n = i / d.k, g = (i % d.k) / d.group_size;
        v -= q.zero_points[n * groups + g];
      }
      d.w[i] = v;
    }
  }
  d.scales = q.scales;
  d.mins = q.mins;
  return d;
}

LinearOut LinearQuantized(const std::vector<int32_t>& xq, const std::vector<QParams>& rp, int64_t m,
                          const DecodedWeights& w, const float* bias, bool relu) {
  LinearOut out;
  out.y.resize(size_t(m * w.n));
  out.magnitude.resize(size_t(m * w.n));
  const int64_t groups = w.k / w.group_size;
  for (int64_t r = 0; r < m; ++r) {
    const QParams p = rp.size() == 1 ? rp[0] : rp[r];
    for (int64_t n = 0; n < w.n; ++n) {
      double y = 0, mag = 0;
      for (int64_t g = 0; g < groups; ++g) {
        int32_t acc = 0, abs_acc = 0, xs = 0, abs_xs = 0;
        for (int64_t k = g * w.group_size; k < (g + 1) * w.group_size; ++k) {
          const int32_t t = (xq[r * w.k + k] - p.zero_point) * w.w[n * w.k + k];
          acc += t;
          abs_acc += std::abs(t);
          xs += xq[r * w.k + k] - p.zero_point;
          abs_xs += std::abs(xq[r * w.k + k] - p.zero_point);
        }
        const double s = double(p.scale) * double(w.scales[n * groups + g]);
        y += double(acc) * s;
        mag += double(abs_acc) * s;
        if (!w.mins.empty()) {
          const double mm = double(p.scale) * double(w.mins[n * groups + g]);
          y -= double(xs) * mm;
          mag += double(abs_xs) * std::fabs(mm);
        }
      }
      if (bias) {
        y += bias[n];
        mag += std::fabs(bias[n]);
      }
      if (relu) y = std::max(y, 0.0);
      out.y[r * w.n + n] = float(y);
      out.magnitude[r * w.n + n] = float(mag);
    }
  }
  return out;
}

LinearOut LinearWeightOnly(const float* x, int64_t m, const DecodedWeights& w, const float* bias, bool relu) {
  LinearOut out;
  out.y.resize(size_t(m * w.n));
  out.magnitude.resize(size_t(m * w.n));
  const int64_t groups = w.k / w.group_size;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t n = 0; n < w.n; ++n) {
      double y = 0, mag = 0;
      for (int64_t k = 0; k < w.k; ++k) {
        const int64_t gi = n * groups + k / w.group_size;
        const double wv = double(w.scales[gi]) * double(w.w[n * w.k + k]) - (w.mins.empty() ? 0.0 : double(w.mins[gi]));
        const double t = double(x[r * w.k + k]) * wv;
        y += t;
        mag += std::fabs(t);
      }
      if (bias) {
        y += bias[n];
        mag += std::fabs(bias[n]);
      }
      if (relu) y = std::max(y, 0.0);
      out.y[r * w.n + n] = float(y);
      out.magnitude[r * w.n + n] = float(mag);
    }
  return out;
}

std::vector<float> Requantize(const std::vector<float>& y, float scale, int32_t zero_point) {
  const float inv = 1.0f / scale;
  std::vector<float> q(y.size());
  for (size_t i = 0; i < y.size(); ++i) q[i] = float(QuantizeInt8(y[i], inv, zero_point));
  return q;
}

float Silu(float x) { return float(double(x) / (1.0 + std::exp(-double(x)))); }

namespace {

QParams TensorParams(const ir::Quant& q) {
  return {q.scales.at(0), q.zero_points.empty() ? 0 : q.zero_points[0]};
}

// The parameters of flat element e of a per-tensor (q8ta/q8to) or per-channel (q8pc) tensor.
QParams ElementParams(const ir::Tensor& t, int64_t e, int64_t tokens) {
  const ir::Quant& q = *t.quant;
  if (q.scheme != ir::Scheme::Q8PC) return TensorParams(q);
  int64_t inner = 1;
  for (size_t d = size_t(q.axis) + 1; d < t.shape.size(); ++d)
    inner *= t.shape[d] == ir::kSymbolicDim ? tokens : t.shape[d];
  const int64_t c = (e / inner) % t.shape[size_t(q.axis)];
  return {q.scales[size_t(c)], q.zero_points.empty() ? 0 : q.zero_points[size_t(c)]};
}

}  // namespace

Result<GraphResult> RunGraphDetailed(const ir::Graph& g, const std::map<std::string, std::vector<float>>& inputs,
                                     const RunOptions& o) {
  std::map<int, std::vector<float>> values;
  GraphResult res;
  std::map<int, std::vector<float>> magnitude;
  std::map<int, std::vector<QParams>> row_params;  // per-token int8 tensors
  std::map<int, std::vector<int32_t>> ints;          // i32 tensors, exact
  for (int t : g.inputs) {
    const ir::Tensor& ten = g.tensors[t];
    auto it = inputs.find(ten.name);
    if (it == inputs.end()) return UserError("reference: no value for graph input '" + ten.name + "'");
    const int64_t want = ten.NumElements(o.tokens);
    if (int64_t(it->second.size()) != want)
      return UserError("reference: input '" + ten.name + "' has " + std::to_string(it->second.size()) +
                       " elements, expected " + std::to_string(want));
    values[t] = it->second;
    if (ten.dtype == ir::DType::F16)
      for (float& v : values[t]) v = RoundToHalf(v);
    if (ten.dtype == ir::DType::I32) {
      auto iit = o.int32_inputs.find(ten.name);
      std::vector<int32_t> iv;
      if (iit != o.int32_inputs.end()) {
        if (iit->second.size() != it->second.size())
          return UserError("reference: int32 input '" + ten.name + "' has the wrong element count");
        iv = iit->second;
      } else {
        for (float v : it->second) iv.push_back(int32_t(v));
      }
      ints[t] = std::move(iv);
    }
  }
  auto qt_of = [&](int t) -> const ir::Tensor& { return g.tensors[t]; };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    for (int in : op.inputs)
      if (!g.tensors[in].is_constant() && !g.tensors[in].state && !values.count(in))
        return UserError("reference: op '" + op.name + "' reads a value not computed yet");
    if (IsDecoderOp(op.type)) {
      DecoderValues dv{values, ints, o.state, magnitude};
      VKQC_TRY(RunDecoderOp(g, op, o.tokens, dv));
      continue;
    }
    if (IsCnnOp(g, op)) {
      VKQC_TRY(RunCnnOp(g, op, o.tokens, values));
      continue;
    }
    if (IsLayoutOp(op.type)) {
      VKQC_TRY(RunLayoutOp(g, op, o.tokens, values));
      continue;
    }
    if (op.type == ir::OpType::Mul) {
      const auto& a = values[op.inputs[0]];
      const auto& b = values[op.inputs[1]];
      std::vector<float> y(a.size());
      for (size_t j = 0; j < a.size(); ++j) y[j] = a[j] * b[j];
      values[op.outputs[0]] = std::move(y);
      continue;
    }
    if (op.type == ir::OpType::Silu) {
      const auto& a = values[op.inputs[0]];
      std::vector<float> y(a.size());
      for (size_t j = 0; j < a.size(); ++j) y[j] = Silu(a[j]);
      values[op.outputs[0]] = std::move(y);
      continue;
    }
    if (op.type == ir::OpType::Quantize &&
        (qt_of(op.outputs[0]).quant->scheme == ir::Scheme::Q8PC || qt_of(op.outputs[0]).dtype == ir::DType::I32)) {
      const ir::Tensor& qt = g.tensors[op.outputs[0]];
      const auto& x = values[op.inputs[0]];
      std::vector<float> q(x.size());
      std::vector<int32_t> qi(x.size());
      for (size_t j = 0; j < x.size(); ++j) {
        const QParams p = ElementParams(qt, int64_t(j), o.tokens);
        const float inv = 1.0f / p.scale;
        qi[j] = qt.dtype == ir::DType::I32 ? QuantizeInt32(x[j], inv) : QuantizeInt8(x[j], inv, p.zero_point);
        q[j] = float(qi[j]);
      }
      if (qt.dtype == ir::DType::I32) ints[op.outputs[0]] = std::move(qi);
      values[op.outputs[0]] = std::move(q);
      continue;
    }
    if (op.type == ir::OpType::Quantize) {
      const ir::Tensor& qt = g.tensors[op.outputs[0]];
      const auto& x = values[op.inputs[0]];
      const int64_t k = qt.shape.back(), m = int64_t(x.size()) / k;
      std::vector<float> q(x.size());
      std::vector<QParams> params;
      for (int64_t r = 0; r < m; ++r) {
        const QParams p = qt.quant->scheme == ir::Scheme::DQ8CA ? ChooseQParamsPerToken(x.data() + r * k, k)
                                                                : TensorParams(*qt.quant);
        const float inv = 1.0f / p.scale;
        for (int64_t j = 0; j < k; ++j) q[r * k + j] = float(QuantizeInt8(x[r * k + j], inv, p.zero_point));
        params.push_back(p);
      }
      row_params[op.outputs[0]] = std::move(params);
      values[op.outputs[0]] = std::move(q);
      continue;
    }
    if (op.type == ir::OpType::Dequantize) {
      const ir::Tensor& qt = g.tensors[op.inputs[0]];
      const auto& q = values[op.inputs[0]];
      const int64_t k = qt.shape.back();
      std::vector<float> y(q.size());
      const bool f16 = g.tensors[op.outputs[0]].dtype == ir::DType::F16;
      for (size_t j = 0; j < q.size(); ++j) {
        const QParams p = qt.quant->scheme == ir::Scheme::DQ8CA ? row_params.at(op.inputs[0])[j / k]
                                                                : ElementParams(qt, int64_t(j), o.tokens);
        const int32_t qv = qt.dtype == ir::DType::I32 ? ints.at(op.inputs[0])[j] : int32_t(q[j]);
        y[j] = p.scale * float(qv - p.zero_point);  // i32 zero points are 0: no overflow
        if (f16) y[j] = RoundToHalf(y[j]);
      }
      values[op.outputs[0]] = std::move(y);
      continue;
    }
    if (op.type == ir::OpType::Add) {
      const ir::Tensor& at = g.tensors[op.inputs[0]];
      const ir::Tensor& bt = g.tensors[op.inputs[1]];
      const auto& a = values[op.inputs[0]];
      const auto& b = values[op.inputs[1]];
      std::vector<float> y(a.size());
      const bool int8 = at.dtype == ir::DType::I8;
      for (size_t j = 0; j < a.size(); ++j) {
        float v;
        if (int8) {
          const QParams pa = TensorParams(*at.quant), pb = TensorParams(*bt.quant);
          v = pa.scale * float(int32_t(a[j]) - pa.zero_point) + pb.scale * float(int32_t(b[j]) - pb.zero_point);
        } else {
          v = a[j] + b[j];
        }
        if (op.add.activation == ir::Activation::Relu) v = std::max(v, 0.0f);
        if (op.add.activation == ir::Activation::Relu6) v = std::clamp(v, 0.0f, 6.0f);
        y[j] = v;
      }
      if (int8) {
        const QParams q = TensorParams(op.add.output_quant);
        y = Requantize(y, q.scale, q.zero_point);
      }
      values[op.outputs[0]] = std::move(y);
      continue;
    }
    if (op.type == ir::OpType::AvgPool2d) {
      const ir::Tensor& xt = g.tensors[op.inputs[0]];
      const ir::Pool2dAttrs& a = op.pool;
      const auto& x = values[op.inputs[0]];
      const int64_t h = xt.shape[1], w = xt.shape[2], c = xt.shape[3], n = int64_t(x.size()) / (h * w * c);
      const int64_t kh = a.global ? h : a.kernel[0], kw = a.global ? w : a.kernel[1];
      const int64_t sh = a.global ? 1 : a.stride[0], sw = a.global ? 1 : a.stride[1];
      const int64_t pt = a.global ? 0 : a.padding[0], pl = a.global ? 0 : a.padding[1];
      const int64_t oh = a.global ? 1 : (h + a.padding[0] + a.padding[2] - kh) / sh + 1;
      const int64_t ow = a.global ? 1 : (w + a.padding[1] + a.padding[3] - kw) / sw + 1;
      const bool int8 = xt.dtype == ir::DType::I8;
      const QParams in = int8 ? TensorParams(*xt.quant) : QParams{};
      std::vector<float> y(size_t(n * oh * ow * c));
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j)
            for (int64_t ch = 0; ch < c; ++ch) {
              int64_t count = 0, isum = 0;
              double fsum = 0;
              for (int64_t u = 0; u < kh; ++u)
                for (int64_t v = 0; v < kw; ++v) {
                  const int64_t ih = i * sh + u - pt, iw = j * sw + v - pl;
                  if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                  const float xv = x[((b * h + ih) * w + iw) * c + ch];
                  ++count;
                  isum += int64_t(xv);
                  fsum += xv;
                }
              y[((b * oh + i) * ow + j) * c + ch] =
                  int8 ? float(isum - count * in.zero_point) * in.scale / float(count) : float(fsum / double(count));
            }
      if (int8) {
        const QParams q = TensorParams(a.output_quant);
        y = Requantize(y, q.scale, q.zero_point);
      }
      values[op.outputs[0]] = std::move(y);
      continue;
    }
    if (op.type == ir::OpType::Conv2d) {
      const ir::Tensor& xt = g.tensors[op.inputs[0]];
      const ir::Tensor& wt = g.tensors[op.inputs[1]];
      const ir::Tensor& yt = g.tensors[op.outputs[0]];
      const ir::Conv2dAttrs& a = op.conv2d;
      const auto& x = values[op.inputs[0]];
      ConvParams p;
      p.h = xt.shape[1];
      p.w = xt.shape[2];
      p.c = xt.shape[3];
      p.n = int64_t(x.size()) / (p.h * p.w * p.c);
      p.cout = wt.shape[0];
      p.kh = wt.shape[1];
      p.kw = wt.shape[2];
      p.sh = a.stride[0];
      p.sw = a.stride[1];
      p.pt = a.padding[0];
      p.pl = a.padding[1];
      p.dh = a.dilation[0];
      p.dw = a.dilation[1];
      p.oh = yt.shape[1];
      p.ow = yt.shape[2];
      p.groups = a.groups;
      const auto* w = reinterpret_cast<const int8_t*>(wt.data->data());
      const float* bias =
          op.inputs.size() > 2 ? reinterpret_cast<const float*>(g.tensors[op.inputs[2]].data->data()) : nullptr;
      const int act = int(a.activation);
      LinearOut out;
      if (xt.dtype == ir::DType::I8 || a.input_quant.scheme == ir::Scheme::Q8TA) {
        const QParams in = xt.dtype == ir::DType::I8 ? TensorParams(*xt.quant) : TensorParams(a.input_quant);
        std::vector<int32_t> xq(x.size());
        const float inv = 1.0f / in.scale;
        for (size_t j = 0; j < x.size(); ++j)
          xq[j] = xt.dtype == ir::DType::I8 ? int32_t(x[j]) : QuantizeInt8(x[j], inv, in.zero_point);
        out = Conv2dQuantized(p, xq, in, w, wt.quant->scales.data(), bias, act);
      } else {
        out = Conv2dWeightOnly(p, x, w, wt.quant->scales.data(), bias, act);
      }
      if (a.output_quant.scheme == ir::Scheme::Q8TO) {
        const QParams q = TensorParams(a.output_quant);
        values[op.outputs[0]] = Requantize(out.y, q.scale, q.zero_point);
      } else {
        magnitude[op.outputs[0]] = std::move(out.magnitude);
        values[op.outputs[0]] = std::move(out.y);
      }
      continue;
    }
    if (op.type != ir::OpType::Linear) return UserError("reference: unsupported op " + op.name);
    const ir::Tensor& xt = g.tensors[op.inputs[0]];
    const std::vector<float>& x = values[op.inputs[0]];
    const DecodedWeights w = DecodeWeights(g.tensors[op.inputs[1]]);
    const int64_t m = int64_t(x.size()) / w.k;
    const float* bias =
        op.inputs.size() > 2 ? reinterpret_cast<const float*>(g.tensors[op.inputs[2]].data->data()) : nullptr;
    const ir::Scheme act = op.linear.input_quant.scheme;
    const bool x_int8 = xt.dtype == ir::DType::I8;
    const bool quantizes = act == ir::Scheme::Q8TA || act == ir::Scheme::DQ8CA;
    const bool integer = x_int8 || (quantizes && (o.integer_path.empty() ||
                                                  (i < o.integer_path.size() && o.integer_path[i])));
    LinearOut out;
    if (integer) {
      std::vector<int32_t> xq(x.size());
      std::vector<QParams> params;
      if (x_int8) {
        for (size_t j = 0; j < x.size(); ++j) xq[j] = int32_t(x[j]);
        if (xt.quant->scheme == ir::Scheme::DQ8CA) params = row_params.at(op.inputs[0]);
        else params = {TensorParams(*xt.quant)};
      } else if (act == ir::Scheme::Q8TA) {
        params = {TensorParams(op.linear.input_quant)};
        const float inv = 1.0f / params[0].scale;
        for (size_t j = 0; j < x.size(); ++j) xq[j] = QuantizeInt8(x[j], inv, params[0].zero_point);
      } else {
        for (int64_t r = 0; r < m; ++r) {
          params.push_back(ChooseQParamsPerToken(x.data() + r * w.k, w.k));
          const float inv = 1.0f / params.back().scale;
          for (int64_t k = 0; k < w.k; ++k)
            xq[r * w.k + k] = QuantizeInt8(x[r * w.k + k], inv, params.back().zero_point);
        }
      }
      out = LinearQuantized(xq, params, m, w, bias, op.linear.fused_relu);
    } else {
      out = LinearWeightOnly(x.data(), m, w, bias, op.linear.fused_relu);
    }
    if (op.linear.fused_relu6)
      for (auto& v : out.y) v = std::clamp(v, 0.0f, 6.0f);
    if (op.linear.output_quant.scheme == ir::Scheme::Q8TO) {
      const QParams q = TensorParams(op.linear.output_quant);
      values[op.outputs[0]] = Requantize(out.y, q.scale, q.zero_point);
    } else {
      magnitude[op.outputs[0]] = std::move(out.magnitude);
      values[op.outputs[0]] = std::move(out.y);
    }
  }
  for (int t : g.outputs) {
    res.outputs[g.tensors[t].name] = values[t];
    if (ints.count(t)) res.int32_outputs[g.tensors[t].name] = ints[t];
    if (magnitude.count(t)) res.magnitude[g.tensors[t].name] = magnitude[t];
  }
  return res;
}

Result<std::map<std::string, std::vector<float>>> RunGraph(
    const ir::Graph& g, const std::map<std::string, std::vector<float>>& inputs, const RunOptions& o) {
  VKQC_ASSIGN_OR_RETURN(GraphResult r, RunGraphDetailed(g, inputs, o));
  return r.outputs;
}

void LinearInteger(const LinearArgs& a, float act_scale, int32_t zp, float* y, float* magnitude) {
  const float inv = 1.0f / act_scale;
  for (int64_t m = 0; m < a.m; ++m)
    for (int64_t n = 0; n < a.n; ++n) {
      int32_t acc = 0;
      for (int64_t k = 0; k < a.k; ++k)
        acc += (QuantizeInt8(a.x[m * a.k + k], inv, zp) - zp) * int32_t(a.w[n * a.k + k]);
      float v = float(acc) * (act_scale * a.w_scales[n]);
      if (magnitude) magnitude[m * a.n + n] = std::fabs(v) + (a.bias ? std::fabs(a.bias[n]) : 0.0f);
      if (a.bias) v += a.bias[n];
      if (a.relu) v = std::max(v, 0.0f);
      y[m * a.n + n] = v;
    }
}

void LinearWeightOnly(const LinearArgs& a, float* y, float* abs_sum) {
  DecodedWeights w;
  w.n = a.n;
  w.k = a.k;
  w.group_size = a.k;
  w.w.assign(a.w, a.w + a.n * a.k);
  w.scales.assign(a.w_scales, a.w_scales + a.n);
  LinearOut o = LinearWeightOnly(a.x, a.m, w, a.bias, a.relu);
  std::copy(o.y.begin(), o.y.end(), y);
  if (abs_sum) std::copy(o.magnitude.begin(), o.magnitude.end(), abs_sum);
}

}  // namespace vkqc::ref
