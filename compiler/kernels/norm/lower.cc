#include "compiler/kernels/norm/lower.h"

#include "compiler/emit/bundle_plan.h"
#include "compiler/kernels/linear/lower.h"
#include "compiler/kernels/quantize/lower.h"
#include "compiler/passes/fuse_rows.h"

namespace vkqc::norm {
namespace {

// The weight is bound from the weight segment as is (f32 [C]); softmax has none.
Status Pack(kernels::PackContext& ctx, size_t i) {
  if (ctx.op(i).type != ir::OpType::RmsNorm) return {};
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

// The row kernel: [residual add +] rms_norm [+ dq8ca quantization for the linears reading it].
Status LowerRow(kernels::LowerContext& ctx, size_t i, int add, bool quant, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const int64_t c = x.shape.back(), rows = x.NumElements(ctx.tokens()) / c;
  std::vector<std::string> ops{"VKQC_ROW_NORM"};
  std::vector<kernels::Bind> binds;
  if (add >= 0) {
    const ir::Op& a = ctx.op(size_t(add));
    ops.push_back("VKQC_ROW_ADD");
    binds = {ctx.Read(a.inputs[0]), ctx.Read(a.inputs[1]), ctx.Constants(i), ctx.Write(a.outputs[0])};
  } else {
    binds = {ctx.Read(op.inputs[0]), ctx.Constants(i)};
  }
  binds.push_back(ctx.Write(op.outputs[0]));
  kernels::LowerContext::Quantized q;
  if (quant) {
    const std::string base = ctx.tensor(op.outputs[0]).name + ".dq8ca";
    q.rows = ctx.Scratch(uint64_t(rows) * linear::PackedK4(c) * 4, base);
    q.params = ctx.Scratch(uint64_t(rows) * 8, base + ".params");
    binds.push_back(q.rows);
    binds.push_back(q.params);
  }
  const linear::DispatchParams d = quantize::RowDispatch(ops, quant, rows, c, op.norm.eps, ctx.profile());
  ctx.Dispatch(d, binds);
  if (quant) ctx.ProvideQuantized(op.outputs[0], ir::Scheme::DQ8CA, 1.0f, 0, {q.rows.AsRead(), q.params.AsRead()});
  pl.variant = std::string(add >= 0 ? "add_" : "") + "rms_norm_f32" + (quant ? "_dq8ca" : "");
  pl.reason = std::string("one row kernel per row (workgroup of ") + std::to_string(d.local_size[0]) + "): " +
              (add >= 0 ? "the residual add '" + ctx.op(size_t(add)).name + "', " : std::string()) + "the norm" +
              (quant ? ", and the per-token int8 quantization every linear reading it needs" : "") +
              ", in one dispatch";
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(c);
  pl.weight_bytes = ctx.ConstantBytes(i);
  return {};
}

// softmax over the last axis: one workgroup per row striding over it (any row length), shared
// trees for the maximum and the sum.
Status LowerSoftmax(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const int64_t c = ctx.Dim(x.shape.back()), rows = x.NumElements(ctx.tokens()) / c;
  const uint32_t local = LocalSize(c, ctx.profile());
  linear::DispatchParams d = kernels::FlatDispatch("softmax.comp", {}, uint64_t(rows) * local, local, ctx.profile());
  d.spec = {{0, local}, {1, uint32_t(c)}, {2, uint32_t(rows)}, {3, local}};
  d.shared_memory_bytes = local * 4;
  ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
  pl.variant = "softmax_f32";
  pl.reason = "one workgroup of " + std::to_string(local) + " per row, the row maximum subtracted before exp, " +
              "shared-memory trees for the maximum and the fp32 sum";
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(c);
  return {};
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  if (op.type == ir::OpType::Softmax) return LowerSoftmax(ctx, i, pl);
  const int add = ctx.fuse().row_input[i];
  // The quantizing row kernel binds 2 more storage buffers (rows, parameters): only where they fit.
  const bool quant = linear::ConsumersQuantizePerToken(ctx, op.outputs[0]) &&
                     (add >= 0 ? 7u : 5u) <= ctx.profile().max_per_stage_descriptor_storage_buffers;
  if (add >= 0 || quant) return LowerRow(ctx, i, add, quant, pl);
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
  static const kernels::Family f{"norm", {ir::OpType::RmsNorm, ir::OpType::Softmax}, Pack, Lower};
  return f;
}

}  // namespace vkqc::norm
