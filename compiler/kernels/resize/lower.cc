#include "compiler/kernels/resize/lower.h"

#include "compiler/emit/bundle_plan.h"

namespace vkqc::resize {
namespace {

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& xt = ctx.tensor(op.inputs[0]);
  const bool int8 = xt.dtype == ir::DType::I8;
  const int64_t n = ctx.Dim(xt.shape[0]), h = xt.shape[1], w = xt.shape[2], c = xt.shape[3];
  const int32_t sh = op.resize.scale[0], sw = op.resize.scale[1];
  const uint64_t pixels = uint64_t(n * h * sh * w * sw);
  const uint64_t count = pixels * uint64_t(int8 ? (c + 3) / 4 : c);
  linear::DispatchParams d = kernels::FlatDispatch(
      "resize_nearest.comp", int8 ? std::vector<std::string>{"VKQC_RESIZE_Q8"} : std::vector<std::string>{}, count,
      128, ctx.profile());
  const uint32_t v[] = {uint32_t(count), uint32_t(h), uint32_t(w), uint32_t(c), linear::PackedK4(c), uint32_t(sh),
                        uint32_t(sw)};
  for (uint32_t k = 0; k < 7; ++k) d.spec.push_back({k + 1, v[k]});
  ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
  pl.variant = int8 ? "resize_nearest_i8" : "resize_nearest_f32";
  pl.reason = int8 ? "nearest neighbour, a copy of packed int8 words (the output keeps the input's quant)"
                   : "nearest neighbour, one invocation per value";
  pl.detail = "scale [" + std::to_string(sh) + ", " + std::to_string(sw) + "], " + std::to_string(pixels) +
              " output pixels";
  pl.integer_path = int8;
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"resize", {ir::OpType::ResizeNearest}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::resize
