#include "compiler/kernels/rope/lower.h"

#include <cstring>

#include "compiler/emit/bundle_plan.h"

namespace vkqc::rope {
namespace {

Status Pack(kernels::PackContext& ctx, size_t i) {
  const std::vector<float> table = ir::RopeTable(ctx.op(i).rope);
  std::vector<uint8_t> region(table.size() * 4);
  std::memcpy(region.data(), table.data(), region.size());
  return ctx.AddConstants(i, region);
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::RopeAttrs& a = op.rope;
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const int64_t width = x.shape.back(), rows = x.NumElements(ctx.tokens()) / width;
  linear::DispatchParams d = kernels::FlatDispatch("rope.comp", a.interleaved ? std::vector<std::string>{"VKQC_INTERLEAVED"}
                                                                               : std::vector<std::string>{},
                                                   uint64_t(rows * width / 2), 128, ctx.profile());
  d.spec.insert(d.spec.end(), {{1, uint32_t(width)}, {2, uint32_t(a.head_dim)}, {3, uint32_t(rows)},
                               {4, uint32_t(a.max_positions)}});
  ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Read(op.inputs[1]), ctx.Constants(i), ctx.Write(op.outputs[0])});
  pl.variant = std::string("rope_f32_") + (a.interleaved ? "interleaved" : "half");
  pl.reason = std::string("cos/sin table of ") + std::to_string(a.max_positions) + " positions computed at compile time" +
              (a.llama3 ? " (Llama-3 frequency scaling)" : "");
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(width / a.head_dim) + " heads x " +
              std::to_string(a.head_dim);
  pl.weight_bytes = ctx.ConstantBytes(i);
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"rope", {ir::OpType::Rope}, Pack, Lower};
  return f;
}

}  // namespace vkqc::rope
