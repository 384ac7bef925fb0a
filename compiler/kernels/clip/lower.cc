#include "compiler/kernels/clip/lower.h"

#include <cmath>
#include <cstring>

#include "compiler/emit/bundle_plan.h"

namespace vkqc::clip {
namespace {

// shaders/clip.comp's push constants.
struct ClipPush {
  float lo, hi;
};

std::string Bound(float v) {
  if (std::isinf(v)) return v < 0 ? "-inf" : "+inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const uint64_t count = uint64_t(ctx.tensor(op.outputs[0]).NumElements(ctx.tokens()));
  linear::DispatchParams d = kernels::FlatDispatch("clip.comp", {}, count, 128, ctx.profile());
  d.spec.push_back({1, uint32_t(count)});
  const ClipPush push{op.unary.alpha, op.unary.beta};
  d.push.resize(sizeof push);
  std::memcpy(d.push.data(), &push, sizeof push);
  ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
  pl.variant = "clip_f32";
  pl.reason = "elementwise min(max(x, " + Bound(op.unary.alpha) + "), " + Bound(op.unary.beta) + ")";
  pl.detail = std::to_string(count) + " values";
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"clip", {ir::OpType::Clip}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::clip
