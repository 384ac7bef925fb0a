// Verification of quantize and dequantize (the conversions between f32/f16 and i8/i32 with a
// per-tensor, per-channel or per-token quant). Semantics in ir.h and DESIGN 4.
#include <cmath>

#include "compiler/graph/verify_ops.h"

namespace vkqc::verify {
namespace {

using ir::DType;
using ir::Graph;
using ir::Scheme;
using ir::Tensor;

// The quant of the integer side of a quantize/dequantize: i8 or i32 (zero point 0), per tensor
// (q8ta/q8to), per channel along `axis` (q8pc) or per token (dq8ca, i8 rank 2 only).
Status CheckConvertQuant(const OpCtx& c, const std::string& tn, const Tensor& t) {
  const std::string who = ir::OpTypeName(c.op.type);
  const Graph& g = c.g;
  const Scheme qs = t.quant ? t.quant->scheme : Scheme::None;
  const bool i32 = t.dtype == DType::I32;
  if (qs == Scheme::Q8TA || qs == Scheme::Q8TO) {
    if (!i32) return CheckPerTensorQuant(c, tn + " quant " + ir::SchemeName(qs), *t.quant);
    const ir::Quant& q = *t.quant;
    if (q.scales.size() != 1 || !std::isfinite(q.scales[0]) || q.scales[0] <= 0.0f) {
      return c.Fail(tn + " quant " + ir::SchemeName(qs) + " needs exactly one finite scale > 0");
    }
    for (int32_t zp : q.zero_points) {
      if (zp != 0) return c.Fail(tn + " is i32 with zero point " + std::to_string(zp) + "; int32 quantization is symmetric (zero point 0)");
    }
    return {};
  }
  if (qs == Scheme::Q8PC) {
    const ir::Quant& q = *t.quant;
    if (q.axis < 0 || size_t(q.axis) >= t.shape.size()) {
      return c.Fail(tn + " quant q8pc axis " + std::to_string(q.axis) + " is outside the tensor's rank " +
                    std::to_string(t.shape.size()));
    }
    const int64_t ch = t.shape[size_t(q.axis)];
    if (ch == ir::kSymbolicDim) {
      return c.Fail(tn + " quant q8pc axis " + std::to_string(q.axis) + " is the symbolic dimension; per-channel "
                    "parameters need a fixed channel count");
    }
    if (int64_t(q.scales.size()) != ch || (!q.zero_points.empty() && q.zero_points.size() != q.scales.size())) {
      return c.Fail(tn + " " + Dims(g, t.shape) + " quant q8pc along axis " + std::to_string(q.axis) + " needs " +
                    std::to_string(ch) + " scales and 0 or " + std::to_string(ch) + " zero points, got " +
                    std::to_string(q.scales.size()) + " and " + std::to_string(q.zero_points.size()));
    }
    for (size_t i = 0; i < q.scales.size(); ++i) {
      if (!std::isfinite(q.scales[i]) || q.scales[i] <= 0.0f) {
        return c.Fail(tn + " quant q8pc scale[" + std::to_string(i) + "] is " + std::to_string(q.scales[i]) +
                      "; it must be finite and > 0");
      }
    }
    for (size_t i = 0; i < q.zero_points.size(); ++i) {
      const int32_t zp = q.zero_points[i];
      if (i32 ? zp != 0 : (zp < -128 || zp > 127)) {
        return c.Fail(tn + " quant q8pc zero_point[" + std::to_string(i) + "] is " + std::to_string(zp) +
                      (i32 ? "; int32 quantization is symmetric (zero point 0)"
                           : "; it must be in int8 [-128, 127] (uint8 parameters are converted at import)"));
      }
    }
    return {};
  }
  if (qs == Scheme::DQ8CA && !i32) return {};
  return c.Fail(tn + " is " + ir::DTypeName(t.dtype) + " " +
                (qs == Scheme::None ? std::string("without quantization")
                                    : std::string("with quant ") + ir::SchemeName(qs)) +
                "; " + who + " needs q8ta/q8to (per tensor), q8pc (per channel along axis)" +
                (i32 ? "" : " or dq8ca (per token)") + " to know the scale and zero point");
}

}  // namespace

// dequantize: i8 or i32 with its quant -> f32 or f16 of the same shape.
Status CheckDequantize(const OpCtx& c) {
  const Graph& g = c.g;
  const Tensor& q = c.In(0);
  const Tensor& y = c.Out(0);
  const std::string qn = "input " + Quote(q.name);
  VKQC_TRY(CheckNotConstantInput(c, q));
  if (q.dtype != DType::I8 && q.dtype != DType::I32) {
    return c.Fail(qn + " is " + ir::DTypeName(q.dtype) +
                  "; dequantize takes an i8 or i32 tensor with its quant (q8ta/q8to per tensor, q8pc "
                  "per channel, or dq8ca per token)" +
                  (q.dtype == DType::F32 || q.dtype == DType::F16 ? "; the tensor is already float, so drop the dequantize"
                                                                 : ""));
  }
  VKQC_TRY(CheckConvertQuant(c, qn, q));
  if ((y.dtype != DType::F32 && y.dtype != DType::F16) || y.shape != q.shape) {
    return c.Fail("output " + Quote(y.name) + " is " + ir::DTypeName(y.dtype) + " " +
                  Dims(g, y.shape) + "; it must be f32 or f16 " + Dims(g, q.shape) + " like its input " +
                  Quote(q.name));
  }
  return {};
}

// Elementwise f32 ops (mul, silu, sigmoid, hard_sigmoid, hard_swish): every input and the output
// f32 with the shape of input 0 (the leading dimension may be symbolic and must match), except
// that mul's b may broadcast to a's shape (verify::CheckBroadcast); constant inputs are refused.
// quantize: f32 or f16 (non-constant) -> i8 or i32 of the same shape; the output tensor's quant
// is the scheme: q8ta (static per tensor), q8pc (static per channel along axis) or dq8ca (per
// token, f32 [M, K] -> i8, parameters computed at run time).
Status CheckQuantize(const OpCtx& c) {
  const Graph& g = c.g;
  const Tensor& x = c.In(0);
  const Tensor& q = c.Out(0);
  const std::string xn = "input " + Quote(x.name);
  const std::string qn = "output " + Quote(q.name);
  if (x.is_constant()) {
    return c.Fail(xn + " is a constant; quantize takes a computed f32 tensor (store a constant "
                  "already quantized, with its quant, instead)");
  }
  if (x.dtype != DType::F32 && x.dtype != DType::F16) {
    return c.Fail(xn + " is " + ir::DTypeName(x.dtype) + "; quantize takes f32 or f16");
  }
  const Scheme qs = q.quant ? q.quant->scheme : Scheme::None;
  if (qs == Scheme::DQ8CA && x.shape.size() != 2) {
    return c.Fail(xn + " has shape " + Dims(g, x.shape) +
                  "; per-token (dq8ca) quantize takes rank 2 [M, K] (rows are tokens); "
                  "per-tensor q8ta takes any shape");
  }
  if (q.dtype != DType::I8 && q.dtype != DType::I32) {
    return c.Fail(qn + " is " + ir::DTypeName(q.dtype) + "; quantize writes i8 (u8 is converted to i8 at import) or i32");
  }
  if (qs == Scheme::DQ8CA && x.dtype != DType::F32) {
    return c.Fail(xn + " is " + ir::DTypeName(x.dtype) + "; per-token (dq8ca) quantize takes f32 (use q8ta or q8pc "
                  "for other inputs)");
  }
  if (qs == Scheme::DQ8CA && q.dtype != DType::I8) {
    return c.Fail(qn + " is " + ir::DTypeName(q.dtype) + "; per-token (dq8ca) quantize writes i8");
  }
  if (q.shape != x.shape) {
    return c.Fail(qn + " has shape " + Dims(g, q.shape) + " but " + xn + " has shape " +
                  Dims(g, x.shape) + "; quantize keeps the shape");
  }
  switch (qs) {
    case Scheme::Q8TA:
    case Scheme::Q8PC:
      return CheckConvertQuant(c, qn, q);
    case Scheme::DQ8CA:
      if (!q.quant->scales.empty() || !q.quant->zero_points.empty()) {
        return c.Fail(qn + " quant dq8ca has " + std::to_string(q.quant->scales.size()) +
                      " scales and " + std::to_string(q.quant->zero_points.size()) +
                      " zero points, but per-token parameters are computed at run time, so it "
                      "takes none; remove them, or use q8ta for fixed parameters");
      }
      return {};
    case Scheme::None:
      return c.Fail(qn + " has no quant; its quant says how to quantize: q8ta (scale, zero "
                    "point), q8pc (per channel) or dq8ca (per token)");
    default:
      return c.Fail(qn + " has quant " + ir::SchemeName(qs) +
                    ", which quantize cannot write; use q8ta (static per tensor), q8pc (static per "
                    "channel) or dq8ca (dynamic per token)");
  }
}

}  // namespace vkqc::verify
