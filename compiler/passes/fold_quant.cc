#include "compiler/passes/fold_quant.h"

#include "compiler/kernels/conv/conv.h"

namespace vkqc {
namespace {

bool PerTensorI8(const ir::Tensor& t) {
  return t.dtype == ir::DType::I8 && t.quant &&
         (t.quant->scheme == ir::Scheme::Q8TA || t.quant->scheme == ir::Scheme::Q8TO);
}

float Scale(const ir::Quant& q) { return q.scales.at(0); }
int32_t Zp(const ir::Quant& q) { return q.zero_points.empty() ? 0 : q.zero_points[0]; }

// The q8to output quant an op writes (nullptr when it has none).
ir::Quant* OutputQuant(ir::Op& op) {
  switch (op.type) {
    case ir::OpType::Linear: return &op.linear.output_quant;
    case ir::OpType::Conv2d: return &op.conv2d.output_quant;
    case ir::OpType::Add: return &op.add.output_quant;
    case ir::OpType::AvgPool2d:
    case ir::OpType::MaxPool2d: return &op.pool.output_quant;
    case ir::OpType::Concat: return &op.concat.output_quant;
    default: return nullptr;
  }
}

}  // namespace

FoldPlan FoldQuantization(ir::Graph& g) {
  FoldPlan plan;
  const size_t nops = g.ops.size(), nt = g.tensors.size();
  plan.folded.assign(nops, "");
  plan.requant_source.assign(nops, -1);
  plan.remains.assign(nops, "");
  plan.alias.resize(nt);
  for (size_t t = 0; t < nt; ++t) plan.alias[t] = int(t);
  std::vector<int> producer(nt, -1);
  std::vector<std::vector<int>> readers(nt);
  std::vector<bool> graph_io(nt, false);
  for (size_t i = 0; i < nops; ++i) {
    for (int t : g.ops[i].outputs) producer[t] = int(i);
    for (int t : g.ops[i].inputs) readers[t].push_back(int(i));
  }
  for (int t : g.inputs) graph_io[t] = true;
  for (int t : g.outputs) graph_io[t] = true;
  auto name = [&](int op) { return "'" + g.ops[op].name + "'"; };

  for (size_t qi = 0; qi < nops; ++qi) {
    ir::Op& q = g.ops[qi];
    if (q.type != ir::OpType::Quantize) continue;
    const int x = q.inputs[0], y = q.outputs[0];
    ir::Tensor& yt = g.tensors[y];
    if (!PerTensorI8(yt) || graph_io[y]) continue;
    // float -> int8 read only by a dense convolution through im2col: the convolution quantizes
    // its float input itself (input_quant), in its im2col (no packed int8 copy of the input).
    if (readers[y].size() == 1 && g.tensors[x].dtype == ir::DType::F32) {
      ir::Op& c = g.ops[size_t(readers[y][0])];
      if (c.type == ir::OpType::Conv2d && c.inputs[0] == y && c.conv2d.groups == 1 && !conv::IsPointwise(g, c) &&
          c.conv2d.input_quant.scheme == ir::Scheme::None) {
        c.inputs[0] = x;
        c.conv2d.input_quant = *yt.quant;
        c.conv2d.input_quant.scheme = ir::Scheme::Q8TA;
        plan.folded[qi] = "folded into " + name(readers[y][0]) + ", which quantizes its float input as it gathers its im2col rows";
        continue;
      }
    }
    if (graph_io[x] || readers[x].size() != 1) continue;
    const int di = producer[x];
    if (di < 0) continue;
    ir::Op& d = g.ops[di];
    if (d.type == ir::OpType::Linear || d.type == ir::OpType::Conv2d) {
      // float output read only by this quantize: the producer writes the int8 tensor.
      ir::Quant* oq = OutputQuant(d);
      ir::Quant out = *yt.quant;
      out.scheme = ir::Scheme::Q8TO;
      *oq = out;
      yt.quant = out;
      d.outputs[0] = y;
      producer[y] = di;
      plan.folded[qi] = "folded into " + name(di) + ", which writes int8 (q8to) directly";
      continue;
    }
    if (d.type != ir::OpType::Dequantize) continue;
    const int p = d.inputs[0];
    const ir::Tensor& pt = g.tensors[p];
    if (!PerTensorI8(pt)) continue;
    const int pi = producer[p];
    if (Scale(*pt.quant) == Scale(*yt.quant) && Zp(*pt.quant) == Zp(*yt.quant)) {
      plan.alias[y] = p;
      yt.quant = pt.quant;
      plan.folded[di] = "folded: " + name(int(qi)) + " re-quantizes with the same parameters";
      plan.folded[qi] = "folded: the int8 tensor '" + pt.name + "' is used as is";
      continue;
    }
    ir::Quant* pq = pi >= 0 ? OutputQuant(g.ops[pi]) : nullptr;
    // Requantizing in the producer skips the old clamp: only sound when the new parameters'
    // real range lies inside the old one.
    const float s1 = Scale(*pt.quant), s2 = Scale(*yt.quant);
    const int32_t z1 = Zp(*pt.quant), z2 = Zp(*yt.quant);
    const bool inside = s2 * float(-128 - z2) >= s1 * float(-128 - z1) && s2 * float(127 - z2) <= s1 * float(127 - z1);
    if (pq && pq->scheme == ir::Scheme::Q8TO && readers[p].size() == 1 && !graph_io[p] && inside) {
      ir::Quant out = *yt.quant;
      out.scheme = ir::Scheme::Q8TO;
      *pq = out;
      g.tensors[p].quant = out;
      yt.quant = out;
      plan.alias[y] = p;
      plan.folded[di] = "folded: " + name(pi) + " requantizes to the parameters of " + name(int(qi));
      plan.folded[qi] = "folded into " + name(pi);
      continue;
    }
    plan.folded[di] = "folded into the requantize " + name(int(qi));
    plan.requant_source[qi] = p;
    plan.remains[qi] = "requantize int8 -> int8 (" +
                       std::string(!inside ? "the new range is wider than the old one, whose clamp must stay"
                                   : "the producer of '" + pt.name + "' cannot take the new parameters, or '" +
                                         pt.name + "' has other readers") + ")";
  }
  // Why each remaining conversion remains.
  for (size_t i = 0; i < nops; ++i) {
    const ir::Op& op = g.ops[i];
    if (!plan.folded[i].empty() || !plan.remains[i].empty()) continue;
    if (op.type == ir::OpType::Quantize) {
      const int x = op.inputs[0], pi = producer[x];
      plan.remains[i] = pi < 0 ? "the graph input '" + g.tensors[x].name + "' is float"
                               : "its input comes from " + name(pi) + " (" + ir::OpTypeName(g.ops[pi].type) +
                                     "), which writes float only";
    } else if (op.type == ir::OpType::Dequantize) {
      const int y = op.outputs[0];
      std::string who;
      for (int r : readers[y]) who += (who.empty() ? "" : ", ") + name(r) + " (" + ir::OpTypeName(g.ops[r].type) + ")";
      plan.remains[i] = graph_io[y] ? "the graph output '" + g.tensors[y].name + "' is float"
                                    : "read by " + who + ", which take float";
    }
  }
  return plan;
}

}  // namespace vkqc
