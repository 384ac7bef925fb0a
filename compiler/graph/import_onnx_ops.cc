// ONNX import: one conversion per ONNX op (see import_onnx.h for the contract).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "compiler/graph/import_onnx_internal.h"

namespace vkqc::onnx_import {
namespace {

using onnx::ElemType;

// Integer values of a constant with uint8 moved to int8 (q - 128) as DESIGN 4 says.
std::vector<int32_t> Ints(const HostTensor& h, bool shift_u8) {
  std::vector<int32_t> v(size_t(h.NumElements()));
  const bool u8 = h.type == int32_t(ElemType::Uint8);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int32_t(h.At(int64_t(i))) - (u8 && shift_u8 ? 128 : 0);
  return v;
}

// Per-output-channel int8 weight scales from a ConstQuant whose channel axis is `axis`.
}  // namespace

Result<ConstQuant> MakeConstQuant(Importer& im, const onnx::Node& n, const HostTensor& q, const HostTensor& scale,
                                  const HostTensor* zp, int64_t axis) {
  if (q.type != int32_t(ElemType::Int8) && q.type != int32_t(ElemType::Uint8) && q.type != int32_t(ElemType::Int32))
    return im.Fail(n, std::string("quantized constant of type ") + onnx::ElemTypeName(q.type) +
                          "; int8, uint8 or int32 is expected");
  ConstQuant c;
  c.dims = q.dims;
  c.src_type = q.type;
  c.q = Ints(q, true);
  const int64_t ns = scale.NumElements();
  if (ns < 1) return im.Fail(n, "the scale is empty");
  if (q.NumElements() < 1) return im.Fail(n, "the quantized constant is empty");
  if (ns == 1) {
    c.axis = -1;
  } else {
    const int64_t rank = int64_t(q.dims.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || q.dims[size_t(axis)] != ns)
      return im.Fail(n, "per-axis scale with " + std::to_string(ns) + " values does not match axis " +
                            std::to_string(axis) + " of " + Dims(q.dims));
    c.axis = int(axis);
  }
  for (int64_t i = 0; i < ns; ++i) {
    const double s = scale.At(i);
    if (!(s > 0) || !std::isfinite(s)) return im.Fail(n, "scale " + std::to_string(s) + " must be finite and > 0");
    c.scales.push_back(float(s));
  }
  if (zp) {
    if (zp->NumElements() != ns) return im.Fail(n, "zero point count differs from the scale count");
    if (zp->type != q.type) return im.Fail(n, "zero point type differs from the data type");
    c.zps = Ints(*zp, true);
  } else {
    c.zps.assign(size_t(ns), q.type == int32_t(ElemType::Uint8) ? -128 : 0);
  }
  return c;
}

namespace {
// y = q8csw weights [N, K] from a constant quantized matrix: rows are output channels.
struct Weights {
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  std::vector<float> scales;
};

Result<std::vector<float>> ChannelScales(Importer& im, const onnx::Node& n, ConstQuant& c, int channel_axis,
                                         int64_t channels, const char* what) {
  if (c.axis >= 0 && c.axis != channel_axis)
    return im.Fail(n, std::string(what) + " are quantized along axis " + std::to_string(c.axis) +
                          "; per-output-channel (axis " + std::to_string(channel_axis) + ") or per-tensor is expected");
  // Zero points other than 0: q - zp is the symmetric weight; EmitWeighted splits values outside
  // int8 (at most 255 levels from the zero point) into two int8 parts.
  const int64_t inner = c.axis < 0 ? 1 : Prod(c.dims, size_t(c.axis) + 1);
  for (size_t i = 0; i < c.q.size(); ++i) {
    const size_t ch = c.axis < 0 ? 0 : size_t((int64_t(i) / inner) % int64_t(c.zps.size()));
    c.q[i] -= c.zps[ch];
    if (c.q[i] < -255 || c.q[i] > 255) return im.Fail(n, std::string(what) + " are not 8-bit values");
  }
  std::fill(c.zps.begin(), c.zps.end(), 0);
  std::vector<float> s(size_t(channels), c.scales[0]);
  if (c.axis >= 0) s = c.scales;
  return s;
}

Result<std::vector<float>> BiasValues(Importer& im, const onnx::Node& n, Val* b, int64_t channels) {
  std::vector<float> bias;
  if (!b) return bias;
  if (b->cq) {
    if (b->cq->src_type != int32_t(ElemType::Int32))
      return im.Fail(n, "the bias is a DequantizeLinear of " + std::string(onnx::ElemTypeName(b->cq->src_type)) +
                            "; int32 is expected");
  } else if (!b->c) {
    return im.Fail(n, "the bias must be a constant");
  }
  const int64_t count = b->c ? b->c->NumElements() : int64_t(b->cq->q.size());
  if (count != channels && count != 1)
    return im.Fail(n, "the bias has " + std::to_string(count) + " values for " + std::to_string(channels) + " channels");
  for (int64_t i = 0; i < channels; ++i) bias.push_back(float(b->c->At(count == 1 ? 0 : i)));
  return bias;
}

}  // namespace

ir::Activation ActOf(const onnx::Node& c, const std::map<std::string, Val>& vals, bool* ok) {
  *ok = true;
  if (c.op_type == "Relu") return ir::Activation::Relu;
  double lo = -INFINITY, hi = INFINITY;
  if (auto* at = c.Find("min")) lo = at->f;
  if (auto* at = c.Find("max")) hi = at->f;
  for (size_t k = 1; k < 3 && k < c.inputs.size(); ++k) {
    if (c.inputs[k].empty()) continue;
    auto it = vals.find(c.inputs[k]);
    if (it == vals.end() || !it->second.c || it->second.c->NumElements() != 1) {
      *ok = false;
      return ir::Activation::None;
    }
    (k == 1 ? lo : hi) = it->second.c->At(0);
  }
  if (lo == 0 && hi == 6) return ir::Activation::Relu6;
  if (lo == 0 && std::isinf(hi) && hi > 0) return ir::Activation::Relu;
  *ok = false;
  return ir::Activation::None;
}

// Pads [top, left, bottom, right] of a 2-d window op from auto_pad / pads.
Result<std::array<int32_t, 4>> WindowPads(Importer& im, const onnx::Node& n, int64_t h, int64_t w, const int64_t k[2],
                                          const int64_t s[2], const int64_t d[2]) {
  std::array<int32_t, 4> p{0, 0, 0, 0};
  for (int a = 0; a < 2; ++a)
    if (k[a] < 1 || k[a] > kMaxWindow || s[a] < 1 || s[a] > kMaxWindow || d[a] < 1 || d[a] > kMaxWindow)
      return im.Fail(n, "kernel, stride and dilation values must be in 1.." + std::to_string(kMaxWindow));
  const std::string ap = StrAttr(n, "auto_pad", "NOTSET");
  if (ap == "NOTSET") {
    auto pads = IntsAttr(n, "pads", {0, 0, 0, 0});
    if (pads.size() != 4) return im.Fail(n, "pads has " + std::to_string(pads.size()) + " values; 4 are expected (2-d)");
    for (int i = 0; i < 4; ++i) {
      if (pads[size_t(i)] < 0 || pads[size_t(i)] > kMaxWindow)
        return im.Fail(n, "pads must be in 0.." + std::to_string(kMaxWindow));
      p[size_t(i)] = int32_t(pads[size_t(i)]);
    }
    return p;
  }
  if (ap == "VALID") return p;
  if (ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return im.Fail(n, "auto_pad '" + ap + "' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  const int64_t in[2] = {h, w};
  for (int a = 0; a < 2; ++a) {
    const int64_t out = (in[a] + s[a] - 1) / s[a];
    const int64_t total = std::max<int64_t>(0, (out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - in[a]);
    const int64_t small = total / 2, big = total - small;
    p[size_t(a)] = int32_t(ap == "SAME_UPPER" ? small : big);
    p[size_t(a + 2)] = int32_t(ap == "SAME_UPPER" ? big : small);
  }
  return p;
}

Status Importer::Convert(const onnx::Node& n) {
  const std::string& op = n.op_type;
  // Every op imported here writes its first output (the converters name what they add after it).
  if (n.outputs.empty() || n.outputs[0].empty()) return Fail(n, "the node has no output");
  if (n.domain == "com.microsoft") {
    if (op == "MatMulNBits") return MatMulNBits(n);
    return Fail(n, "unsupported op 'com.microsoft." + op + "'; vkqc imports " + OnnxSupportedOps());
  }
  if (!n.domain.empty() && n.domain != "ai.onnx")
    return Fail(n, "unsupported op '" + n.domain + "." + op + "'; vkqc imports " + OnnxSupportedOps());
  if (op == "DynamicQuantizeLinear")
    return Fail(n, "DynamicQuantizeLinear picks one uint8 scale and zero point per tensor at run time; vkqc's dynamic "
                   "activation scheme is per token (dq8ca, DESIGN 4) with another zero-point rule, so importing it "
                   "would change the model's numbers: export with static (QDQ) activation quantization, or weight-only");
  if (op == "ConvInteger" || op == "MatMulInteger")
    return Fail(n, op + " outputs raw int32 accumulators, which are not a vkqc tensor type; vkqc's int8 layers "
                   "produce requantized int8 or float outputs (export QLinearConv/QLinearMatMul or QDQ around Conv/MatMul)");
  if ((op == "Add" || op == "Mul") && n.Find("broadcast"))
    return Fail(n, "the opset < 7 'broadcast' attribute is not supported");
  if (op == "QuantizeLinear") return QuantizeLinear(n);
  if (op == "DequantizeLinear") return DequantizeLinear(n);
  if (op == "Conv") return Conv(n, false);
  if (op == "QLinearConv") return Conv(n, true);
  if (op == "MatMul") return MatMul(n, 0);
  if (op == "Gemm") return MatMul(n, 1);
  if (op == "QLinearMatMul") return MatMul(n, 2);
  if (op == "Add") return AddOrMul(n, false);
  if (op == "Mul") return AddOrMul(n, true);
  if (op == "AveragePool") return Pool(n, false, false);
  if (op == "GlobalAveragePool") return Pool(n, false, true);
  if (op == "MaxPool") return Pool(n, true, false);
  if (op == "GlobalMaxPool") return Pool(n, true, true);
  if (op == "Relu" || op == "Clip") return Activation(n);
  if (op == "Sigmoid" || op == "HardSigmoid" || op == "HardSwish") return Unary(n);
  if (op == "Softmax") return Softmax(n);
  if (op == "Concat") return Concat(n);
  if (op == "Resize" || op == "Upsample") return Resize(n);
  if (op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") return ShapeOp(n);
  if (op == "Transpose") return TransposeOp(n);
  if (op == "Identity" || op == "Cast") {
    VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
    if (op == "Cast") {
      const int64_t to = IntAttr(n, "to", 0);
      const bool is_float = x->c ? x->c->type == int32_t(ElemType::Float) : (x->qsrc >= 0 || (x->t >= 0 && !IsI8(x->t)));
      if (to != int64_t(ElemType::Float) || !is_float)
        return Fail(n, "only Cast from float to float (a no-op) is supported; this casts to " +
                           std::string(onnx::ElemTypeName(int32_t(to))));
    }
    Val v = *x;
    v.producer = -1;
    return SetOut(n, 0, std::move(v));
  }
  if (op == "Constant") {
    Val v;
    v.c = std::make_shared<HostTensor>();
    if (const onnx::Attribute* a = n.Find("value"); a && a->t) {
      VKQC_ASSIGN_OR_RETURN(*v.c, onnx::Decode(*a->t, base_dir_, "Constant '" + n.name + "'"));
    } else if (const onnx::Attribute* f = n.Find("value_float")) {
      v.c->type = int32_t(ElemType::Float);
      v.c->data.resize(4);
      std::memcpy(v.c->data.data(), &f->f, 4);
    } else if (const onnx::Attribute* fs = n.Find("value_floats")) {
      v.c->type = int32_t(ElemType::Float);
      v.c->dims = {int64_t(fs->floats.size())};
      v.c->data = FloatBytes(fs->floats);
    } else if (const onnx::Attribute* i = n.Find("value_int")) {
      v.c->type = int32_t(ElemType::Int64);
      v.c->data.resize(8);
      std::memcpy(v.c->data.data(), &i->i, 8);
    } else if (const onnx::Attribute* is = n.Find("value_ints")) {
      v.c->type = int32_t(ElemType::Int64);
      v.c->dims = {int64_t(is->ints.size())};
      v.c->data.resize(is->ints.size() * 8);
      if (!is->ints.empty()) std::memcpy(v.c->data.data(), is->ints.data(), v.c->data.size());
    } else {
      return Fail(n, "Constant without a tensor, float(s) or int(s) value");
    }
    v.shape = v.c->dims;
    return SetOut(n, 0, std::move(v));
  }
  return Fail(n, "unsupported op '" + op + "'; vkqc imports " + OnnxSupportedOps());
}

// A per-axis (q8pc) activation quantization: the axis of the vkqc tensor.
Status Importer::PerAxis(const onnx::Node& n, const Val& x, ir::Quant& q) {
  const int64_t rank = int64_t(x.shape.size());
  int64_t axis = IntAttr(n, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || x.shape[size_t(axis)] != int64_t(q.scales.size()))
    return Fail(n, "per-axis parameters with " + std::to_string(q.scales.size()) + " values do not match axis " +
                       std::to_string(axis) + " of " + Dims(x.shape));
  static const int nhwc[4] = {0, 3, 1, 2};
  q.axis = int32_t(x.nhwc && rank == 4 ? nhwc[axis] : axis);
  return {};
}

Status Importer::QuantizeLinear(const onnx::Node& n) {
  if (IntAttr(n, "block_size", 0) != 0) return Fail(n, "blocked quantization (block_size) is not supported");
  if (IntAttr(n, "saturate", 1) != 1) return Fail(n, "saturate = 0 applies to float8 outputs only");
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  if (x->c) {  // constant folding (float weights quantized in the graph)
    VKQC_ASSIGN_OR_RETURN(auto scale, ConstIn(n, 1, "the scale"));
    std::shared_ptr<HostTensor> zp;
    if (HasIn(n, 2)) { VKQC_ASSIGN_OR_RETURN(zp, ConstIn(n, 2, "the zero point")); }
    const bool u8 = !zp || zp->type == int32_t(ElemType::Uint8);
    if (zp && !u8 && zp->type != int32_t(ElemType::Int8))
      return Fail(n, std::string("zero point of type ") + onnx::ElemTypeName(zp->type) + " is not int8 or uint8");
    const int64_t ns = scale->NumElements(), count = x->c->NumElements();
    int64_t axis = IntAttr(n, "axis", 1), inner = 1;
    if (ns != 1) {
      if (axis < 0) axis += int64_t(x->c->dims.size());
      if (axis < 0 || axis >= int64_t(x->c->dims.size()) || x->c->dims[size_t(axis)] != ns)
        return Fail(n, "per-axis scale does not match axis " + std::to_string(axis));
      inner = Prod(x->c->dims, size_t(axis) + 1);
    }
    auto h = std::make_shared<HostTensor>();
    h->type = int32_t(u8 ? ElemType::Uint8 : ElemType::Int8);
    h->dims = x->c->dims;
    h->data.resize(size_t(count));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t ch = ns == 1 ? 0 : (i / inner) % ns;
      const double s = scale->At(ch);
      const double z = zp ? zp->At(ch) : 0;
      double q = double(RoundEven(double(float(x->c->At(i)) / float(s)))) + z;
      q = std::clamp(q, u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0);
      h->data[size_t(i)] = uint8_t(int(q) & 0xff);
    }
    Val v;
    v.c = h;
    v.shape = h->dims;
    return SetOut(n, 0, std::move(v));
  }
  VKQC_ASSIGN_OR_RETURN(ir::Quant q, ScalarQuant(n, 1, 2, ir::Scheme::Q8TA, true));
  if (q.scheme == ir::Scheme::Q8PC) VKQC_TRY(PerAxis(n, *x, q));
  if (x->qsrc >= 0) {
    const ir::Tensor& src = g_.tensors[size_t(x->qsrc)];
    if (src.quant && src.quant->scales == q.scales && src.quant->zero_points == q.zero_points &&
        src.quant->axis == q.axis) {
      Val v = *x;
      v.t = x->qsrc;
      v.qsrc = -1;
      v.producer = -1;
      return SetOut(n, 0, std::move(v));  // dequantize -> quantize with the same parameters: the int8 tensor
    }
  }
  VKQC_ASSIGN_OR_RETURN(int f, Float(*x, n));
  Val v;
  v.shape = x->shape;
  v.nhwc = x->nhwc;
  v.t = AddTensor(n.outputs.empty() ? Fresh("q") : n.outputs[0], g_.tensors[size_t(f)].shape, ir::DType::I8, q);
  ir::Op op;
  op.type = ir::OpType::Quantize;
  op.inputs = {f};
  op.outputs = {v.t};
  v.producer = AddOp(std::move(op));
  return SetOut(n, 0, std::move(v));
}

Status Importer::DequantizeLinear(const onnx::Node& n) {
  if (IntAttr(n, "block_size", 0) != 0) return Fail(n, "blocked quantization (block_size) is not supported");
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  if (x->c) {
    VKQC_ASSIGN_OR_RETURN(auto scale, ConstIn(n, 1, "the scale"));
    std::shared_ptr<HostTensor> zp;
    if (HasIn(n, 2)) { VKQC_ASSIGN_OR_RETURN(zp, ConstIn(n, 2, "the zero point")); }
    VKQC_ASSIGN_OR_RETURN(ConstQuant cq, MakeConstQuant(*this, n, *x->c, *scale, zp.get(), IntAttr(n, "axis", 1)));
    // The float values too, for consumers that read the constant as float (biases, ...).
    auto f = std::make_shared<HostTensor>();
    f->type = int32_t(ElemType::Float);
    f->dims = cq.dims;
    std::vector<float> vals(cq.q.size());
    const int64_t inner = cq.axis < 0 ? 1 : Prod(cq.dims, size_t(cq.axis) + 1);
    for (size_t i = 0; i < vals.size(); ++i) {
      const size_t ch = cq.axis < 0 ? 0 : size_t((int64_t(i) / inner) % int64_t(cq.scales.size()));
      vals[i] = float(cq.q[i] - cq.zps[ch]) * cq.scales[ch];
    }
    f->data = FloatBytes(vals);
    Val v;
    v.c = f;
    v.cq = std::make_shared<ConstQuant>(std::move(cq));
    v.shape = f->dims;
    return SetOut(n, 0, std::move(v));
  }
  const int q8 = Int8Of(*x);
  if (q8 < 0 || x->qsrc >= 0) return Fail(n, "the input is not an int8/uint8 tensor");
  VKQC_ASSIGN_OR_RETURN(ir::Quant q, ScalarQuant(n, 1, 2, ir::Scheme::Q8TA, true));
  if (q.scheme == ir::Scheme::Q8PC) VKQC_TRY(PerAxis(n, *x, q));
  VKQC_TRY(BindQuant(q8, q, n));
  Val v;
  v.shape = x->shape;
  v.nhwc = x->nhwc;
  v.qsrc = q8;
  return SetOut(n, 0, std::move(v));
}

Status Importer::Conv(const onnx::Node& n, bool qlinear) {
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  if (!x->runtime()) return Fail(n, "the input X must be computed, not a constant");
  if (x->shape.size() != 4) return Fail(n, "only 2-d convolutions (4-d NCHW input) are supported; X is " + Dims(x->shape));
  ConstQuant w;
  std::vector<float> bias;
  std::optional<ir::Quant> out_q;
  ir::Activation act = ir::Activation::None;
  if (qlinear) {
    if (x->t < 0 || !IsI8(x->t)) return Fail(n, "x must be an int8/uint8 tensor");
    VKQC_ASSIGN_OR_RETURN(ir::Quant xq, ScalarQuant(n, 1, 2, ir::Scheme::Q8TA));
    VKQC_TRY(BindQuant(x->t, xq, n));
    VKQC_ASSIGN_OR_RETURN(auto wc, ConstIn(n, 3, "w"));
    VKQC_ASSIGN_OR_RETURN(auto ws, ConstIn(n, 4, "w_scale"));
    std::shared_ptr<HostTensor> wz;
    if (HasIn(n, 5)) { VKQC_ASSIGN_OR_RETURN(wz, ConstIn(n, 5, "w_zero_point")); }
    VKQC_ASSIGN_OR_RETURN(w, MakeConstQuant(*this, n, *wc, *ws, wz.get(), 0));
    VKQC_ASSIGN_OR_RETURN(ir::Quant yq, ScalarQuant(n, 6, 7, ir::Scheme::Q8TO));
    out_q = yq;
    if (HasIn(n, 8)) {
      VKQC_ASSIGN_OR_RETURN(auto b, ConstIn(n, 8, "B"));
      if (b->type != int32_t(ElemType::Int32)) return Fail(n, "B must be int32");
      const int64_t cout = w.dims.empty() ? 0 : w.dims[0];
      if (b->NumElements() != cout) return Fail(n, "B has " + std::to_string(b->NumElements()) + " values for " + std::to_string(cout) + " channels");
      for (int64_t c = 0; c < cout; ++c)
        bias.push_back(float(b->At(c)) * (xq.scales[0] * w.scales[w.axis < 0 ? 0 : size_t(c)]));
    }
  } else {
    VKQC_ASSIGN_OR_RETURN(Val * wv, In(n, 1));
    VKQC_ASSIGN_OR_RETURN(w, ToConstQuant(*wv, n, "the weights W"));
  }
  if (w.dims.size() != 4) return Fail(n, "W must be 4-d [Cout, Cin/group, KH, KW]; it is " + Dims(w.dims));
  const int64_t cout = w.dims[0], cin_g = w.dims[1], kh = w.dims[2], kw = w.dims[3];
  const int64_t group = IntAttr(n, "group", 1);
  const int64_t cin = x->shape[1], h = x->shape[2], wd = x->shape[3];
  if (group < 1 || group > cin || cin != cin_g * group || cout % group)
    return Fail(n, "group " + std::to_string(group) + " does not fit X " + Dims(x->shape) + " and W " + Dims(w.dims));
  auto ks = IntsAttr(n, "kernel_shape", {kh, kw});
  if (ks.size() != 2 || ks[0] != kh || ks[1] != kw) return Fail(n, "kernel_shape differs from W's shape");
  auto st = IntsAttr(n, "strides", {1, 1});
  auto dl = IntsAttr(n, "dilations", {1, 1});
  if (st.size() != 2 || dl.size() != 2 || st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1)
    return Fail(n, "strides and dilations must be two values >= 1");
  const int64_t k2[2] = {kh, kw}, s2[2] = {st[0], st[1]}, d2[2] = {dl[0], dl[1]};
  VKQC_ASSIGN_OR_RETURN(auto pads, WindowPads(*this, n, h, wd, k2, s2, d2));
  VKQC_ASSIGN_OR_RETURN(std::vector<float> scales, ChannelScales(*this, n, w, 0, cout, "the weights"));
  if (!qlinear) {
    Val* b = nullptr;
    if (HasIn(n, 2)) { VKQC_ASSIGN_OR_RETURN(b, In(n, 2)); }
    VKQC_ASSIGN_OR_RETURN(bias, BiasValues(*this, n, b, cout));
  }
  const int64_t oh = (h + pads[0] + pads[2] - d2[0] * (kh - 1) - 1) / s2[0] + 1;
  const int64_t ow = (wd + pads[1] + pads[3] - d2[1] * (kw - 1) - 1) / s2[1] + 1;
  if (oh < 1 || ow < 1) return Fail(n, "the window is larger than the padded input");
  // Weights OIHW -> [Cout, KH, KW, Cin/g].
  std::vector<int32_t> wl(size_t(cout * kh * kw * cin_g));
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t i = 0; i < cin_g; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t xk = 0; xk < kw; ++xk)
          wl[size_t(((o * kh + y) * kw + xk) * cin_g + i)] = w.q[size_t(((o * cin_g + i) * kh + y) * kw + xk)];
  ir::Quant wq;
  wq.scheme = ir::Scheme::Q8CSW;
  wq.scales = scales;
  const std::string base = n.outputs.empty() ? Fresh("conv") : n.outputs[0];
  const bool int8_in = qlinear || x->qsrc >= 0;
  VKQC_ASSIGN_OR_RETURN(int xt, Get(*x, n, int8_in, Layout::Nhwc));
  std::string out_name = n.outputs.empty() ? Fresh("conv") : n.outputs[0];
  if (!qlinear) {
    out_q = QuantizedConsumer(n, &act);
    if (out_q) out_name = pending_out_;
  }
  ir::Op op;
  op.type = ir::OpType::Conv2d;
  op.inputs = {xt, -1};
  if (!bias.empty()) op.inputs.push_back(AddConst(base + ".bias", {cout}, ir::DType::F32, FloatBytes(bias)));
  op.conv2d.stride[0] = int32_t(s2[0]);
  op.conv2d.stride[1] = int32_t(s2[1]);
  op.conv2d.dilation[0] = int32_t(d2[0]);
  op.conv2d.dilation[1] = int32_t(d2[1]);
  for (int i = 0; i < 4; ++i) op.conv2d.padding[i] = pads[size_t(i)];
  op.conv2d.groups = int32_t(group);
  Val y;
  y.shape = {x->shape[0], cout, oh, ow};
  y.nhwc = true;
  y.t = EmitWeighted(std::move(op), wl, {cout, kh, kw, cin_g}, wq, base + ".weight", {x->shape[0], oh, ow, cout}, out_q,
                     act, out_name, &y.producer);
  if (out_q && !qlinear) {
    vals_[out_name] = std::move(y);
    return {};
  }
  return SetOut(n, 0, std::move(y));
}

// op with inputs {x, -1, bias?}: the weight tensor goes in slot 1. Weights within int8: one op
// writing `out_name` (activation and output quant fused). Wider weights (asymmetric uint8 weights
// more than 127 levels from their zero point): w = a + b with a = clamp(w, -128, 127), two float
// ops, an add (with the activation) and, for an int8 output, a quantize; the integer sums are
// exact, the result within 1 LSB of the single-op form.
int Importer::EmitWeighted(ir::Op op, const std::vector<int32_t>& w, std::vector<int64_t> wshape, const ir::Quant& wq,
                           const std::string& wname, std::vector<int64_t> yshape, const std::optional<ir::Quant>& out_q,
                           ir::Activation act, const std::string& out_name, int* producer) {
  auto set = [](ir::Op& o, ir::Activation a, const std::optional<ir::Quant>& q) {
    if (o.type == ir::OpType::Conv2d) {
      o.conv2d.activation = a;
      if (q) o.conv2d.output_quant = *q;
    } else {
      o.linear.fused_relu = a == ir::Activation::Relu;
      o.linear.fused_relu6 = a == ir::Activation::Relu6;
      if (q) o.linear.output_quant = *q;
    }
  };
  bool wide = false;
  for (int32_t v : w) wide = wide || v < -128 || v > 127;
  auto bytes = [&](int part) {
    std::vector<uint8_t> b(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      const int32_t a = std::clamp(w[i], -128, 127);
      b[i] = uint8_t(part == 0 ? a : w[i] - a);
    }
    return b;
  };
  if (!wide) {
    op.inputs[1] = AddConst(wname, wshape, ir::DType::I8, bytes(0), wq);
    set(op, act, out_q);
    const int y = AddTensor(out_name, yshape, out_q ? ir::DType::I8 : ir::DType::F32, out_q);
    op.outputs = {y};
    *producer = AddOp(std::move(op));
    return y;
  }
  if (o_.log) o_.log(wname + ": weights span more than int8 around their zero point: two int8 parts");
  int parts[2];
  for (int p = 0; p < 2; ++p) {
    ir::Op o = op;
    o.name = Fresh(op.name.empty() ? "part" : op.name + ".part");
    o.inputs[1] = AddConst(wname + (p ? ".hi" : ".lo"), wshape, ir::DType::I8, bytes(p), wq);
    if (p == 1 && o.inputs.size() > 2) o.inputs.pop_back();  // the bias once
    parts[p] = AddTensor(out_name + (p ? ".hi" : ".lo"), yshape, ir::DType::F32);
    o.outputs = {parts[p]};
    AddOp(std::move(o));
  }
  ir::Op add;
  add.type = ir::OpType::Add;
  add.name = Fresh("add_parts");
  add.inputs = {parts[0], parts[1]};
  add.add.activation = act;
  const int sum = AddTensor(out_q ? out_name + ".sum" : out_name, yshape, ir::DType::F32);
  add.outputs = {sum};
  *producer = -1;
  AddOp(std::move(add));
  if (!out_q) return sum;
  ir::Quant q = *out_q;
  q.scheme = ir::Scheme::Q8TA;
  const int y = AddTensor(out_name, yshape, ir::DType::I8, q);
  ir::Op quant;
  quant.type = ir::OpType::Quantize;
  quant.name = Fresh("quantize");
  quant.inputs = {sum};
  quant.outputs = {y};
  AddOp(std::move(quant));
  return y;
}

// MatMul / Gemm / QLinearMatMul with constant weights -> linear (x rows [M, K], W [N, K]).
Status Importer::MatMul(const onnx::Node& n, int kind) {
  const bool qlinear = kind == 2, gemm = kind == 1;
  VKQC_ASSIGN_OR_RETURN(Val * a, In(n, 0));
  VKQC_ASSIGN_OR_RETURN(Val * bv, In(n, qlinear ? 3 : 1));
  if (!a->runtime()) return Fail(n, "input A must be computed, not a constant");
  if (bv->runtime())
    return Fail(n, "both operands are computed tensors (e.g. attention scores); vkqc's linear layers need constant "
                   "weights for B");
  if (gemm && IntAttr(n, "transA", 0)) return Fail(n, "transA = 1 is not supported");
  const bool transb = gemm && IntAttr(n, "transB", 0);
  ConstQuant b;
  std::optional<ir::Quant> out_q;
  if (qlinear) {
    const int q8 = Int8Of(*a);
    if (q8 < 0 || a->qsrc >= 0) return Fail(n, "a must be an int8/uint8 tensor");
    VKQC_ASSIGN_OR_RETURN(ir::Quant aq, ScalarQuant(n, 1, 2, ir::Scheme::Q8TA));
    VKQC_TRY(BindQuant(q8, aq, n));
    VKQC_ASSIGN_OR_RETURN(auto bs, ConstIn(n, 4, "b_scale"));
    std::shared_ptr<HostTensor> bz;
    if (HasIn(n, 5)) { VKQC_ASSIGN_OR_RETURN(bz, ConstIn(n, 5, "b_zero_point")); }
    VKQC_ASSIGN_OR_RETURN(b, MakeConstQuant(*this, n, *bv->c, *bs, bz.get(), 1));
    VKQC_ASSIGN_OR_RETURN(ir::Quant yq, ScalarQuant(n, 6, 7, ir::Scheme::Q8TO));
    out_q = yq;
  } else {
    VKQC_ASSIGN_OR_RETURN(b, ToConstQuant(*bv, n, "B"));
  }
  if (b.dims.size() != 2) return Fail(n, "B must be a 2-d matrix; it is " + Dims(b.dims));
  const int64_t k = transb ? b.dims[1] : b.dims[0], nn = transb ? b.dims[0] : b.dims[1];
  if (a->shape.empty() || a->shape.back() != k)
    return Fail(n, "A " + Dims(a->shape) + " and B " + Dims(b.dims) + " do not multiply");
  if (gemm && a->shape.size() != 2) return Fail(n, "Gemm's A must be 2-d");
  VKQC_ASSIGN_OR_RETURN(std::vector<float> scales, ChannelScales(*this, n, b, transb ? 0 : 1, nn, "the weights B"));
  if (gemm) {
    const float alpha = FloatAttr(n, "alpha", 1.0f);
    for (float& s : scales) s *= alpha;
    if (!(alpha > 0)) return Fail(n, "alpha must be > 0 (it scales the int8 weights' scales)");
  }
  std::vector<int32_t> wl(size_t(nn * k));
  for (int64_t o = 0; o < nn; ++o)
    for (int64_t i = 0; i < k; ++i) wl[size_t(o * k + i)] = b.q[size_t(transb ? o * k + i : i * nn + o)];
  std::vector<float> bias;
  if (gemm && HasIn(n, 2)) {
    VKQC_ASSIGN_OR_RETURN(auto c, ConstIn(n, 2, "C"));
    const float beta = FloatAttr(n, "beta", 1.0f);
    const int64_t cn = c->NumElements();
    if (!(cn == 1 || (cn == nn && (c->dims.size() == 1 || (c->dims.size() == 2 && c->dims[0] == 1)))))
      return Fail(n, "C " + Dims(c->dims) + " must be a scalar or a row of " + std::to_string(nn) + " values");
    for (int64_t o = 0; o < nn; ++o) bias.push_back(beta * float(c->At(cn == 1 ? 0 : o)));
  }
  const std::string base = n.outputs.empty() ? Fresh("linear") : n.outputs[0];
  ir::Quant wq;
  wq.scheme = ir::Scheme::Q8CSW;
  wq.scales = scales;
  const bool int8_in = qlinear || a->qsrc >= 0;
  VKQC_ASSIGN_OR_RETURN(int xt, Get(*a, n, int8_in, Layout::Onnx));
  const int64_t m = Prod(a->shape, 0, a->shape.size() - 1);
  xt = Reshape(xt, {m, k}, g_.tensors[size_t(xt)].name + ".rows");
  ir::Activation act = ir::Activation::None;
  std::string out_name = base;
  if (!qlinear) {
    out_q = QuantizedConsumer(n, &act);
    if (out_q) out_name = pending_out_;
  }
  std::vector<int64_t> yshape = a->shape;
  yshape.back() = nn;
  ir::Op op;
  op.type = ir::OpType::Linear;
  op.inputs = {xt, -1};
  if (!bias.empty()) op.inputs.push_back(AddConst(base + ".bias", {nn}, ir::DType::F32, FloatBytes(bias)));
  const bool rows_only = yshape.size() == 2;
  Val y;
  const int yt = EmitWeighted(std::move(op), wl, {nn, k}, wq, base + ".weight", {m, nn}, out_q, act,
                              rows_only ? out_name : out_name + ".rows", &y.producer);
  y.shape = yshape;
  y.t = rows_only ? yt : Reshape(yt, yshape, out_name);
  if (!rows_only) y.producer = -1;
  if (out_q && !qlinear) {
    vals_[out_name] = std::move(y);
    return {};
  }
  return SetOut(n, 0, std::move(y));
}

// com.microsoft MatMulNBits: B uint8 [N, K / block, block / 2] (4-bit values, low nibble first),
// scales [N * K / block], optional packed uint4 zero points (default 8): w = (q - zp) * scale.
// Default zero points -> q4gsw (q - 8 in [-8, 7]); explicit ones -> q4gaw. x stays float.
Status Importer::MatMulNBits(const onnx::Node& n) {
  const int64_t k = IntAttr(n, "K", 0), nn = IntAttr(n, "N", 0), bits = IntAttr(n, "bits", 4);
  const int64_t bs = IntAttr(n, "block_size", 0);
  if (bits != 4) return Fail(n, "bits = " + std::to_string(bits) + "; vkqc imports 4-bit MatMulNBits");
  if (k <= 0 || nn <= 0 || bs < 16 || (bs & (bs - 1)))
    return Fail(n, "K, N must be > 0 and block_size a power of two >= 16");
  if (k % bs) return Fail(n, "K = " + std::to_string(k) + " is not a multiple of block_size " + std::to_string(bs) +
                                 " (vkqc's groups must divide K)");
  if (HasIn(n, 4)) return Fail(n, "g_idx (act-order group indices) is not supported");
  VKQC_ASSIGN_OR_RETURN(Val * a, In(n, 0));
  if (!a->runtime()) return Fail(n, "A must be computed, not a constant");
  if (a->shape.empty() || a->shape.back() != k)
    return Fail(n, "A " + Dims(a->shape) + " does not end in K = " + std::to_string(k));
  VKQC_ASSIGN_OR_RETURN(auto b, ConstIn(n, 1, "B"));
  VKQC_ASSIGN_OR_RETURN(auto sc, ConstIn(n, 2, "scales"));
  const int64_t nblk = k / bs;
  if (b->type != int32_t(ElemType::Uint8) || b->NumElements() != nn * k / 2)
    return Fail(n, "B must be uint8 with N * K / 2 = " + std::to_string(nn * k / 2) + " bytes; it has " +
                       std::to_string(b->NumElements()) + " " + onnx::ElemTypeName(b->type) + " values");
  if (sc->NumElements() != nn * nblk)
    return Fail(n, "scales has " + std::to_string(sc->NumElements()) + " values; N * K / block_size = " +
                       std::to_string(nn * nblk) + " are expected");
  std::vector<float> scales(size_t(nn * nblk));
  for (size_t i = 0; i < scales.size(); ++i) {
    scales[i] = float(sc->At(int64_t(i)));
    if (!std::isfinite(scales[i])) return Fail(n, "scales must be finite");
  }
  std::vector<int32_t> zps;
  if (HasIn(n, 3)) {
    VKQC_ASSIGN_OR_RETURN(auto z, ConstIn(n, 3, "zero_points"));
    if (z->type != int32_t(ElemType::Uint8))
      return Fail(n, std::string("zero_points of type ") + onnx::ElemTypeName(z->type) +
                         " (float zero points are not an integer zero point); packed uint8 is supported");
    const int64_t per_row = (nblk + 1) / 2;
    if (z->NumElements() != nn * per_row)
      return Fail(n, "zero_points has " + std::to_string(z->NumElements()) + " bytes; N * ceil(K / block / 2) = " +
                         std::to_string(nn * per_row) + " are expected");
    for (int64_t r = 0; r < nn; ++r)
      for (int64_t g = 0; g < nblk; ++g) zps.push_back((z->data[size_t(r * per_row + g / 2)] >> (4 * (g % 2))) & 15);
  }
  std::vector<float> bias;
  if (HasIn(n, 5)) {
    VKQC_ASSIGN_OR_RETURN(Val * bv, In(n, 5));
    VKQC_ASSIGN_OR_RETURN(bias, BiasValues(*this, n, bv, nn));
  }
  // The packed rows are vkqc's [N, K] 4-bit layout already (two per byte, low nibble first).
  std::vector<uint8_t> w = b->data;
  ir::Quant wq;
  wq.group_size = int32_t(bs);
  wq.scales = scales;
  ir::DType dt;
  if (zps.empty()) {
    for (uint8_t& byte : w) byte ^= 0x88;  // q - 8 as a 4-bit two's complement value, both nibbles
    wq.scheme = ir::Scheme::Q4GSW;
    dt = ir::DType::I4;
  } else {
    wq.scheme = ir::Scheme::Q4GAW;
    wq.zero_points = zps;
    dt = ir::DType::U4;
  }
  const std::string base = n.outputs.empty() ? Fresh("matmul_nbits") : n.outputs[0];
  const int wt = AddConst(base + ".weight", {nn, k}, dt, std::move(w), wq);
  VKQC_ASSIGN_OR_RETURN(int xt, Get(*a, n, false, Layout::Onnx));
  const int64_t m = Prod(a->shape, 0, a->shape.size() - 1);
  xt = Reshape(xt, {m, k}, g_.tensors[size_t(xt)].name + ".rows");
  std::vector<int64_t> yshape = a->shape;
  yshape.back() = nn;
  const bool rows_only = yshape.size() == 2;
  ir::Op op;
  op.type = ir::OpType::Linear;
  op.inputs = {xt, wt};
  if (!bias.empty()) op.inputs.push_back(AddConst(base + ".bias", {nn}, ir::DType::F32, FloatBytes(bias)));
  const int yt = AddTensor(rows_only ? base : base + ".rows", {m, nn}, ir::DType::F32);
  op.outputs = {yt};
  Val y;
  y.producer = AddOp(std::move(op));
  y.shape = yshape;
  y.t = rows_only ? yt : Reshape(yt, yshape, base);
  if (!rows_only) y.producer = -1;
  return SetOut(n, 0, std::move(y));
}

}  // namespace vkqc::onnx_import
