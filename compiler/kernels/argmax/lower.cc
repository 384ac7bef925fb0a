#include "compiler/kernels/argmax/lower.h"

#include "compiler/emit/bundle_plan.h"

namespace vkqc::argmax {
namespace {

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const int64_t n = x.shape.back(), rows = x.NumElements(ctx.tokens()) / n;
  uint32_t local = 256;
  while (local > ctx.profile().max_compute_work_group_invocations) local /= 2;
  linear::DispatchParams d = kernels::FlatDispatch("argmax.comp", {}, uint64_t(rows) * local, local, ctx.profile());
  d.spec = {{0, local}, {1, uint32_t(n)}, {2, uint32_t(rows)}, {3, local}};
  d.shared_memory_bytes = local * 8;
  ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
  pl.variant = "argmax_f32";
  pl.reason = "one workgroup per row, (value, lowest index) tree reduction";
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(n);
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"argmax", {ir::OpType::Argmax}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::argmax
