#include "compiler/kernels/norm/lower.h"

#include <algorithm>

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

// A one-row rms_norm (and the residual add fused into it) whose output only linears read, each
// taking the GEMV prologue (linear::TakesRowPrologue): no dispatch of its own; every workgroup of
// those linears computes the row (the first one lowered also writes the sum where anything else
// reads it, so every such reader must come after it), its norm and its quantization. One
// dependent dispatch less per norm in a decode step. Never with kept intermediates (the norm's
// output would not exist to check).
// Opt-in (`--prologue-max-bytes`): on the H100 it lost. The 1b example's decode step at context
// 128 took 1125 us with the row kernels, 1281 us with the norms before q/k/v in their prologues
// (16 dispatches fewer) and 1361 us with all 32 (bench/RESULTS.md 2026-11-26 session 4): each
// GEMV's weight loads wait for two row reductions, and kernels the change did not touch were
// slower too.
bool LeaveToPrologues(kernels::LowerContext& ctx, size_t i, int add, PlanLayer& pl) {
  const ir::Graph& g = ctx.graph();
  const ir::Op& op = ctx.op(i);
  const int y = op.outputs[0];
  const int64_t c = ctx.tensor(op.inputs[0]).shape.back();
  if (!ctx.options().select.prologue_max_bytes || ctx.options().keep_intermediates ||
      ctx.tensor(op.inputs[0]).NumElements(ctx.tokens()) != c || g.IsOutput(y))
    return false;
  const std::vector<size_t> readers = g.Readers(y);
  for (size_t j : readers) {
    const ir::Op& r = g.ops[j];
    if (r.type != ir::OpType::Linear || r.inputs[0] != y || std::count(r.inputs.begin(), r.inputs.end(), y) != 1)
      return false;
  }
  if (readers.empty()) return false;
  kernels::LowerContext::RowPrologue p;
  bool sum_read = false;
  if (add >= 0) {
    const ir::Op& a = ctx.op(size_t(add));
    for (int t : a.inputs)
      if (ctx.tensor(t).data) return false;  // a constant operand: bound differently, not fused
    const int sum = a.outputs[0];
    sum_read = g.IsOutput(sum);
    for (size_t j : g.Readers(sum)) {
      if (j == i) continue;
      if (j <= readers[0]) return false;  // it would run before the sum is written
      sum_read = true;
    }
    p.x = ctx.Read(a.inputs[0]);
    p.b = ctx.Read(a.inputs[1]);
    if (sum_read) p.sum = ctx.Write(sum);
  } else {
    p.x = ctx.Read(op.inputs[0]);
  }
  const uint32_t rows = add >= 0 ? 3 : 2;
  for (size_t j : readers)  // x, weights, output, the norm's weight [, b [, the sum]]
    if (!linear::TakesRowPrologue(ctx, j, rows, 2 + rows + (j == readers[0] && sum_read ? 1 : 0))) return false;
  p.gamma = ctx.Constants(i);
  p.eps = op.norm.eps;
  p.norm_op = i;
  ctx.ProvideRowPrologue(y, p);
  pl.variant = "fused";
  std::string names;
  for (size_t j : readers) names += (names.empty() ? "'" : ", '") + ctx.op(j).name + "'";
  pl.reason = std::string("computed in the GEMV prologue of every workgroup of ") + names + ": " +
              (add >= 0 ? "the residual add '" + ctx.op(size_t(add)).name + "'" +
                              (sum_read ? " (its sum written by '" + ctx.op(readers[0]).name + "')" : "") + ", "
                        : std::string()) +
              "the norm and the per-token int8 quantization; no dispatch of its own";
  pl.detail = "1 row of " + std::to_string(c);
  pl.weight_bytes = ctx.ConstantBytes(i);
  return true;
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
  if (const int by = ctx.NormTailOf(i); by >= 0) {  // norm/tail.h
    pl.variant = "fused";
    pl.reason = "computed by the last workgroup of '" + ctx.op(size_t(by)).name + "' (its layer says how); no dispatch of its own";
    pl.detail = "1 row of " + std::to_string(ctx.tensor(ctx.op(i).inputs[0]).shape.back());
    pl.weight_bytes = ctx.ConstantBytes(i);
    return {};
  }
  if (LeaveToPrologues(ctx, i, add, pl)) return {};
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
