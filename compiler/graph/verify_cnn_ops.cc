// Verification of the ops of convolutional networks: conv2d, add, avg/max_pool2d, the glue ops
// (concat, hard_sigmoid, resize_nearest, softmax) and mul's broadcasting. The semantics are in
// ir.h; sigmoid and hard_swish share the elementwise rule (verify.cc).
#include <cmath>

#include "compiler/graph/verify_ops.h"

namespace vkqc::verify {
namespace {

using ir::DType;
using ir::Graph;
using ir::Scheme;
using ir::Tensor;

constexpr int64_t kMaxDim = int64_t{1} << 56;  // as verify.cc's element bound
constexpr size_t kMaxBroadcastRank = 8;        // the broadcasting mul kernel's index dimensions

std::string SchemeText(const Tensor& t) {
  return t.quant ? ir::SchemeName(t.quant->scheme) : "none";
}

// Output size of a window op along one dimension, or <= 0 when no window fits.
int64_t WindowOut(int64_t in, int64_t pad_a, int64_t pad_b, int64_t k, int64_t stride,
                  int64_t dilation) {
  const int64_t num = in + pad_a + pad_b - dilation * (k - 1) - 1;
  return num < 0 ? 0 : num / stride + 1;
}

// "[a, b, ...]", appended piece by piece (`"[" + std::string` trips GCC 12's -Wrestrict).
std::string List(const int32_t* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += Num(v[i]);
  }
  return s += "]";
}
std::string Pair(const int32_t* v) { return List(v, 2); }
std::string Quad(const int32_t* v) { return List(v, 4); }

// stride, dilation >= 1 and padding >= 0 of a window op.
Status CheckWindowParams(const OpCtx& c, const int32_t* stride, const int32_t* padding,
                         const int32_t* dilation) {
  if (stride[0] < 1 || stride[1] < 1) {
    return c.Fail("stride " + Pair(stride) + " must be >= 1 in both dimensions");
  }
  if (dilation && (dilation[0] < 1 || dilation[1] < 1)) {
    return c.Fail("dilation " + Pair(dilation) + " must be >= 1 in both dimensions");
  }
  for (int i = 0; i < 4; ++i) {
    if (padding[i] < 0) {
      return c.Fail("padding " + Quad(padding) +
                    " (top, left, bottom, right) must be >= 0 everywhere");
    }
  }
  return {};
}

}  // namespace

// x of a window op: non-constant rank 4 NHWC.
Status CheckNhwcInput(const OpCtx& c, const Tensor& x) {
  VKQC_TRY(CheckNotConstantInput(c, x));
  if (x.shape.size() != 4) {
    return c.Fail("input " + Quote(x.name) + " has shape " + Dims(c.g, x.shape) + "; " +
                  ir::OpTypeName(c.op.type) + " takes rank 4 NHWC [N, H, W, C]");
  }
  return {};
}

// conv2d: see ir::Conv2dAttrs.
Status CheckConv2d(const OpCtx& c) {
  const Graph& g = c.g;
  const ir::Conv2dAttrs& a = c.op.conv2d;
  const Tensor& x = c.In(0);
  const Tensor& w = c.In(1);
  const Tensor& y = c.Out(0);
  const std::string xn = "input " + Quote(x.name);
  const std::string wn = "weight " + Quote(w.name);
  VKQC_TRY(CheckActivationKind(c, a.activation));
  VKQC_TRY(CheckNhwcInput(c, x));
  if (x.dtype == DType::I8) {
    VKQC_TRY(CheckPerTensorInt8Input(c, x));
    const ir::Quant& iq = a.input_quant;
    if (!(iq == ir::Quant{})) {
      return c.Fail(xn + " is already int8 (its own " + ir::SchemeName(x.quant->scheme) +
                    " quant is used), so input_quant must be absent, but it is " +
                    ir::SchemeName(iq.scheme) + "; remove input_quant");
    }
  } else if (x.dtype == DType::F32) {
    switch (a.input_quant.scheme) {
      case Scheme::None:
      case Scheme::Float:
        break;
      case Scheme::Q8TA:
        VKQC_TRY(CheckPerTensorQuant(c, "input_quant q8ta", a.input_quant));
        break;
      default:
        return c.Fail(std::string("input_quant scheme ") + ir::SchemeName(a.input_quant.scheme) +
                      " is not supported by conv2d; use q8ta (static per tensor) or float "
                      "(weight-only)");
    }
  } else {
    return c.Fail(xn + " is " + ir::DTypeName(x.dtype) +
                  "; it must be f32, or i8 with a per-tensor q8ta/q8to quant");
  }
  if (!w.is_constant()) return c.Fail(wn + " must be a constant tensor (with data)");
  const Scheme ws = w.quant ? w.quant->scheme : Scheme::None;
  if (ws != Scheme::Q8CSW) {
    return c.Fail(wn + " has " +
                  (ws == Scheme::None ? std::string("no quantization")
                                      : std::string("scheme ") + ir::SchemeName(ws)) +
                  "; conv2d needs i8 q8csw weights (one scale per output channel, symmetric)");
  }
  if (w.dtype != DType::I8) {
    return c.Fail(wn + " is " + ir::DTypeName(w.dtype) +
                  "; q8csw weights must be i8 (u8 weights are converted by the importer)");
  }
  VKQC_TRY(CheckWindowParams(c, a.stride, a.padding, a.dilation));
  const int64_t cin = x.shape[3];
  if (a.groups < 1 || cin % a.groups != 0) {
    return c.Fail("groups " + Num(a.groups) + " must be >= 1 and divide the " + Num(cin) +
                  " input channels of " + Quote(x.name) +
                  " (depthwise: groups == input channels == output channels)");
  }
  const int64_t cin_g = cin / a.groups;
  if (w.shape.size() != 4 || w.shape[3] != cin_g) {
    return c.Fail(wn + " has shape " + Dims(g, w.shape) + " but " + xn + " " + Dims(g, x.shape) +
                  " with groups " + Num(a.groups) + " needs [Cout, KH, KW, " + Num(cin_g) +
                  "] (Cin / groups = " + Num(cin_g) + " in the last dimension)");
  }
  const int64_t cout = w.shape[0];
  const int64_t kh = w.shape[1];
  const int64_t kw = w.shape[2];
  if (cout % a.groups != 0) {
    return c.Fail("groups " + Num(a.groups) + " must divide the " + Num(cout) +
                  " output channels of " + wn);
  }
  VKQC_TRY(CheckWeight(c, w, cout, kh * kw * cin_g));
  if (c.op.inputs.size() == 3) {
    const Tensor& b = c.In(2);
    if (!b.is_constant() || b.dtype != DType::F32 || b.shape != std::vector<int64_t>{cout}) {
      return c.Fail("bias " + Quote(b.name) + " must be a constant f32 [" + Num(cout) +
                    "], but is " + (b.is_constant() ? "a constant " : "a non-constant ") +
                    ir::DTypeName(b.dtype) + " " + Dims(g, b.shape));
    }
  }
  const int64_t oh = WindowOut(x.shape[1], a.padding[0], a.padding[2], kh, a.stride[0],
                               a.dilation[0]);
  const int64_t ow = WindowOut(x.shape[2], a.padding[1], a.padding[3], kw, a.stride[1],
                               a.dilation[1]);
  if (oh < 1 || ow < 1) {
    return c.Fail("the " + Num(kh) + "x" + Num(kw) + " kernel of " + wn + " with dilation " +
                  Pair(a.dilation) + " does not fit " + xn + " " + Dims(g, x.shape) +
                  " padded by " + Quad(a.padding) + " (top, left, bottom, right): the output "
                  "would be " + Num(oh) + "x" + Num(ow) + "; pad the input or use a smaller "
                  "kernel or dilation");
  }
  return CheckOutputQuant(c, y, a.output_quant, {x.shape[0], oh, ow, cout});
}

// add: see ir::OpType::Add.
Status CheckAdd(const OpCtx& c) {
  const Graph& g = c.g;
  const ir::AddAttrs& a = c.op.add;
  const Tensor& x0 = c.In(0);
  const Tensor& x1 = c.In(1);
  const Tensor& y = c.Out(0);
  VKQC_TRY(CheckActivationKind(c, a.activation));
  for (const Tensor* t : {&x0, &x1}) {
    VKQC_TRY(CheckNotConstantInput(c, *t));
    if (t->dtype != DType::F32 && t->dtype != DType::I8) {
      return c.Fail("input " + Quote(t->name) + " is " + ir::DTypeName(t->dtype) +
                    "; add takes f32, or i8 with a per-tensor q8ta/q8to quant");
    }
  }
  if (x0.shape != x1.shape) {
    return c.Fail("inputs " + Quote(x0.name) + " " + Dims(g, x0.shape) + " and " +
                  Quote(x1.name) + " " + Dims(g, x1.shape) +
                  " differ in shape; add needs identical shapes (no broadcasting)");
  }
  if (x0.dtype != x1.dtype) {
    return c.Fail("inputs " + Quote(x0.name) + " (" + ir::DTypeName(x0.dtype) + ") and " +
                  Quote(x1.name) + " (" + ir::DTypeName(x1.dtype) +
                  ") differ in dtype; add takes two f32 or two i8 inputs (dequantize or "
                  "quantize one of them)");
  }
  if (x0.dtype == DType::I8) {
    VKQC_TRY(CheckPerTensorInt8Input(c, x0));
    VKQC_TRY(CheckPerTensorInt8Input(c, x1));
    if (a.output_quant.scheme != Scheme::Q8TO) {
      return c.Fail("int8 inputs " + Quote(x0.name) + " and " + Quote(x1.name) +
                    " need output_quant q8to (the sum is requantized to int8), but it is " +
                    ir::SchemeName(a.output_quant.scheme) +
                    "; set output_quant q8to with a scale and zero point");
    }
  } else if (a.output_quant.scheme != Scheme::None) {
    return c.Fail("output_quant " + std::string(ir::SchemeName(a.output_quant.scheme)) +
                  " needs int8 inputs, but " + Quote(x0.name) + " and " + Quote(x1.name) +
                  " are f32; remove output_quant (f32 + f32 gives f32), or quantize the inputs");
  }
  return CheckOutputQuant(c, y, a.output_quant, x0.shape);
}

// avg_pool2d and max_pool2d: see ir::Pool2dAttrs and ir::OpType::MaxPool2d.
Status CheckPool2d(const OpCtx& c) {
  const Graph& g = c.g;
  const ir::Pool2dAttrs& a = c.op.pool;
  const Tensor& x = c.In(0);
  const Tensor& y = c.Out(0);
  const std::string xn = "input " + Quote(x.name);
  const std::string what = c.op.type == ir::OpType::MaxPool2d ? "maximum" : "average";
  VKQC_TRY(CheckNhwcInput(c, x));
  if (x.dtype == DType::I8) {
    VKQC_TRY(CheckPerTensorInt8Input(c, x));
    if (a.output_quant.scheme != Scheme::Q8TO) {
      return c.Fail(xn + " is int8, so output_quant must be q8to (the " + what + " is requantized to "
                    "int8), but it is " + std::string(ir::SchemeName(a.output_quant.scheme)) +
                    "; set output_quant q8to with a scale and zero point");
    }
  } else if (x.dtype == DType::F32) {
    if (a.output_quant.scheme != Scheme::None) {
      return c.Fail("output_quant " + std::string(ir::SchemeName(a.output_quant.scheme)) +
                    " needs an int8 input, but " + xn +
                    " is f32; remove output_quant (the f32 " + what + " is f32)");
    }
  } else {
    return c.Fail(xn + " is " + ir::DTypeName(x.dtype) + "; " + ir::OpTypeName(c.op.type) +
                  " takes f32, or i8 with a per-tensor q8ta/q8to quant");
  }
  const int64_t n = x.shape[0];
  const int64_t ch = x.shape[3];
  if (a.global) {
    const ir::Pool2dAttrs dflt;
    if (a.kernel[0] != 0 || a.kernel[1] != 0 || a.stride[0] != 1 || a.stride[1] != 1 ||
        !std::equal(a.padding, a.padding + 4, dflt.padding)) {
      return c.Fail("is global (the kernel is the whole " + Num(x.shape[1]) + "x" +
                    Num(x.shape[2]) + " input) but also sets kernel " + Pair(a.kernel) +
                    ", stride " + Pair(a.stride) + " or padding " + Quad(a.padding) +
                    "; remove them, or set global false");
    }
    // [N, 1, 1, C], or [N, C] with the unit dimensions dropped (for a classifier linear).
    std::vector<int64_t> want = {n, 1, 1, ch};
    if (y.shape.size() == 2) want = {n, ch};
    return CheckOutputQuant(c, y, a.output_quant, want);
  }
  if (a.kernel[0] < 1 || a.kernel[1] < 1) {
    return c.Fail("kernel " + Pair(a.kernel) +
                  " is missing or not >= 1; give kernel [kh, kw], or set global for a global " + what + " pool");
  }
  VKQC_TRY(CheckWindowParams(c, a.stride, a.padding, nullptr));
  for (int i = 0; i < 4; ++i) {
    if (a.padding[i] >= a.kernel[i % 2]) {
      return c.Fail("padding " + Quad(a.padding) + " (top, left, bottom, right) must be smaller "
                    "than the kernel " + Pair(a.kernel) +
                    " so that every window holds a real tap (padded taps are not counted)");
    }
  }
  const int64_t oh = WindowOut(x.shape[1], a.padding[0], a.padding[2], a.kernel[0], a.stride[0], 1);
  const int64_t ow = WindowOut(x.shape[2], a.padding[1], a.padding[3], a.kernel[1], a.stride[1], 1);
  if (oh < 1 || ow < 1) {
    return c.Fail("kernel " + Pair(a.kernel) + " does not fit " + xn + " " + Dims(g, x.shape) +
                  " padded by " + Quad(a.padding) + ": the output would be " + Num(oh) + "x" +
                  Num(ow) + "; use a smaller kernel, or global");
  }
  return CheckOutputQuant(c, y, a.output_quant, {n, oh, ow, ch});
}

Status CheckBroadcast(const OpCtx& c, const Tensor& a, const Tensor& b) {
  const std::string both = "inputs " + Quote(a.name) + " " + Dims(c.g, a.shape) + " and " + Quote(b.name) + " " +
                           Dims(c.g, b.shape) + " differ in shape";
  const std::string rule = "; mul needs identical shapes, or b broadcastable to a's shape (numpy rules: rank(b) <= "
                           "rank(a), each dimension of b 1 or a's)";
  if (b.shape.size() > a.shape.size())
    return c.Fail(both + " and " + Quote(b.name) + " has more dimensions than " + Quote(a.name) + rule);
  if (a.shape.size() > kMaxBroadcastRank)
    return c.Fail(both + "; a broadcasting mul takes a of rank <= " + std::to_string(kMaxBroadcastRank) +
                  " in this version (give identical shapes, or reshape to fewer dimensions)");
  const size_t off = a.shape.size() - b.shape.size();
  for (size_t i = 0; i < b.shape.size(); ++i) {
    const int64_t ad = a.shape[off + i], bd = b.shape[i];
    if (bd == ad || bd == 1) continue;
    const auto dim = [&](int64_t d) { return d == ir::kSymbolicDim ? c.g.symbolic_dim : std::to_string(d); };
    return c.Fail(both + ": dimension " + std::to_string(i) + " of " + Quote(b.name) + " is " + dim(bd) +
                  ", neither 1 nor " + dim(ad) + " (the matching dimension of " + Quote(a.name) + ")" + rule);
  }
  return {};
}

// concat: see ir::OpType::Concat and ir::ConcatAttrs.
Status CheckConcat(const OpCtx& c) {
  const ir::ConcatAttrs& a = c.op.concat;
  const Tensor& x0 = c.In(0);
  const Tensor& y = c.Out(0);
  const int64_t rank = int64_t(x0.shape.size());
  if (rank == 0)
    return c.Fail("input " + Quote(x0.name) + " is a scalar (rank 0); concat takes tensors of rank >= 1");
  if (a.axis < -rank || a.axis >= rank)
    return c.Fail("axis " + Num(a.axis) + " is outside the inputs' " + Num(rank) + " dimensions; use " +
                  Num(-rank) + " to " + Num(rank - 1) + " (negative counts from the end)");
  const size_t ax = size_t(a.axis < 0 ? a.axis + rank : a.axis);
  if (x0.dtype != DType::F32 && x0.dtype != DType::I8)
    return c.Fail("input " + Quote(x0.name) + " is " + ir::DTypeName(x0.dtype) +
                  "; concat takes f32, or i8 with a per-tensor q8ta/q8to quant");
  int64_t total = 0;
  for (size_t i = 0; i < c.op.inputs.size(); ++i) {
    const Tensor& t = c.In(i);
    const std::string tn = "input " + Quote(t.name);
    VKQC_TRY(CheckNotConstantInput(c, t));
    if (t.dtype != x0.dtype)
      return c.Fail("inputs " + Quote(x0.name) + " (" + ir::DTypeName(x0.dtype) + ") and " + Quote(t.name) + " (" +
                    ir::DTypeName(t.dtype) + ") differ in dtype; concat takes all f32 or all i8 inputs (dequantize "
                    "or quantize some of them)");
    if (int64_t(t.shape.size()) != rank)
      return c.Fail(tn + " " + Dims(c.g, t.shape) + " has rank " + Num(int64_t(t.shape.size())) + " but " +
                    Quote(x0.name) + " " + Dims(c.g, x0.shape) + " has rank " + Num(rank) +
                    "; concat takes inputs of the same rank");
    for (size_t d = 0; d < t.shape.size(); ++d)
      if (d != ax && t.shape[d] != x0.shape[d])
        return c.Fail("inputs " + Quote(x0.name) + " " + Dims(c.g, x0.shape) + " and " + Quote(t.name) + " " +
                      Dims(c.g, t.shape) + " differ in dimension " + Num(int64_t(d)) +
                      "; concat takes inputs whose dimensions match except along axis " + Num(int64_t(ax)));
    if (t.shape[ax] == ir::kSymbolicDim)
      return c.Fail(tn + " " + Dims(c.g, t.shape) + " has the symbolic dimension " + Quote(c.g.symbolic_dim) +
                    " on the concat axis " + Num(int64_t(ax)) +
                    "; concat along the symbolic dimension is not supported (concatenate along another axis)");
    if (t.shape[ax] > kMaxDim - total) return c.Fail("the concatenated dimension is too large");
    total += t.shape[ax];
    if (t.dtype == DType::I8) VKQC_TRY(CheckPerTensorInt8Input(c, t));
  }
  if (x0.dtype == DType::I8 && a.output_quant.scheme != Scheme::Q8TO)
    return c.Fail("int8 inputs need output_quant q8to (each input is requantized to the output's scale and zero "
                  "point), but it is " + std::string(ir::SchemeName(a.output_quant.scheme)) +
                  "; set output_quant q8to with a scale and zero point");
  if (x0.dtype == DType::F32 && a.output_quant.scheme != Scheme::None)
    return c.Fail("output_quant " + std::string(ir::SchemeName(a.output_quant.scheme)) +
                  " needs int8 inputs, but the inputs are f32; remove output_quant (f32 inputs give f32)");
  std::vector<int64_t> want = x0.shape;
  want[ax] = total;
  return CheckOutputQuant(c, y, a.output_quant, want);
}

Status CheckHardSigmoid(const OpCtx& c) {
  const ir::UnaryAttrs& a = c.op.unary;
  if (!std::isfinite(a.alpha) || !std::isfinite(a.beta))
    return c.Fail("alpha " + std::to_string(a.alpha) + " and beta " + std::to_string(a.beta) + " must be finite");
  return CheckElementwiseOp(c);
}

// resize_nearest: see ir::OpType::ResizeNearest.
Status CheckResizeNearest(const OpCtx& c) {
  const ir::ResizeAttrs& a = c.op.resize;
  const Tensor& x = c.In(0);
  const Tensor& y = c.Out(0);
  const std::string xn = "input " + Quote(x.name), yn = "output " + Quote(y.name);
  VKQC_TRY(CheckNhwcInput(c, x));
  if (a.scale[0] < 1 || a.scale[1] < 1)
    return c.Fail("scale [" + Num(a.scale[0]) + ", " + Num(a.scale[1]) +
                  "] must be >= 1 in both dimensions (integer upsampling factors [h, w])");
  if (x.dtype == DType::I8) {
    VKQC_TRY(CheckPerTensorInt8Input(c, x));
  } else if (x.dtype != DType::F32) {
    return c.Fail(xn + " is " + ir::DTypeName(x.dtype) +
                  "; resize_nearest takes f32, or i8 with a per-tensor q8ta/q8to quant");
  }
  if (x.shape[1] > kMaxDim / a.scale[0] || x.shape[2] > kMaxDim / a.scale[1])
    return c.Fail(xn + " " + Dims(c.g, x.shape) + " resized by [" + Num(a.scale[0]) + ", " + Num(a.scale[1]) +
                  "] is too large");
  const std::vector<int64_t> want{x.shape[0], x.shape[1] * a.scale[0], x.shape[2] * a.scale[1], x.shape[3]};
  if (y.dtype != x.dtype || y.shape != want)
    return c.Fail(yn + " is " + ir::DTypeName(y.dtype) + " " + Dims(c.g, y.shape) + "; it must be " +
                  ir::DTypeName(x.dtype) + " " + Dims(c.g, want) + " (" + xn + " " + Dims(c.g, x.shape) +
                  " with H and W multiplied by the scale)");
  if (x.dtype == DType::I8) {
    const ir::Quant& xq = *x.quant;
    const bool same = y.quant && (y.quant->scheme == Scheme::Q8TA || y.quant->scheme == Scheme::Q8TO) &&
                      y.quant->scales == xq.scales && y.quant->zero_points == xq.zero_points;
    if (!same)
      return c.Fail(yn + " has quant " + SchemeText(y) + (y.quant && y.quant->scales.size() == 1
                                                           ? " scale " + std::to_string(y.quant->scales[0])
                                                           : std::string()) +
                    ", but resize_nearest copies int8 values, so it must carry the quant of " + xn + " (" +
                    ir::SchemeName(xq.scheme) + " scale " + std::to_string(xq.scales[0]) + ", zero point " +
                    std::to_string(xq.zero_points[0]) + ")");
  }
  return {};
}

// softmax: f32 [.., C] -> f32, same shape, over the last axis.
Status CheckSoftmax(const OpCtx& c) {
  const Tensor& x = c.In(0);
  const Tensor& y = c.Out(0);
  VKQC_TRY(CheckNotConstantInput(c, x));
  if (x.dtype != DType::F32)
    return c.Fail("input " + Quote(x.name) + " is " + ir::DTypeName(x.dtype) +
                  "; softmax takes f32 (dequantize first)");
  if (x.shape.empty())
    return c.Fail("input " + Quote(x.name) + " is a scalar (rank 0); softmax runs over the last axis of a tensor "
                  "of rank >= 1");
  if (y.dtype != DType::F32 || y.shape != x.shape)
    return c.Fail("output " + Quote(y.name) + " is " + ir::DTypeName(y.dtype) + " " + Dims(c.g, y.shape) +
                  "; it must be f32 " + Dims(c.g, x.shape) + " like its input " + Quote(x.name));
  return {};
}

}  // namespace vkqc::verify
