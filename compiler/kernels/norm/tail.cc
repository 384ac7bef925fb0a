#include "compiler/kernels/norm/tail.h"

#include <algorithm>

#include "compiler/kernels/attention/lower.h"
#include "compiler/kernels/linear/lower.h"
#include "compiler/passes/fuse_rows.h"

namespace vkqc::norm {

std::optional<TailSite> FindTail(const kernels::LowerContext& ctx, size_t linear) {
  const ir::Graph& g = ctx.graph();
  if (!ctx.options().norm_tail || ctx.options().keep_intermediates) return std::nullopt;
  const int y = ctx.op(linear).outputs[0];
  const std::vector<size_t> readers = g.Readers(y);
  if (readers.size() != 1 || g.IsOutput(y)) return std::nullopt;
  const ir::Op& r = ctx.op(readers[0]);
  TailSite s;
  if (r.type == ir::OpType::RmsNorm && r.inputs[0] == y && ctx.fuse().row_input[readers[0]] < 0) {
    s.norm_op = readers[0];
  } else if (r.type == ir::OpType::Add) {
    const int norm = ctx.fuse().emitted_by[readers[0]];
    if (norm < 0 || ctx.op(size_t(norm)).type != ir::OpType::RmsNorm || ctx.fuse().row_input[size_t(norm)] != int(readers[0]))
      return std::nullopt;
    if (std::count(r.inputs.begin(), r.inputs.end(), y) != 1) return std::nullopt;
    s.norm_op = size_t(norm);
    s.add = int(readers[0]);
    s.residual = r.inputs[0] == y ? r.inputs[1] : r.inputs[0];
    const ir::Tensor& rt = ctx.tensor(s.residual);
    if (rt.data || rt.dtype != ir::DType::F32 || rt.NumElements(ctx.tokens()) != ctx.tensor(y).NumElements(ctx.tokens()))
      return std::nullopt;
    for (size_t j = 0; j < g.ops.size(); ++j)  // computed before the linear (or a graph input)
      if (std::count(g.ops[j].outputs.begin(), g.ops[j].outputs.end(), s.residual) && j > linear) return std::nullopt;
  } else {
    return std::nullopt;
  }
  const ir::Op& norm = ctx.op(s.norm_op);
  const ir::Tensor& x = ctx.tensor(norm.inputs[0]);
  const ir::Tensor& yt = ctx.tensor(y);
  s.c = x.shape.back();
  if (yt.dtype != ir::DType::F32 || x.NumElements(ctx.tokens()) != s.c || yt.NumElements(ctx.tokens()) != s.c ||
      s.c % 4 != 0 || ctx.tensor(norm.outputs[0]).dtype != ir::DType::F32)
    return std::nullopt;
  // The norm's own row kernel binds 2 more storage buffers for the quantization only where they
  // fit (norm/lower.cc); the tail's limit is the linear's, checked there.
  s.quant = linear::ConsumersQuantizePerToken(ctx, norm.outputs[0]);
  return s;
}

TailBinding BindTail(kernels::LowerContext& ctx, size_t linear, const TailSite& site, std::vector<kernels::Bind>* binds) {
  const ir::Op& norm = ctx.op(site.norm_op);
  if (site.add >= 0) {
    binds->push_back(ctx.Read(site.residual));
    binds->push_back(ctx.Write(ctx.op(size_t(site.add)).outputs[0]));
  }
  binds->push_back(ctx.Constants(site.norm_op));
  binds->push_back(ctx.Write(norm.outputs[0]));
  if (site.quant) {
    const std::string base = ctx.tensor(norm.outputs[0]).name + ".dq8ca";
    kernels::LowerContext::Quantized q;
    q.rows = ctx.Scratch(linear::PackedK4(site.c) * 4, base);
    q.params = ctx.Scratch(8, base + ".params");
    binds->push_back(q.rows);
    binds->push_back(q.params);
    ctx.ProvideQuantized(norm.outputs[0], ir::Scheme::DQ8CA, 1.0f, 0, {q.rows.AsRead(), q.params.AsRead()});
  }
  binds->push_back(ctx.SyncState());
  ctx.ProvideNormTail(site.norm_op, linear);
  TailBinding t;
  t.eps = norm.norm.eps;
  t.counter = uint32_t(attention::DecodeSyncBytes(ctx.graph(), ctx.fuse(), ctx.profile(), ctx.options()) / 4);
  t.note = "; its last workgroup to finish computes " +
           (site.add >= 0 ? "the residual add '" + ctx.op(size_t(site.add)).name + "', " : std::string()) +
           "the rms_norm '" + norm.name + "'" + (site.quant ? " and its per-token int8 quantization" : "") +
           " (no row dispatch; arrival counter in the bundle's sync state)";
  return t;
}

}  // namespace vkqc::norm
