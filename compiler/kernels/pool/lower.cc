#include "compiler/kernels/pool/lower.h"

#include "compiler/emit/bundle_plan.h"
#include "compiler/kernels/conv/lower.h"

namespace vkqc::pool {
namespace {

using kernels::QScale;
using kernels::QZero;

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& xt = ctx.tensor(op.inputs[0]);
  const ir::Pool2dAttrs& a = op.pool;
  const conv::ConvGeometry geo = conv::Geometry(ctx.graph(), op, ctx.tokens());
  const bool int8 = xt.dtype == ir::DType::I8;
  float sx = 1, so = 1;
  int32_t zx = 0, zo = 0;
  if (int8) {
    sx = QScale(*xt.quant);
    zx = QZero(*xt.quant);
    so = QScale(a.output_quant);
    zo = QZero(a.output_quant);
  }
  ctx.Dispatch(conv::PoolDispatch(geo, int8, sx, zx, so, zo, ctx.profile()),
               {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
  pl.variant = std::string(a.global ? "global_avg_pool" : "avg_pool2d") + (int8 ? "_q8ta_q8to" : "_f32");
  pl.reason = "direct, padded taps excluded from the average";
  pl.detail = std::to_string(geo.kh) + "x" + std::to_string(geo.kw) + " window, " + std::to_string(geo.rows()) +
              " output pixels";
  pl.integer_path = int8;
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"pool", {ir::OpType::AvgPool2d}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::pool
