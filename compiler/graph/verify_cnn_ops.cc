// Verification of the glue ops of convolutional networks (concat, hard_sigmoid, resize_nearest,
// softmax) and of mul's broadcasting. The semantics are in ir.h; max_pool2d shares avg_pool2d's
// rule (verify.cc), sigmoid and hard_swish the elementwise one.
#include <cmath>

#include "compiler/graph/verify_ops.h"

namespace vkqc::verify {
namespace {

using ir::DType;
using ir::Scheme;
using ir::Tensor;

constexpr int64_t kMaxDim = int64_t{1} << 56;  // as verify.cc's element bound
constexpr size_t kMaxBroadcastRank = 8;        // the broadcasting mul kernel's index dimensions

std::string SchemeText(const Tensor& t) {
  return t.quant ? ir::SchemeName(t.quant->scheme) : "none";
}

}  // namespace

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
