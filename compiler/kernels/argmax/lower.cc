#include "compiler/kernels/argmax/lower.h"

#include "compiler/emit/bundle_plan.h"

namespace vkqc::argmax {
namespace {

constexpr uint32_t kSpan = 2048;  // values per workgroup of the split pass

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const int64_t n = x.shape.back(), rows = x.NumElements(ctx.tokens()) / n;
  uint32_t local = 256;
  while (local > ctx.profile().max_compute_work_group_invocations) local /= 2;
  // Long rows (a vocabulary) are split over workgroups of kSpan values each, then reduced again.
  const uint64_t groups = (uint64_t(n) + kSpan - 1) / kSpan;
  if (groups <= 1 || groups > ctx.profile().max_compute_work_group_count[0] ||
      uint64_t(rows) > ctx.profile().max_compute_work_group_count[1]) {
    linear::DispatchParams d = kernels::FlatDispatch("argmax.comp", {}, uint64_t(rows) * local, local, ctx.profile());
    d.spec = {{0, local}, {1, uint32_t(n)}, {2, uint32_t(rows)}, {3, local}};
    d.shared_memory_bytes = local * 8;
    ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
    pl.reason = "one workgroup per row, (value, lowest index) tree reduction";
    pl.variant = "argmax_f32";
  } else {
    const kernels::Bind part = ctx.Scratch(uint64_t(rows) * groups * 8, op.name + ".partials");
    linear::DispatchParams d;
    d.shader = {"argmax.comp", {"VKQC_ARGMAX_PARTIAL"}};
    d.spec = {{0, local}, {1, uint32_t(n)}, {2, uint32_t(rows)}, {3, local}, {4, uint32_t(groups)}, {5, kSpan}};
    d.local_size[0] = local;
    d.local_size[1] = d.local_size[2] = 1;
    d.group_count[0] = uint32_t(groups);
    d.group_count[1] = uint32_t(rows);
    d.group_count[2] = 1;
    d.shared_memory_bytes = local * 8;
    ctx.Dispatch(d, {ctx.Read(op.inputs[0]), part});
    linear::DispatchParams f = kernels::FlatDispatch("argmax.comp", {"VKQC_ARGMAX_FINAL"}, uint64_t(rows) * local, local,
                                                     ctx.profile());
    f.spec = {{0, local}, {1, uint32_t(n)}, {2, uint32_t(rows)}, {3, local}, {4, uint32_t(groups)}, {5, kSpan}};
    f.shared_memory_bytes = local * 8;
    ctx.Dispatch(f, {part.AsRead(), ctx.Write(op.outputs[0])});
    pl.reason = std::to_string(groups) + " workgroups per row of " + std::to_string(kSpan) +
                " values each, then one per row over their (value, lowest index) results";
    pl.variant = "argmax_f32_split";
  }
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(n);
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"argmax", {ir::OpType::Argmax}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::argmax
