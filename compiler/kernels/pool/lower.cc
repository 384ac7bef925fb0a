#include "compiler/kernels/pool/lower.h"

#include <cstring>

#include "compiler/emit/bundle_plan.h"
#include "compiler/kernels/conv/lower.h"

namespace vkqc::pool {
namespace {

using kernels::QScale;
using kernels::QZero;

// max_pool2d: shaders/maxpool.comp with avgpool.comp's specialization constants (the conv
// geometry). int8: the maximum code copied (same quant) or requantized.
linear::DispatchParams MaxPoolDispatch(const conv::ConvGeometry& g, bool int8, bool requant, float sx, int32_t zx,
                                       float so, int32_t zo, const TargetProfile& p) {
  std::vector<std::string> defines;
  if (int8) defines.push_back("VKQC_POOL_Q8");
  if (requant) defines.push_back("VKQC_POOL_REQUANT");
  linear::DispatchParams d = kernels::FlatDispatch("maxpool.comp", defines,
                                                   uint64_t(g.rows()) * uint64_t(int8 ? (g.c + 3) / 4 : g.c), 128, p);
  const uint32_t v[] = {uint32_t(g.rows()), uint32_t(g.h),  uint32_t(g.w),  uint32_t(g.c),
                        linear::PackedK4(g.c), uint32_t(g.kh), uint32_t(g.kw), uint32_t(g.sh),
                        uint32_t(g.sw),      uint32_t(g.pt), uint32_t(g.pl), uint32_t(g.dh),
                        uint32_t(g.dw),      uint32_t(g.oh), uint32_t(g.ow)};
  for (uint32_t i = 0; i < 15; ++i) d.spec.push_back({i + 1, v[i]});
  if (!requant) return d;  // no push block in the SPIR-V
  struct {
    float sx;
    int32_t zx;
    float inv_so;
    int32_t zo;
  } push{sx, zx, 1.0f / so, zo};
  d.push.resize(sizeof push);
  std::memcpy(d.push.data(), &push, sizeof push);
  return d;
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& xt = ctx.tensor(op.inputs[0]);
  const ir::Pool2dAttrs& a = op.pool;
  const conv::ConvGeometry geo = conv::Geometry(ctx.graph(), op, ctx.tokens());
  const bool int8 = xt.dtype == ir::DType::I8;
  const bool max = op.type == ir::OpType::MaxPool2d;
  float sx = 1, so = 1;
  int32_t zx = 0, zo = 0;
  if (int8) {
    sx = QScale(*xt.quant);
    zx = QZero(*xt.quant);
    so = QScale(a.output_quant);
    zo = QZero(a.output_quant);
  }
  const bool requant = int8 && (sx != so || zx != zo);
  const std::vector<kernels::Bind> binds{ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])};
  if (max)
    ctx.Dispatch(MaxPoolDispatch(geo, int8, requant, sx, zx, so, zo, ctx.profile()), binds);
  else
    ctx.Dispatch(conv::PoolDispatch(geo, int8, sx, zx, so, zo, ctx.profile()), binds);
  const std::string kind = max ? "max" : "avg";
  pl.variant = (a.global ? "global_" + kind + "_pool" : kind + "_pool2d") + (int8 ? "_q8ta_q8to" : "_f32");
  pl.reason = max ? std::string("direct, padded taps excluded from the maximum") +
                        (int8 ? (requant ? "; the int8 maximum requantized to the output's parameters"
                                         : "; the int8 maximum copied (the output's parameters are the input's)")
                              : "")
                  : "direct, padded taps excluded from the average";
  pl.detail = std::to_string(geo.kh) + "x" + std::to_string(geo.kw) + " window, " + std::to_string(geo.rows()) +
              " output pixels";
  pl.integer_path = int8;
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"pool", {ir::OpType::AvgPool2d, ir::OpType::MaxPool2d}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::pool
