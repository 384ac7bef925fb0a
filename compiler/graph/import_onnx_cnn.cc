// ONNX import: elementwise, window, layout and shape ops (see import_onnx.h for the contract).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "compiler/graph/import_onnx_internal.h"

namespace vkqc::onnx_import {
namespace {
using onnx::ElemType;

// The NHWC position of ONNX axis a of a 4-d NCHW value.
int NhwcAxis(int a) {
  static const int map[4] = {0, 3, 1, 2};
  return map[a];
}
}  // namespace

// A one-input f32 op on xt (x's tensor in the layout `nhwc` says) writing output 0 of n.
Status Importer::EmitFloat(const onnx::Node& n, const Val& x, int xt, ir::Op op, bool nhwc) {
  op.inputs = {xt};
  Val y;
  y.shape = x.shape;
  y.nhwc = nhwc;
  y.t = AddTensor(n.outputs[0], g_.tensors[size_t(xt)].shape, ir::DType::F32);
  op.outputs = {y.t};
  AddOp(std::move(op));
  return SetOut(n, 0, std::move(y));
}

Status Importer::AddOrMul(const onnx::Node& n, bool mul) {
  VKQC_ASSIGN_OR_RETURN(Val * a, In(n, 0));
  VKQC_ASSIGN_OR_RETURN(Val * b, In(n, 1));
  std::string a_name = n.inputs[0];
  if (!a->runtime() && b->runtime()) {
    std::swap(a, b);
    a_name = n.inputs[1];
  }
  if (!b->runtime()) {
    // A constant operand: a bias after a linear or conv2d without one.
    if (!mul && a->producer >= 0 && a->t >= 0 && uses_[a_name] == 1) {
      ir::Op& p = g_.ops[size_t(a->producer)];
      const bool linear = p.type == ir::OpType::Linear, conv = p.type == ir::OpType::Conv2d;
      const int64_t ch = a->shape.empty() ? 0 : (conv ? a->shape[1] : a->shape.back());
      const int64_t cn = b->c ? b->c->NumElements() : 0;
      bool shape_ok = cn == ch && b->c->type == int32_t(ElemType::Float);
      if (conv && shape_ok)  // [C], [C, 1, 1] or [1, C, 1, 1]
        shape_ok = b->c->dims.size() == 1 ? true : (b->c->dims.size() >= 3 && b->c->dims[b->c->dims.size() - 1] == 1 &&
                                                   b->c->dims[b->c->dims.size() - 2] == 1);
      if (linear && shape_ok) shape_ok = b->c->dims.back() == ch;
      const bool plain = (linear && !p.linear.fused_relu && !p.linear.fused_relu6 && p.linear.output_quant.scheme == ir::Scheme::None) ||
                         (conv && p.conv2d.activation == ir::Activation::None && p.conv2d.output_quant.scheme == ir::Scheme::None);
      if ((linear || conv) && p.inputs.size() == 2 && shape_ok && plain) {
        std::vector<float> bias(static_cast<size_t>(ch));
        for (int64_t c = 0; c < ch; ++c) bias[size_t(c)] = float(b->c->At(c));
        p.inputs.push_back(AddConst(g_.tensors[size_t(a->t)].name + ".bias", {ch}, ir::DType::F32, FloatBytes(bias)));
        Val y = *a;
        return SetOut(n, 0, std::move(y));
      }
    }
    return Fail(n, std::string(mul ? "Mul" : "Add") +
                       " with a constant operand is supported only as the bias of a preceding MatMul/Conv "
                       "(a per-channel row read by nothing else); scale the weights or bias instead");
  }
  const bool four = a->shape.size() == 4 || b->shape.size() == 4;
  const Layout l = four && (a->nhwc || b->nhwc) ? Layout::Nhwc : Layout::Any;
  if (a->shape != b->shape) {
    if (!mul) return Fail(n, "Add of " + Dims(a->shape) + " and " + Dims(b->shape) + ": broadcasting is not supported");
    // Mul broadcasts one operand (squeeze-excite: [N, C, H, W] * [N, C, 1, 1]).
    auto broadcasts = [](const std::vector<int64_t>& big, const std::vector<int64_t>& small) {
      if (small.size() > big.size()) return false;
      for (size_t i = 0; i < small.size(); ++i) {
        const int64_t s = small[small.size() - 1 - i], g = big[big.size() - 1 - i];
        if (s != 1 && s != g) return false;
      }
      return true;
    };
    if (!broadcasts(a->shape, b->shape)) std::swap(a, b);
    if (!broadcasts(a->shape, b->shape))
      return Fail(n, "Mul of " + Dims(a->shape) + " and " + Dims(b->shape) + ": neither broadcasts to the other");
    if (l == Layout::Nhwc && b->shape.size() != 4)
      return Fail(n, "Mul of an NHWC 4-d tensor by a rank-" + std::to_string(b->shape.size()) +
                         " operand is not supported; give the operand rank 4");
  }
  ir::Activation act = ir::Activation::None;
  if (!mul && Int8Of(*a) >= 0 && Int8Of(*b) >= 0) {
    if (auto q = QuantizedConsumer(n, &act)) {  // int8 + int8 -> int8
      const std::string out = pending_out_;
      VKQC_ASSIGN_OR_RETURN(int at, Get(*a, n, true, l));
      VKQC_ASSIGN_OR_RETURN(int bt, Get(*b, n, true, l));
      ir::Op op;
      op.type = ir::OpType::Add;
      op.inputs = {at, bt};
      op.add.activation = act;
      op.add.output_quant = *q;
      Val y;
      y.shape = a->shape;
      y.nhwc = l == Layout::Nhwc;
      y.t = AddTensor(out, g_.tensors[size_t(at)].shape, ir::DType::I8, *q);
      op.outputs = {y.t};
      y.producer = AddOp(std::move(op));
      vals_[out] = std::move(y);
      return {};
    }
  }
  VKQC_ASSIGN_OR_RETURN(int at, Get(*a, n, false, l));
  VKQC_ASSIGN_OR_RETURN(int bt, Get(*b, n, false, l));
  ir::Op op;
  op.type = mul ? ir::OpType::Mul : ir::OpType::Add;
  op.inputs = {at, bt};
  Val y;
  y.shape = a->shape;
  y.nhwc = l == Layout::Nhwc;
  y.t = AddTensor(n.outputs[0], g_.tensors[size_t(at)].shape, ir::DType::F32);
  op.outputs = {y.t};
  y.producer = AddOp(std::move(op));
  return SetOut(n, 0, std::move(y));
}

Status Importer::Pool(const onnx::Node& n, bool max, bool global) {
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  if (x->shape.size() != 4) return Fail(n, "only 2-d pooling (4-d NCHW input) is supported; X is " + Dims(x->shape));
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) return Fail(n, "the Indices output of MaxPool is not supported");
  const int64_t h = x->shape[2], w = x->shape[3];
  ir::Pool2dAttrs pa;
  int64_t oh = 1, ow = 1;
  if (global) {
    pa.global = true;
  } else {
    auto ks = IntsAttr(n, "kernel_shape", {});
    if (ks.size() != 2 || ks[0] < 1 || ks[1] < 1) return Fail(n, "kernel_shape must be two values >= 1 (2-d pooling)");
    auto st = IntsAttr(n, "strides", {1, 1});
    if (st.size() != 2 || st[0] < 1 || st[1] < 1) return Fail(n, "strides must be two values >= 1");
    auto dl = IntsAttr(n, "dilations", {1, 1});
    if (dl != std::vector<int64_t>{1, 1}) return Fail(n, "dilations other than 1 are not supported");
    if (IntAttr(n, "storage_order", 0) != 0) return Fail(n, "storage_order = 1 is not supported");
    const int64_t k2[2] = {ks[0], ks[1]}, s2[2] = {st[0], st[1]}, d2[2] = {1, 1};
    VKQC_ASSIGN_OR_RETURN(auto pads, WindowPads(*this, n, h, w, k2, s2, d2));
    oh = (h + pads[0] + pads[2] - ks[0]) / st[0] + 1;
    ow = (w + pads[1] + pads[3] - ks[1]) / st[1] + 1;
    if (IntAttr(n, "ceil_mode", 0)) {
      const int64_t ch = (h + pads[0] + pads[2] - ks[0] + st[0] - 1) / st[0] + 1;
      const int64_t cw = (w + pads[1] + pads[3] - ks[1] + st[1] - 1) / st[1] + 1;
      if (ch != oh || cw != ow)
        return Fail(n, "ceil_mode = 1 adds a partial window here; only floor output sizes are supported");
    }
    const bool padded = pads[0] || pads[1] || pads[2] || pads[3];
    if (!max && IntAttr(n, "count_include_pad", 0) && padded)
      return Fail(n, "count_include_pad = 1 with padding is not supported (vkqc averages the real taps only)");
    for (int i = 0; i < 2; ++i) {
      pa.kernel[i] = int32_t(ks[size_t(i)]);
      pa.stride[i] = int32_t(st[size_t(i)]);
    }
    for (int i = 0; i < 4; ++i) pa.padding[i] = pads[size_t(i)];
    if (oh < 1 || ow < 1) return Fail(n, "the window is larger than the padded input");
  }
  std::optional<ir::Quant> out_q;
  bool int8 = Int8Of(*x) >= 0;
  const bool raw = x->qsrc < 0 && int8;  // an integer tensor (no DequantizeLinear): max pool is exact on it
  if (raw && max && graph_inputs_.count(x->t) && !quant_bound_.count(x->t)) {
    ir::Quant unit;
    unit.scheme = ir::Scheme::Q8TA;
    unit.scales = {1.0f};
    unit.zero_points = {0};
    VKQC_TRY(BindQuant(x->t, unit, n));
  }
  std::string out = n.outputs[0];
  if (int8) {
    out_q = QuantizedConsumer(n, nullptr);
    if (out_q) {
      out = pending_out_;
    } else if (max) {
      out_q = g_.tensors[size_t(Int8Of(*x))].quant;  // the maximum keeps the input's scale
      if (out_q) out_q->scheme = ir::Scheme::Q8TO;
    }
    int8 = out_q.has_value();
  }
  VKQC_ASSIGN_OR_RETURN(int xt, Get(*x, n, int8, Layout::Nhwc));
  ir::Op op;
  op.type = max ? ir::OpType::MaxPool2d : ir::OpType::AvgPool2d;
  op.pool = pa;
  if (out_q) op.pool.output_quant = *out_q;
  op.inputs = {xt};
  Val y;
  y.shape = {x->shape[0], x->shape[1], oh, ow};
  y.nhwc = true;
  const int yt = AddTensor(out, {x->shape[0], oh, ow, x->shape[1]}, int8 ? ir::DType::I8 : ir::DType::F32, out_q);
  op.outputs = {yt};
  AddOp(std::move(op));
  if (int8 && out == n.outputs[0] && !raw)
    y.qsrc = yt;  // an int8 max pool read as float: its dequantize
  else
    y.t = yt;
  if (out != n.outputs[0]) {
    vals_[out] = std::move(y);
    return {};
  }
  return SetOut(n, 0, std::move(y));
}

Status Importer::Activation(const onnx::Node& n) {
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  bool fusable = false;
  ir::Activation act = ActOf(n, vals_, &fusable);
  // Fused into the conv2d / add / linear that wrote x when nothing else reads x.
  if (fusable && x->producer >= 0 && x->t >= 0 && uses_[n.inputs[0]] == 1) {
    ir::Op& p = g_.ops[size_t(x->producer)];
    bool done = false;
    if (p.type == ir::OpType::Conv2d && p.conv2d.activation == ir::Activation::None) {
      p.conv2d.activation = act;
      done = true;
    } else if (p.type == ir::OpType::Add && p.add.activation == ir::Activation::None) {
      p.add.activation = act;
      done = true;
    } else if (p.type == ir::OpType::Linear && !p.linear.fused_relu && !p.linear.fused_relu6) {
      p.linear.fused_relu = act == ir::Activation::Relu;
      p.linear.fused_relu6 = act == ir::Activation::Relu6;
      done = true;
    }
    if (done) {
      Val y = *x;
      return SetOut(n, 0, std::move(y));
    }
  }
  float lo = 0, hi = INFINITY;
  if (n.op_type == "Clip") {
    lo = -INFINITY;
    if (auto* at = n.Find("min")) lo = at->f;
    if (auto* at = n.Find("max")) hi = at->f;
    for (size_t k = 1; k < 3; ++k) {
      if (!HasIn(n, k)) continue;
      VKQC_ASSIGN_OR_RETURN(auto c, ConstIn(n, k, k == 1 ? "min" : "max"));
      if (c->NumElements() != 1) return Fail(n, "min and max must be scalars");
      (k == 1 ? lo : hi) = float(c->At(0));
    }
    if (lo > hi) return Fail(n, "min > max");
  }
  VKQC_ASSIGN_OR_RETURN(int xt, Get(*x, n, false, Layout::Any));
  ir::Op op;
  op.type = ir::OpType::Clip;
  op.unary.alpha = lo;
  op.unary.beta = hi;
  return EmitFloat(n, *x, xt, std::move(op), x->nhwc);
}

Status Importer::Unary(const onnx::Node& n) {
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  VKQC_ASSIGN_OR_RETURN(int xt, Get(*x, n, false, Layout::Any));
  ir::Op op;
  op.type = n.op_type == "Sigmoid" ? ir::OpType::Sigmoid
            : n.op_type == "HardSigmoid" ? ir::OpType::HardSigmoid
                                         : ir::OpType::HardSwish;
  if (op.type == ir::OpType::HardSigmoid) {
    op.unary.alpha = FloatAttr(n, "alpha", 0.2f);
    op.unary.beta = FloatAttr(n, "beta", 0.5f);
  }
  return EmitFloat(n, *x, xt, std::move(op), x->nhwc);
}

Status Importer::Softmax(const onnx::Node& n) {
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  const int64_t rank = int64_t(x->shape.size());
  int64_t axis = IntAttr(n, "axis", m_.Opset("") >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Fail(n, "axis " + std::to_string(axis) + " is outside rank " + std::to_string(rank));
  // Opset < 13 flattens the axes from `axis` on: the same as the last axis only when axis is last.
  const bool channels_last = x->nhwc && rank == 4 && axis == 1;
  if (axis != rank - 1 && !channels_last)
    return Fail(n, "softmax over axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) +
                       " tensor; vkqc computes it over the last axis only" +
                       (m_.Opset("") < 13 ? " (opset < 13 flattens from axis on)" : ""));
  VKQC_ASSIGN_OR_RETURN(int xt, Get(*x, n, false, channels_last ? Layout::Nhwc : Layout::Onnx));
  ir::Op op;
  op.type = ir::OpType::Softmax;
  return EmitFloat(n, *x, xt, std::move(op), channels_last);
}

Status Importer::Concat(const onnx::Node& n) {
  if (n.inputs.empty()) return Fail(n, "no inputs");
  std::vector<Val*> xs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    VKQC_ASSIGN_OR_RETURN(Val * v, In(n, i));
    if (!v->runtime()) return Fail(n, "input '" + n.inputs[i] + "' is a constant; vkqc concatenates computed tensors");
    xs.push_back(v);
  }
  const int64_t rank = int64_t(xs[0]->shape.size());
  int64_t axis = IntAttr(n, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Fail(n, "axis is outside the inputs' rank");
  std::vector<int64_t> shape = xs[0]->shape;
  shape[size_t(axis)] = 0;
  bool any_nhwc = false, all_int8 = true;
  for (Val* v : xs) {
    if (int64_t(v->shape.size()) != rank) return Fail(n, "inputs of different ranks");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && v->shape[size_t(d)] != xs[0]->shape[size_t(d)])
        return Fail(n, "inputs " + Dims(xs[0]->shape) + " and " + Dims(v->shape) + " differ outside axis " +
                           std::to_string(axis));
    shape[size_t(axis)] += v->shape[size_t(axis)];
    any_nhwc = any_nhwc || v->nhwc;
    all_int8 = all_int8 && Int8Of(*v) >= 0;
  }
  const Layout l = rank == 4 && (any_nhwc || axis == 1) ? Layout::Nhwc : Layout::Onnx;
  std::optional<ir::Quant> out_q;
  std::string out = n.outputs[0];
  if (all_int8) {
    out_q = QuantizedConsumer(n, nullptr);
    if (out_q) {
      out = pending_out_;
    } else {  // every input with the same parameters: concatenate the int8 tensors
      const auto& q0 = g_.tensors[size_t(Int8Of(*xs[0]))].quant;
      bool same = q0.has_value();
      for (Val* v : xs) {
        const auto& q = g_.tensors[size_t(Int8Of(*v))].quant;
        same = same && q && q->scales == q0->scales && q->zero_points == q0->zero_points;
      }
      if (same) {
        out_q = q0;
        out_q->scheme = ir::Scheme::Q8TO;
      }
    }
  }
  const bool int8 = out_q.has_value();
  ir::Op op;
  op.type = ir::OpType::Concat;
  op.concat.axis = int32_t(l == Layout::Nhwc ? NhwcAxis(int(axis)) : axis);
  if (out_q) op.concat.output_quant = *out_q;
  for (Val* v : xs) {
    VKQC_ASSIGN_OR_RETURN(int t, Get(*v, n, int8, l));
    op.inputs.push_back(t);
  }
  std::vector<int64_t> vshape = shape;
  if (l == Layout::Nhwc) vshape = {shape[0], shape[2], shape[3], shape[1]};
  const int yt = AddTensor(out, vshape, int8 ? ir::DType::I8 : ir::DType::F32, out_q);
  op.outputs = {yt};
  AddOp(std::move(op));
  Val y;
  y.shape = shape;
  y.nhwc = l == Layout::Nhwc;
  if (int8 && out == n.outputs[0]) y.qsrc = yt; else y.t = yt;
  if (out != n.outputs[0]) {
    vals_[out] = std::move(y);
    return {};
  }
  return SetOut(n, 0, std::move(y));
}

// Resize / Upsample, mode nearest, integer upscaling of H and W only, with a coordinate mapping
// that equals y = x[h / s] for integer s: asymmetric + floor, or half_pixel / pytorch_half_pixel
// with round_prefer_floor / round_prefer_ceil (no ties occur for integer factors).
Status Importer::Resize(const onnx::Node& n) {
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  if (x->shape.size() != 4) return Fail(n, "only 4-d NCHW inputs are supported; X is " + Dims(x->shape));
  const std::string mode = StrAttr(n, "mode", "nearest");
  if (mode != "nearest") return Fail(n, "mode '" + mode + "' is not supported (nearest only)");
  const bool upsample = n.op_type == "Upsample";
  const std::string ctm = upsample ? "asymmetric" : StrAttr(n, "coordinate_transformation_mode", "half_pixel");
  const std::string nm = upsample ? "floor" : StrAttr(n, "nearest_mode", "round_prefer_floor");
  const bool ok = (ctm == "asymmetric" && nm == "floor") ||
                  ((ctm == "half_pixel" || ctm == "pytorch_half_pixel") && (nm == "round_prefer_floor" || nm == "round_prefer_ceil"));
  if (!ok)
    return Fail(n, "coordinate_transformation_mode '" + ctm + "' with nearest_mode '" + nm +
                       "' does not map output pixel h to input pixel h / scale; supported: asymmetric + floor, "
                       "half_pixel or pytorch_half_pixel + round_prefer_floor or round_prefer_ceil");
  if (n.Find("axes") || IntAttr(n, "antialias", 0)) return Fail(n, "axes and antialias are not supported");
  std::vector<double> scales;
  const size_t scales_in = upsample || m_.Opset("") < 11 ? 1 : 2;
  if (HasIn(n, scales_in)) {
    VKQC_ASSIGN_OR_RETURN(auto s, ConstIn(n, scales_in, "scales"));
    for (int64_t i = 0; i < s->NumElements(); ++i) scales.push_back(s->At(i));
  }
  if (scales.empty() && !upsample && HasIn(n, 3)) {
    VKQC_ASSIGN_OR_RETURN(auto sz, ConstIn(n, 3, "sizes"));
    if (sz->NumElements() != 4) return Fail(n, "sizes must have 4 values");
    for (int i = 0; i < 4; ++i) {
      const int64_t want = int64_t(sz->At(i));
      if (want % x->shape[size_t(i)]) return Fail(n, "sizes are not integer multiples of the input's dimensions");
      scales.push_back(double(want / x->shape[size_t(i)]));
    }
  }
  if (scales.size() != 4) return Fail(n, "scales (or sizes) must have 4 values");
  if (scales[0] != 1 || scales[1] != 1) return Fail(n, "only H and W may be resized (N and C scales must be 1)");
  int32_t f[2];
  for (int i = 0; i < 2; ++i) {
    const double s = scales[size_t(2 + i)];
    if (s < 1 || s != std::floor(s) || s > 64)
      return Fail(n, "scale " + std::to_string(s) + ": only integer upscaling (1 to 64) is supported");
    f[i] = int32_t(s);
  }
  const bool int8 = Int8Of(*x) >= 0, raw = int8 && x->qsrc < 0;
  VKQC_ASSIGN_OR_RETURN(int xt, Get(*x, n, int8, Layout::Nhwc));
  const ir::Tensor xs = g_.tensors[size_t(xt)];
  ir::Op op;
  op.type = ir::OpType::ResizeNearest;
  op.resize.scale[0] = f[0];
  op.resize.scale[1] = f[1];
  op.inputs = {xt};
  Val y;
  y.shape = {x->shape[0], x->shape[1], x->shape[2] * f[0], x->shape[3] * f[1]};
  y.nhwc = true;
  const int yt = AddTensor(n.outputs[0], {xs.shape[0], xs.shape[1] * f[0], xs.shape[2] * f[1], xs.shape[3]}, xs.dtype, xs.quant);
  op.outputs = {yt};
  AddOp(std::move(op));
  if (int8 && !raw) y.qsrc = yt; else y.t = yt;
  return SetOut(n, 0, std::move(y));
}

Status Importer::ShapeOp(const onnx::Node& n) {
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  const std::vector<int64_t>& in = x->shape;
  const int64_t rank = int64_t(in.size()), count = Prod(in);
  std::vector<int64_t> out;
  const std::string& op = n.op_type;
  auto axes_of = [&](const char* what) -> Result<std::vector<int64_t>> {
    if (HasIn(n, 1)) {
      VKQC_ASSIGN_OR_RETURN(auto a, ConstIn(n, 1, what));
      std::vector<int64_t> v;
      for (int64_t i = 0; i < a->NumElements(); ++i) v.push_back(int64_t(a->At(i)));
      return v;
    }
    return IntsAttr(n, "axes", {});
  };
  if (op == "Flatten") {
    int64_t axis = IntAttr(n, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return Fail(n, "axis is outside the input's rank");
    out = {Prod(in, 0, size_t(axis)), Prod(in, size_t(axis))};
  } else if (op == "Reshape") {
    VKQC_ASSIGN_OR_RETURN(auto s, ConstIn(n, 1, "shape"));
    const bool allowzero = IntAttr(n, "allowzero", 0) != 0;
    int64_t known = 1, infer = -1;
    for (int64_t i = 0; i < s->NumElements(); ++i) {
      int64_t d = int64_t(s->At(i));
      if (d == 0 && !allowzero) {
        if (i >= rank) return Fail(n, "shape has 0 at index " + std::to_string(i) + " beyond the input's rank");
        d = in[size_t(i)];
      }
      if (d == -1) {
        if (infer >= 0) return Fail(n, "shape has more than one -1");
        infer = i;
      } else if (d < 0 || d > kMaxDim) {
        return Fail(n, "shape has a dimension " + std::to_string(d) + " outside 0.." + std::to_string(kMaxDim));
      } else {
        known = known > kMaxElements / std::max<int64_t>(d, 1) ? kMaxElements + 1 : known * d;
      }
      out.push_back(d);
    }
    if (infer >= 0) {
      if (known == 0 || count % known) return Fail(n, "-1 cannot be inferred for " + std::to_string(count) + " elements");
      out[size_t(infer)] = count / known;
    }
  } else if (op == "Squeeze") {
    VKQC_ASSIGN_OR_RETURN(auto axes, axes_of("axes"));
    for (int64_t& a : axes) a = a < 0 ? a + rank : a;
    for (int64_t d = 0; d < rank; ++d) {
      const bool listed = std::find(axes.begin(), axes.end(), d) != axes.end();
      if (listed && in[size_t(d)] != 1) return Fail(n, "axis " + std::to_string(d) + " has size " + std::to_string(in[size_t(d)]) + ", not 1");
      if (!(listed || (axes.empty() && in[size_t(d)] == 1))) out.push_back(in[size_t(d)]);
    }
  } else {  // Unsqueeze
    VKQC_ASSIGN_OR_RETURN(auto axes, axes_of("axes"));
    const int64_t orank = rank + int64_t(axes.size());
    for (int64_t& a : axes) a = a < 0 ? a + orank : a;
    size_t src = 0;
    for (int64_t d = 0; d < orank; ++d) {
      if (std::find(axes.begin(), axes.end(), d) != axes.end()) out.push_back(1);
      else if (src < in.size()) out.push_back(in[src++]);
      else return Fail(n, "axes are out of range");
    }
  }
  if (Prod(out) != count) return Fail(n, "the new shape " + Dims(out) + " has a different element count than " + Dims(in));
  if (!x->runtime()) {  // a constant: only the dims change
    Val y = *x;
    y.shape = out;
    if (y.c) {
      auto c = std::make_shared<HostTensor>(*y.c);
      c->dims = out;
      y.c = c;
    }
    if (y.cq) {
      auto cq = std::make_shared<ConstQuant>(*y.cq);
      if (cq->axis >= 0) return Fail(n, "reshaping a per-axis quantized constant is not supported");
      cq->dims = out;
      y.cq = cq;
    }
    return SetOut(n, 0, std::move(y));
  }
  // Row-major order of the ONNX layout; an NHWC value is the same order when C or H*W is 1.
  const bool same_order = !x->nhwc || in[1] == 1 || in[2] * in[3] == 1;
  const Layout l = same_order ? Layout::Any : Layout::Onnx;
  Val y;
  y.shape = out;
  if (x->qsrc >= 0 || (x->t >= 0 && IsI8(x->t))) {
    VKQC_ASSIGN_OR_RETURN(int t, Get(*x, n, true, l));
    const int r = Reshape(t, out, n.outputs[0]);
    if (x->qsrc >= 0) y.qsrc = r; else y.t = r;
  } else {
    VKQC_ASSIGN_OR_RETURN(int t, Get(*x, n, false, l));
    y.t = Reshape(t, out, n.outputs[0]);
  }
  return SetOut(n, 0, std::move(y));
}

Status Importer::TransposeOp(const onnx::Node& n) {
  VKQC_ASSIGN_OR_RETURN(Val * x, In(n, 0));
  if (!x->runtime()) return Fail(n, "transposing a constant is not supported");
  const int rank = int(x->shape.size());
  std::vector<int64_t> perm = IntsAttr(n, "perm", {});
  if (perm.empty())
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (int(perm.size()) != rank) return Fail(n, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < rank; ++i)
    if (sorted[size_t(i)] != i) return Fail(n, "perm is not a permutation");
  std::vector<int64_t> shape;
  for (int64_t p : perm) shape.push_back(x->shape[size_t(p)]);
  // The physical permutation: of the NHWC tensor when x is held as NHWC.
  std::vector<int32_t> phys;
  for (int64_t p : perm) phys.push_back(int32_t(x->nhwc ? NhwcAxis(int(p)) : p));
  const bool int8 = x->qsrc >= 0 || (x->t >= 0 && IsI8(x->t));
  VKQC_ASSIGN_OR_RETURN(int t, Get(*x, n, int8, Layout::Any));
  bool identity = true;
  for (int i = 0; i < rank; ++i) identity = identity && phys[size_t(i)] == i;
  Val y;
  y.shape = shape;
  const int r = identity ? Reshape(t, shape, n.outputs[0]) : Transpose(t, phys, n.outputs[0]);
  if (x->qsrc >= 0) y.qsrc = r; else y.t = r;
  return SetOut(n, 0, std::move(y));
}

}  // namespace vkqc::onnx_import
