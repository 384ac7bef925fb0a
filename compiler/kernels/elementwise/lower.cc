#include "compiler/kernels/elementwise/lower.h"

#include <algorithm>

#include "compiler/emit/bundle_plan.h"
#include "compiler/kernels/elementwise/elementwise.h"
#include "compiler/kernels/linear/lower.h"
#include "compiler/kernels/quantize/lower.h"
#include "compiler/passes/fuse_rows.h"

namespace vkqc::elementwise {
namespace {

using kernels::Bind;
using kernels::QScale;
using kernels::QZero;

Status LowerAdd(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& at = ctx.tensor(op.inputs[0]);
  const int64_t c = at.shape.back(), rows = at.NumElements(ctx.tokens()) / c;
  const bool int8 = at.dtype == ir::DType::I8;
  const conv::AddParams ap = conv::Int8AddParams(ctx.graph(), op);  // float adds use the flags only
  ctx.Dispatch(conv::AddDispatch(rows, c, int8, ap, ctx.profile()),
               {ctx.Read(op.inputs[0]), ctx.Read(op.inputs[1]), ctx.Write(op.outputs[0])});
  pl.variant = int8 ? "add_q8ta_q8to" : "add_f32";
  pl.reason = int8 ? "int8 inputs with their own scales, requantized to the output's" : "float add";
  pl.detail = std::to_string(rows * c) + " values";
  pl.integer_path = int8;
  return {};
}

// One row of mul(silu(a), b) read only by linears that each quantize it in their GEMV prologue
// (linear::TakesRowPrologue, two rows re-read per workgroup within kSwigluPrologueBytes unless
// `--prologue-max-bytes` says otherwise): no dispatch of its own; every workgroup of those linears
// computes silu(a) * b and its per-token quantization (VKQC_XQ_SILU). One dependent dispatch less
// per gated MLP in a decode step. Never with kept intermediates (the mul's output would not
// exist to check).
bool LeaveSwigluToPrologues(kernels::LowerContext& ctx, size_t i, int silu, PlanLayer& pl) {
  const ir::Graph& g = ctx.graph();
  const ir::Op& op = ctx.op(i);
  const int y = op.outputs[0], a = ctx.op(size_t(silu)).inputs[0];
  const int64_t c = ctx.tensor(y).shape.back();
  if (ctx.options().keep_intermediates || ctx.tensor(y).NumElements(ctx.tokens()) != c || g.IsOutput(y) ||
      ctx.tensor(a).data || ctx.tensor(op.inputs[1]).data)
    return false;
  const std::vector<size_t> readers = g.Readers(y);
  if (readers.empty()) return false;
  for (size_t j : readers) {
    const ir::Op& r = g.ops[j];
    if (r.type != ir::OpType::Linear || r.inputs[0] != y || std::count(r.inputs.begin(), r.inputs.end(), y) != 1 ||
        !linear::TakesRowPrologue(ctx, j, 2, 4, linear::kSwigluPrologueBytes))  // x, weights, output, b
      return false;
  }
  kernels::LowerContext::RowPrologue p;
  p.silu = true;
  p.x = ctx.Read(a);
  p.b = ctx.Read(op.inputs[1]);
  p.norm_op = i;
  ctx.ProvideRowPrologue(y, p);
  pl.variant = "fused";
  std::string names;
  for (size_t j : readers) names += (names.empty() ? "'" : ", '") + ctx.op(j).name + "'";
  pl.reason = "silu '" + ctx.op(size_t(silu)).name + "' and this mul computed in the GEMV prologue of every workgroup of " +
              names + " with the per-token int8 quantization; no dispatch of its own";
  pl.detail = "1 row of " + std::to_string(c);
  return true;
}

// mul(silu(a), b) as one row kernel [+ the dq8ca quantization its linear readers need]. After a
// gate/up pair (linear/pair.h): nothing where the pair's GEMV wrote the mul's output in its
// epilogue, else the row kernel reads a and b from the pair's interleaved outputs.
Status LowerSwiglu(kernels::LowerContext& ctx, size_t i, int silu, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& y = ctx.tensor(op.outputs[0]);
  const int64_t c = y.shape.back(), rows = y.NumElements(ctx.tokens()) / c;
  const kernels::LowerContext::PairOutput* pairs = ctx.PairsOf(i);
  const int pair = ctx.fuse().pair_gate[i] >= 0 ? ctx.fuse().PairFirst(i) : -1;  // the linear computing the pair
  if (pair >= 0 && !pairs)
    return InternalError(ctx.OpLabel(i) + ": the gate/up pair before it left no output");
  if (pairs && pairs->in_epilogue) {
    pl.variant = "fused";
    pl.reason = "silu '" + ctx.op(size_t(silu)).name + "' and this mul computed in the epilogue of '" +
                ctx.op(size_t(pair)).name + "' (the gate/up pair's GEMV); no dispatch of its own";
    pl.detail = std::to_string(rows) + " rows of " + std::to_string(c);
    return {};
  }
  if (!pairs && LeaveSwigluToPrologues(ctx, i, silu, pl)) return {};
  const uint32_t buffers = pairs ? 4u : 5u;  // [a, b | pairs], y, rows, params
  const bool quant = linear::ConsumersQuantizePerToken(ctx, op.outputs[0]) &&
                     buffers <= ctx.profile().max_per_stage_descriptor_storage_buffers;
  std::vector<kernels::Bind> binds;
  if (pairs) {
    binds = {pairs->interleaved, ctx.Write(op.outputs[0])};
  } else {
    binds = {ctx.Read(ctx.op(size_t(silu)).inputs[0]), ctx.Read(op.inputs[1]), ctx.Write(op.outputs[0])};
  }
  kernels::LowerContext::Quantized q;
  if (quant) {
    q.rows = ctx.Scratch(uint64_t(rows) * linear::PackedK4(c) * 4, y.name + ".dq8ca");
    q.params = ctx.Scratch(uint64_t(rows) * 8, y.name + ".dq8ca.params");
    binds.push_back(q.rows);
    binds.push_back(q.params);
  }
  const linear::DispatchParams d =
      quantize::RowDispatch({pairs ? "VKQC_ROW_PAIRS" : "VKQC_ROW_SWIGLU"}, quant, rows, c, 0.0f, ctx.profile());
  ctx.Dispatch(d, binds);
  if (quant) ctx.ProvideQuantized(op.outputs[0], ir::Scheme::DQ8CA, 1.0f, 0, {q.rows.AsRead(), q.params.AsRead()});
  pl.variant = std::string(pairs ? "silu_mul_pairs_f32" : "silu_mul_f32") + (quant ? "_dq8ca" : "");
  pl.reason = "silu '" + ctx.op(size_t(silu)).name + "' and this mul in one row kernel" +
              (pairs ? " reading the interleaved outputs of the gate/up pair '" + ctx.op(size_t(pair)).name + "'"
                     : std::string()) +
              (quant ? " with the per-token int8 quantization every linear reading it needs" : "");
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(c);
  return {};
}

// mul with b broadcast to a's shape: b's index computed from a's over the merged dimensions.
Status LowerBroadcastMul(kernels::LowerContext& ctx, size_t i, const std::vector<Bind>& binds, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  std::vector<int64_t> a = ctx.tensor(op.inputs[0]).shape, b = ctx.tensor(op.inputs[1]).shape;
  for (int64_t& d : a) d = ctx.Dim(d);
  for (int64_t& d : b) d = ctx.Dim(d);
  const BroadcastDims m = MergeBroadcast(a, b);
  if (m.dims.size() > 8) return InternalError(ctx.OpLabel(i) + ": broadcast over more than 8 dimensions");
  const uint64_t count = uint64_t(ctx.tensor(op.outputs[0]).NumElements(ctx.tokens()));
  ctx.Dispatch(BroadcastMulDispatch(m, count, ctx.profile()), binds);
  pl.variant = "mul_f32_broadcast";
  std::string dims;
  for (size_t d = m.dims.size(); d-- > 0;)
    dims += (dims.empty() ? "" : " x ") + std::to_string(m.dims[d]) + (m.b_strides[d] ? "" : "*");
  pl.reason = "elementwise float mul, b broadcast to a's shape";
  pl.detail = std::to_string(count) + " values over [" + dims + "] (* = b broadcast)";
  return {};
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  if (op.type == ir::OpType::Add) return LowerAdd(ctx, i, pl);
  if (const int silu = ctx.fuse().row_input[i]; silu >= 0) return LowerSwiglu(ctx, i, silu, pl);
  const uint64_t count = uint64_t(ctx.tensor(op.outputs[0]).NumElements(ctx.tokens()));
  std::vector<Bind> binds{ctx.Read(op.inputs[0])};
  if (op.type == ir::OpType::Mul) binds.push_back(ctx.Read(op.inputs[1]));
  binds.push_back(ctx.Write(op.outputs[0]));
  if (op.type == ir::OpType::Mul && ctx.tensor(op.inputs[1]).shape != ctx.tensor(op.inputs[0]).shape)
    return LowerBroadcastMul(ctx, i, binds, pl);
  ctx.Dispatch(ElementwiseDispatch(op.type, count, ctx.profile(), op.unary), binds);
  pl.variant = VariantName(op.type);
  pl.reason = "elementwise float glue op";
  pl.detail = std::to_string(count) + " values";
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"elementwise",
                                 {ir::OpType::Mul, ir::OpType::Silu, ir::OpType::Add, ir::OpType::Sigmoid,
                                  ir::OpType::HardSigmoid, ir::OpType::HardSwish},
                                 nullptr, Lower};
  return f;
}

}  // namespace vkqc::elementwise
