#include "compiler/kernels/norm/lower.h"

#include "compiler/emit/bundle_plan.h"

namespace vkqc::norm {
namespace {

// The weight is bound from the weight segment as is (f32 [C]).
Status Pack(kernels::PackContext& ctx, size_t i) {
  const ir::Tensor& w = ctx.tensor(ctx.op(i).inputs[1]);
  std::vector<uint8_t> region(w.data->data(), w.data->data() + w.data->size);
  return ctx.AddConstants(i, region);
}

// Workgroup width: a power of two, at most 256 and the row length rounded up.
uint32_t LocalSize(int64_t c, const TargetProfile& p) {
  uint32_t local = 32;
  while (local < 256 && int64_t(local) < c) local *= 2;
  while (local > p.max_compute_work_group_invocations) local /= 2;
  return local;
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const int64_t c = x.shape.back(), rows = x.NumElements(ctx.tokens()) / c;
  const bool vec4 = c % 4 == 0;
  const uint32_t local = LocalSize(vec4 ? c / 4 : c, ctx.profile());
  linear::DispatchParams d = kernels::FlatDispatch("rms_norm.comp", vec4 ? std::vector<std::string>{"VKQC_VEC4"}
                                                                         : std::vector<std::string>{},
                                                   uint64_t(rows) * local, local, ctx.profile());
  d.spec = {{0, local}, {1, uint32_t(c)}, {2, uint32_t(rows)}, {3, kernels::FloatBits(op.norm.eps)}, {4, local}};
  d.shared_memory_bytes = local * 4;
  ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Constants(i), ctx.Write(op.outputs[0])});
  pl.variant = "rms_norm_f32";
  pl.reason = "one workgroup of " + std::to_string(local) + " per row, shared-memory sum of squares" +
              std::string(vec4 ? ", 16-byte loads" : "");
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(c);
  pl.weight_bytes = ctx.ConstantBytes(i);
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"norm", {ir::OpType::RmsNorm}, Pack, Lower};
  return f;
}

}  // namespace vkqc::norm
