// Linear family lowering: packs the weights once (one layout for GEMM and GEMV, shared by every
// program) and emits per program the activation quantization (shared between layers reading the
// same tensor) and the GEMM / GEMV / cooperative-matrix dispatch chosen by SelectLinear.
#include <algorithm>
#include <sstream>

#include "compiler/emit/bundle_plan.h"
#include "compiler/kernels/linear/lower.h"
#include "compiler/kernels/linear/pair.h"
#include "compiler/kernels/norm/tail.h"
#include "compiler/passes/fuse_rows.h"

namespace vkqc::linear {
namespace {

using kernels::Bind;
using kernels::QScale;
using kernels::QZero;

Status Pack(kernels::PackContext& ctx, size_t i) {
  const ir::Op& op = ctx.op(i);
  if (ctx.fuse().emitted_by[i] >= 0) return {};  // the second of a gate/up pair: packed with the first
  if (const int mul = ctx.fuse().pair_mul[i]; mul >= 0) {
    auto packed = std::make_shared<PackedLinear>(PackPair(ctx.graph(), ctx.op(size_t(ctx.fuse().pair_gate[size_t(mul)])),
                                                          ctx.op(size_t(ctx.fuse().pair_up[size_t(mul)]))));
    VKQC_TRY(ctx.AddConstants(i, packed->region));
    ctx.Keep(i, packed);
    return {};
  }
  const ir::Tensor& w = ctx.tensor(op.inputs[1]);
  const int64_t n = w.shape[0], k = w.shape[1];
  const float* bias =
      op.inputs.size() > 2 ? reinterpret_cast<const float*>(ctx.tensor(op.inputs[2]).data->data()) : nullptr;
  const ir::Quant& q = *w.quant;
  auto packed = std::make_shared<PackedLinear>(
      PackLinear(q.scheme, w.data->data(), n, k, q.group_size, q.scales.data(),
                 q.zero_points.empty() ? nullptr : q.zero_points.data(), bias,
                 q.mins.empty() ? nullptr : q.mins.data()));
  VKQC_TRY(ctx.AddConstants(i, packed->region));
  ctx.Keep(i, packed);
  return {};
}

}  // namespace

LinearShape ShapeOf(const kernels::LowerContext& ctx, const ir::Op& op) {
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const ir::Tensor& w = ctx.tensor(op.inputs[1]);
  LinearShape s;
  s.k = x.shape.back();
  s.m = x.NumElements(ctx.tokens()) / s.k;
  s.n = w.shape[0];
  s.x_int8 = x.dtype == ir::DType::I8;
  const ir::Scheme a = op.linear.input_quant.scheme;
  s.act = (a == ir::Scheme::Q8TA || a == ir::Scheme::DQ8CA) ? a : ir::Scheme::Float;
  // An int8 input carries its own parameters: per token (dq8ca, from a quantize op) or per
  // tensor (q8ta, or the q8to output of the previous linear).
  if (s.x_int8) s.act = x.quant->scheme == ir::Scheme::DQ8CA ? ir::Scheme::DQ8CA : ir::Scheme::Q8TA;
  s.weights = w.quant->scheme;
  s.group_size = w.quant->group_size;
  s.has_bias = op.inputs.size() > 2;
  s.relu = op.linear.fused_relu;
  s.relu6 = op.linear.fused_relu6;
  s.out_q8 = op.linear.output_quant.scheme == ir::Scheme::Q8TO;
  return s;
}

bool ConsumersQuantizePerToken(const kernels::LowerContext& ctx, int tensor) {
  const ir::Graph& g = ctx.graph();
  if (ctx.tensor(tensor).dtype != ir::DType::F32) return false;
  const std::vector<size_t> readers = g.Readers(tensor);
  for (size_t i : readers) {
    const ir::Op& op = g.ops[i];
    if (op.type != ir::OpType::Linear || op.inputs[0] != tensor || op.linear.input_quant.scheme != ir::Scheme::DQ8CA)
      return false;
    auto choice = SelectLinear(ShapeOf(ctx, op), ctx.profile(), ctx.options().select);
    if (!choice.ok() || !(choice->accum == Accum::IntDot || (choice->accum == Accum::CoopMat && choice->cm_int8)))
      return false;
  }
  return !readers.empty();
}

namespace {
bool PrologueFits(const kernels::LowerContext& ctx, const LinearShape& shape, const LinearChoice& selected,
                  uint32_t rows, uint32_t buffers, uint64_t default_limit = kPrologueBytes) {
  const LinearChoice choice = ForRowPrologue(shape, ctx.profile(), selected);
  const uint64_t limit = ctx.options().select.prologue_max_bytes ? ctx.options().select.prologue_max_bytes
                                                                  : default_limit;
  return !shape.x_int8 && shape.act == ir::Scheme::DQ8CA && choice.algo == Algo::Gemv &&
         choice.accum == Accum::IntDot && shape.m == 1 && shape.k % 4 == 0 &&
         uint64_t((shape.n + choice.nr - 1) / choice.nr) * uint64_t(shape.k) * 4 * rows <= limit &&
         choice.SharedMemoryBytes() + choice.PrologueSharedBytes(shape.k) <=
             ctx.profile().max_compute_shared_memory_size &&
         buffers <= ctx.profile().max_per_stage_descriptor_storage_buffers;
}
}  // namespace

bool TakesRowPrologue(const kernels::LowerContext& ctx, size_t i, uint32_t rows, uint32_t buffers,
                      uint64_t default_limit) {
  const ir::Op& op = ctx.op(i);
  if (op.type != ir::OpType::Linear) return false;
  const LinearShape shape = ShapeOf(ctx, op);
  auto choice = SelectLinear(shape, ctx.profile(), ctx.options().select);
  return choice.ok() && PrologueFits(ctx, shape, *choice, rows, buffers, default_limit);
}

std::string ChoiceDetail(const LinearShape& shape, const LinearChoice& choice, const DispatchParams& ld) {
  std::ostringstream det;
  if (choice.accum == Accum::CoopMat)
    det << "cooperative-matrix block " << choice.CmBlockM() << "x" << choice.CmBlockN() << "x"
        << choice.cm_bkw * (choice.cm_int8 ? 4 : 2) << ", " << choice.cm_wm << "x" << choice.cm_wn
        << " subgroups of " << choice.cm_sg << (choice.cm_pin_subgroup ? " (pinned)" : "") << ", " << choice.cm_tm
        << "x" << choice.cm_tn << " matrices of " << choice.cm_m << "x" << choice.cm_n << "x" << choice.cm_k
        << " each" << (choice.cm_stages > 1 ? ", 2 shared operand buffers" : "")
        << (choice.cm_ksplit > 1 ? ", K split in " + std::to_string(choice.cm_ksplit) + " slices of " +
                                       std::to_string(choice.cm_kslice) + " (partial outputs added by a second dispatch)"
                                 : std::string());
  else if (choice.algo == Algo::Gemm)
    det << "tile " << choice.ty * choice.rm << "x" << choice.tx * choice.rn << "x" << choice.bk4 * 4
        << ", workgroup " << choice.tx << "x" << choice.ty << ", " << choice.rm << "x" << choice.rn
        << " outputs per thread";
  else
    det << "workgroup " << choice.threads << ", " << choice.nr << " channels x " << choice.mb
        << " rows per workgroup"
        << (choice.row_blocks > 1 ? ", " + std::to_string(choice.row_blocks) + " row blocks side by side" : "");
  if (shape.Grouped()) det << (shape.Int4() ? ", int4 groups of " : ", int8 groups of ") << shape.group_size;
  det << ", shared " << choice.SharedMemoryBytes() << " B, groups " << ld.group_count[0] << "x"
      << ld.group_count[1] << "x" << ld.group_count[2];
  return det.str();
}

namespace {

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const int pair_mul = ctx.fuse().pair_mul[i];
  LinearShape shape = ShapeOf(ctx, op);
  if (pair_mul >= 0) shape.n *= 2;  // a gate/up pair: both linears' channels, interleaved
  auto choice_r = SelectLinear(shape, ctx.profile(), ctx.options().select);
  if (!choice_r.ok()) return Error{choice_r.error().kind, ctx.OpLabel(i) + ": " + choice_r.error().message};
  LinearChoice choice = *choice_r;
  LinearConsts lc;
  const ir::Tensor& xt = ctx.tensor(op.inputs[0]);
  Bind row_params;
  if (shape.x_int8 && shape.act == ir::Scheme::DQ8CA) {
    row_params = ctx.RowParams(op.inputs[0], false);
  } else if (shape.x_int8) {
    lc.act_scale = QScale(*xt.quant);
    lc.act_zero_point = QZero(*xt.quant);
  } else if (shape.act == ir::Scheme::Q8TA) {
    lc.act_scale = QScale(op.linear.input_quant);
    lc.act_zero_point = QZero(op.linear.input_quant);
  }
  if (shape.out_q8) {
    lc.out_scale = QScale(op.linear.output_quant);
    lc.out_zero_point = QZero(op.linear.output_quant);
  }
  Bind x = ctx.Read(op.inputs[0]);
  std::string quant_note;
  const bool int_path = choice.accum == Accum::IntDot || (choice.accum == Accum::CoopMat && choice.cm_int8);
  // One row without a quantized copy yet: every GEMV workgroup quantizes it in its prologue, one
  // dependent dispatch less, where the row is small enough that re-reading it per workgroup costs
  // less than the dispatch (prologue_max_bytes of reads over all workgroups) and it fits shared memory.
  // An rms_norm left to its readers' prologues (norm family): the prologue computes it too.
  kernels::LowerContext::RowPrologue* rp = ctx.RowPrologueOf(op.inputs[0]);
  std::vector<Bind> prologue_binds;
  const bool plain_prologue = !rp && int_path && PrologueFits(ctx, shape, choice, 1, 3) &&
                              !ctx.HasQuantized(op.inputs[0], shape.act, lc.act_scale, lc.act_zero_point);
  if (rp || plain_prologue) choice = ForRowPrologue(shape, ctx.profile(), choice);  // as PrologueFits judged it
  if (rp && rp->silu) {
    choice.xq_prologue = choice.xq_silu = true;
    x = rp->x;
    prologue_binds.push_back(rp->b);
    quant_note = "; computes its input row in each workgroup's prologue: silu * mul ('" + ctx.op(rp->norm_op).name +
                 "') and the per-token quantization (no row dispatch)";
  } else if (rp) {
    choice.xq_prologue = choice.xq_norm = true;
    choice.xq_eps = rp->eps;
    prologue_binds.push_back(rp->gamma);
    x = rp->x;
    if (rp->b.vb >= 0) {
      choice.xq_add = 1;
      prologue_binds.push_back(rp->b);
      if (rp->sum.vb >= 0) {  // the first reader lowered writes the sum
        choice.xq_add = 2;
        prologue_binds.push_back(rp->sum);
        rp->sum.vb = -1;
      }
    }
    quant_note = "; computes its input row in each workgroup's prologue: " +
                 std::string(choice.xq_add ? "the residual add" + std::string(choice.xq_add == 2 ? " (written by this layer)" : "") + ", " : "") +
                 "the rms_norm '" + ctx.op(rp->norm_op).name + "' and the per-token quantization (no row dispatch)";
  } else if (plain_prologue) {
    choice.xq_prologue = true;
    quant_note = "; quantizes its input row per token in each workgroup's prologue (no quantize dispatch)";
  } else if (int_path && !shape.x_int8) {
    const auto q = ctx.QuantizeShared(op.inputs[0], shape.act, lc.act_scale, lc.act_zero_point, shape.m, shape.k,
                                      &quant_note);
    x = q.rows;
    row_params = q.params;
  } else if (choice.accum == Accum::CoopMat && !shape.x_int8) {
    x = ctx.HalvesShared(op.inputs[0], shape.m, shape.k, &quant_note);
  }
  // A gate/up pair: the GEMV writes the mul's output silu(gate) * up from its channel pairs in its
  // epilogue; any other kernel writes the 2N interleaved outputs for the mul's row kernel.
  Bind out;
  std::string pair_note;
  if (pair_mul >= 0) {
    const ir::Op& mul = ctx.op(size_t(pair_mul));
    kernels::LowerContext::PairOutput po;
    pair_note = "; computes '" + ctx.op(size_t(ctx.fuse().pair_gate[size_t(pair_mul)])).name + "' and '" +
                ctx.op(size_t(ctx.fuse().pair_up[size_t(pair_mul)])).name +
                "' as one linear over their interleaved channels (" + std::to_string(shape.n) + " outputs)";
    if (choice.algo == Algo::Gemv && choice.nr % 2 == 0) {
      choice.out_pairs = po.in_epilogue = true;
      out = ctx.Write(mul.outputs[0]);
      pair_note += " and writes silu * mul ('" + mul.name + "') from each channel pair in its epilogue";
    } else {
      out = ctx.Scratch(uint64_t(shape.m) * uint64_t(shape.n) * 4, ctx.tensor(op.outputs[0]).name + ".pairs");
      po.interleaved = out.AsRead();
      pair_note += ", read by the silu * mul row kernel ('" + mul.name + "')";
    }
    ctx.ProvidePairs(size_t(pair_mul), po);
  } else {
    out = ctx.Write(op.outputs[0]);
  }
  std::vector<Bind> binds{x, ctx.Constants(i), out};
  if (row_params.vb >= 0) binds.push_back(row_params);
  binds.insert(binds.end(), prologue_binds.begin(), prologue_binds.end());
  // A one-row rms_norm reading this GEMV's output: computed by its last workgroup (norm/tail.h).
  std::string tail_note;
  if (choice.algo == Algo::Gemv && choice.accum != Accum::CoopMat && shape.m == 1 && !shape.out_q8 && pair_mul < 0) {
    const auto site = norm::FindTail(ctx, i);
    if (site && site->c == shape.n && binds.size() + site->Buffers() <= ctx.profile().max_per_stage_descriptor_storage_buffers &&
        (uint64_t(shape.n) / 4 + choice.threads - 1) / choice.threads <= norm::kTailMaxWordsPerThread) {
      choice.nt_base = uint32_t(binds.size());
      choice.nt_add = site->add >= 0;
      choice.nt_quant = site->quant;
      const norm::TailBinding tb = norm::BindTail(ctx, i, *site, &binds);
      choice.nt_eps = tb.eps;
      choice.nt_counter = tb.counter;
      tail_note = tb.note;
    }
  }
  const auto ld = LinearDispatch(shape, choice, ctx.KeptAs<PackedLinear>(i), lc, ctx.profile());
  if (choice.accum == Accum::CoopMat && choice.cm_ksplit > 1) {  // partial outputs, then their sum
    const Bind part = ctx.Scratch(uint64_t(choice.cm_ksplit) * uint64_t(shape.m) * uint64_t(shape.n) * 4,
                                  ctx.tensor(op.outputs[0]).name + ".splitk");
    binds[2] = part;
    ctx.Dispatch(ld, binds);
    ctx.Dispatch(SplitKReduceDispatch(shape, choice, ctx.KeptAs<PackedLinear>(i), lc, ctx.profile()),
                 {part.AsRead(), ctx.Constants(i), out});
  } else {
    ctx.Dispatch(ld, binds);
  }

  pl.variant = choice.VariantName(shape);
  pl.reason = choice.reason + quant_note + pair_note + tail_note;
  pl.detail = ChoiceDetail(shape, choice, ld);
  pl.weight_bytes = ctx.ConstantBytes(i);
  pl.integer_path = int_path || shape.x_int8;
  pl.flops = 2ull * shape.m * shape.n * shape.k;
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"linear", {ir::OpType::Linear}, Pack, Lower};
  return f;
}

}  // namespace vkqc::linear
