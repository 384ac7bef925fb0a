#include "compiler/kernels/quantize/lower.h"

#include "compiler/emit/bundle_plan.h"
#include "compiler/passes/fold_quant.h"

namespace vkqc::quantize {
namespace {

using kernels::Bind;
using kernels::QScale;
using kernels::QZero;

// quantize/dequantize ops that run through convert.comp: f16 or i32 on either side, per-channel
// parameters, or a requantize the fold pass left. The f32 <-> int8 per-tensor and per-token
// ones keep their kernels.
bool NeedsConvert(const kernels::CompileView& ctx, size_t i) {
  const ir::Op& op = ctx.op(i);
  if (ctx.fold().requant_source[i] >= 0) return true;
  const ir::Tensor& in = ctx.tensor(op.inputs[0]);
  const ir::Tensor& out = ctx.tensor(op.outputs[0]);
  const ir::Tensor& it = op.type == ir::OpType::Quantize ? out : in;
  return in.dtype == ir::DType::F16 || out.dtype == ir::DType::F16 || it.dtype == ir::DType::I32 ||
         it.quant->scheme == ir::Scheme::Q8PC;
}

// The quantized side's tensor (the output of a quantize, the input of a dequantize).
const ir::Tensor& QuantizedSide(const kernels::CompileView& ctx, const ir::Op& op) {
  return ctx.tensor(op.type == ir::OpType::Quantize ? op.outputs[0] : op.inputs[0]);
}

// Per-tensor or per-channel parameters of convert.comp (+ the source's for a requantize).
Status Pack(kernels::PackContext& ctx, size_t i) {
  if (!ctx.fold().folded[i].empty() || !NeedsConvert(ctx, i)) return {};
  const ir::Tensor& it = QuantizedSide(ctx, ctx.op(i));
  if (it.quant->scheme == ir::Scheme::DQ8CA) return {};  // per-row parameters live in the arena
  std::vector<uint8_t> region = conv::PackConvertParams(*it.quant);
  if (const int src = ctx.fold().requant_source[i]; src >= 0) {
    const std::vector<uint8_t> in = conv::PackConvertParams(*ctx.tensor(src).quant);
    region.insert(region.end(), in.begin(), in.end());
  }
  return ctx.AddConstants(i, region);
}

// Elements between consecutive channels of a per-channel tensor (1 for per tensor).
int64_t ChannelInner(const kernels::LowerContext& ctx, const ir::Tensor& t) {
  if (!t.quant || t.quant->scheme != ir::Scheme::Q8PC) return 1;
  int64_t inner = 1;
  for (size_t d = size_t(t.quant->axis) + 1; d < t.shape.size(); ++d) inner *= ctx.Dim(t.shape[d]);
  return inner;
}

Status LowerRequantize(kernels::LowerContext& ctx, size_t i, int src, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& out = ctx.tensor(op.outputs[0]);
  const int64_t count = out.NumElements(ctx.tokens()), k = out.shape.back();
  ctx.Dispatch(conv::ConvertDispatch(ir::DType::I8, ir::DType::I8, count, k, 1, 1, false, ctx.profile()),
               {ctx.Read(src), ctx.Constants(i), ctx.Write(op.outputs[0])});
  pl.variant = "requantize_i8_i8";
  pl.reason = "q' = clamp(roundEven(s_in * (q - zp_in) * inv_scale) + zp), replaces a dequantize -> quantize "
              "pair; remains: " + ctx.fold().remains[i];
  pl.detail = std::to_string(count) + " values";
  pl.integer_path = true;
  return {};
}

Status LowerConvert(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const bool quant = op.type == ir::OpType::Quantize;
  const ir::Tensor& in = ctx.tensor(op.inputs[0]);
  const ir::Tensor& out = ctx.tensor(op.outputs[0]);
  const ir::Tensor& it = QuantizedSide(ctx, op);
  const int64_t count = in.NumElements(ctx.tokens()), k = in.shape.back();
  const bool per_row = it.quant->scheme == ir::Scheme::DQ8CA;
  const bool per_channel = it.quant->scheme == ir::Scheme::Q8PC;
  const int64_t channels = per_channel ? it.shape[size_t(it.quant->axis)] : 1;
  std::vector<Bind> binds{ctx.Read(op.inputs[0])};
  binds.push_back(per_row ? ctx.RowParams(op.inputs[0], false) : ctx.Constants(i));
  binds.push_back(ctx.Write(op.outputs[0]));
  ctx.Dispatch(conv::ConvertDispatch(in.dtype, out.dtype, count, k, ChannelInner(ctx, it), channels, per_row,
                                     ctx.profile()),
               binds);
  pl.variant = std::string(quant ? "quantize_" : "dequantize_") + ir::DTypeName(in.dtype) + "_" +
               ir::DTypeName(out.dtype) + "_" + (per_row ? "per_token" : per_channel ? "per_channel" : "per_tensor");
  pl.reason = quant ? "q = clamp(roundEven(x * inv_scale) + zp)" : "y = scale * (q - zp)";
  if (out.dtype == ir::DType::F16) pl.reason += ", rounded to f16 (nearest even)";
  pl.reason += "; remains: " + ctx.fold().remains[i];
  pl.detail = std::to_string(count) + " values" +
              (per_channel ? ", " + std::to_string(channels) + " channels along axis " + std::to_string(it.quant->axis)
                           : std::string());
  pl.weight_bytes = ctx.ConstantBytes(i);
  return {};
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  if (const int src = ctx.fold().requant_source[i]; src >= 0) return LowerRequantize(ctx, i, src, pl);
  if (NeedsConvert(ctx, i)) return LowerConvert(ctx, i, pl);
  const ir::Op& op = ctx.op(i);
  if (op.type == ir::OpType::Quantize) {
    const ir::Tensor& q = ctx.tensor(op.outputs[0]);
    const int64_t k = q.shape.back(), m = q.NumElements(ctx.tokens()) / k;
    const ir::Scheme scheme = q.quant->scheme;
    const bool per_row = scheme == ir::Scheme::DQ8CA;
    const float scale = per_row ? 1.0f : QScale(*q.quant);
    const int32_t zp = per_row ? 0 : QZero(*q.quant);
    std::vector<Bind> binds{ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])};
    if (per_row) binds.push_back(ctx.RowParams(op.outputs[0], true));
    ctx.Dispatch(linear::QuantizeDispatch(scheme, m, k, scale, zp, ctx.profile()), binds);
    pl.variant = per_row ? "quantize_dq8ca" : "quantize_q8ta";
    pl.reason = std::string(per_row ? "per-token scale and zero point computed on the GPU, then int8"
                                    : "static per-tensor int8") +
                "; remains: " + ctx.fold().remains[i];
    pl.detail = std::to_string(m) + " rows of " + std::to_string(k);
    return {};
  }
  const ir::Tensor& q = ctx.tensor(op.inputs[0]);
  const int64_t k = q.shape.back(), m = q.NumElements(ctx.tokens()) / k;
  const bool per_row = q.quant->scheme == ir::Scheme::DQ8CA;
  const float scale = per_row ? 1.0f : QScale(*q.quant);
  const int32_t zp = per_row ? 0 : QZero(*q.quant);
  std::vector<Bind> binds{ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])};
  if (per_row) binds.push_back(ctx.RowParams(op.inputs[0], false));
  ctx.Dispatch(conv::DequantizeDispatch(m, k, per_row, scale, zp, ctx.profile()), binds);
  pl.variant = per_row ? "dequantize_i8_per_token" : "dequantize_i8";
  pl.reason = "int8 -> f32: scale * (q - zp); remains: " + ctx.fold().remains[i];
  pl.detail = std::to_string(m) + " rows of " + std::to_string(k);
  return {};
}

}  // namespace

linear::DispatchParams RowDispatch(std::vector<std::string> row_ops, bool quant, int64_t m, int64_t k, float eps,
                                   const TargetProfile& p) {
  linear::DispatchParams d = linear::QuantizeDispatch(ir::Scheme::DQ8CA, m, k, 1.0f, 0, p);
  for (auto& o : row_ops) d.shader.defines.push_back(std::move(o));
  if (!quant) d.shader.defines.push_back("VKQC_NO_QUANT");
  d.spec.push_back({5, kernels::FloatBits(eps)});
  return d;
}

const kernels::Family& Lowering() {
  static const kernels::Family f{"quantize", {ir::OpType::Quantize, ir::OpType::Dequantize}, Pack, Lower};
  return f;
}

}  // namespace vkqc::quantize
