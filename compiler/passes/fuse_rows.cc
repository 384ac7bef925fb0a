#include "compiler/passes/fuse_rows.h"

#include <algorithm>

#include "compiler/kernels/conv/conv.h"
#include "compiler/kernels/linear/pair.h"

namespace vkqc {

bool FusePlan::empty() const {
  return std::all_of(emitted_by.begin(), emitted_by.end(), [](int v) { return v < 0; });
}

FusePlan FuseRows(const ir::Graph& g, const FoldPlan& fold, const FuseOptions& o) {
  const uint32_t max_storage_buffers = o.max_storage_buffers;
  const size_t n = g.ops.size();
  FusePlan p;
  p.emitted_by.assign(n, -1);
  p.row_input.assign(n, -1);
  p.rope_q.assign(n, -1);
  p.rope_k.assign(n, -1);
  p.conv_add.assign(n, -1);
  p.conv_dw.assign(n, -1);
  p.conv_pool.assign(n, -1);
  p.conv_next.assign(n, -1);
  p.pair_mul.assign(n, -1);
  p.pair_gate.assign(n, -1);
  p.pair_up.assign(n, -1);
  std::vector<int> producer(g.tensors.size(), -1);
  std::vector<std::vector<int>> consumers(g.tensors.size());
  for (size_t i = 0; i < n; ++i) {
    if (!fold.folded[i].empty()) continue;
    for (int t : g.ops[i].outputs) producer[size_t(t)] = int(i);
    for (int t : g.ops[i].inputs) consumers[size_t(t)].push_back(int(i));
  }
  for (size_t j = 0; j < n; ++j) {
    const ir::Op& op = g.ops[j];
    if (!fold.folded[j].empty()) continue;
    if (op.type == ir::OpType::RmsNorm && max_storage_buffers >= 5) {  // x, residual, w, sum, y
      const int x = op.inputs[0], i = producer[size_t(x)];
      if (i < 0 || p.emitted_by[size_t(i)] >= 0) continue;
      const ir::Op& add = g.ops[size_t(i)];
      if (add.type != ir::OpType::Add || g.tensors[size_t(x)].dtype != ir::DType::F32 ||
          add.add.activation != ir::Activation::None)
        continue;
      // Every other reader of the sum comes after the norm (it is written by the norm's dispatch).
      bool later = true;
      for (int c : consumers[size_t(x)]) later = later && c >= int(j);
      if (!later) continue;
      p.emitted_by[size_t(i)] = int(j);
      p.row_input[j] = i;
    } else if (op.type == ir::OpType::Attention && max_storage_buffers >= 8) {  // + the position (uniform)
      const int q = op.inputs[0], k = op.inputs[1], rq = producer[size_t(q)], rk = producer[size_t(k)];
      if (rq < 0 || rk < 0 || rq == rk) continue;
      const ir::Op& a = g.ops[size_t(rq)];
      const ir::Op& b = g.ops[size_t(rk)];
      if (a.type != ir::OpType::Rope || b.type != ir::OpType::Rope || !(a.rope == b.rope) ||
          a.inputs[1] != op.inputs[5] || b.inputs[1] != op.inputs[5] || a.rope.head_dim != op.attention.head_dim)
        continue;
      if (consumers[size_t(q)].size() != 1 || consumers[size_t(k)].size() != 1 || g.IsOutput(q) || g.IsOutput(k)) continue;
      p.emitted_by[size_t(rq)] = p.emitted_by[size_t(rk)] = int(j);
      p.rope_q[j] = rq;
      p.rope_k[j] = rk;
    } else if (conv::IsPointwise(g, op) && g.tensors[size_t(op.inputs[0])].dtype == ir::DType::I8) {
      const int x = op.inputs[0], i = producer[size_t(x)];
      if (i < 0 || p.emitted_by[size_t(i)] >= 0 || consumers[size_t(x)].size() != 1 || g.IsOutput(x)) continue;
      if (!conv::IsInt8Depthwise(g, g.ops[size_t(i)])) continue;
      p.emitted_by[size_t(i)] = int(j);
      p.conv_dw[j] = i;
    } else if (op.type == ir::OpType::Add && g.tensors[size_t(op.outputs[0])].dtype == ir::DType::I8 &&
               max_storage_buffers >= 4) {  // x, w, sum, the other operand
      for (int side = 0; side < 2; ++side) {
        const int y = op.inputs[size_t(side)], other = op.inputs[size_t(1 - side)], i = producer[size_t(y)];
        if (i < 0 || y == other || g.ops[size_t(i)].type != ir::OpType::Conv2d || p.emitted_by[size_t(i)] >= 0 ||
            p.conv_add[size_t(i)] >= 0)
          continue;
        if (g.tensors[size_t(y)].dtype != ir::DType::I8 || consumers[size_t(y)].size() != 1 || g.IsOutput(y)) continue;
        if (producer[size_t(other)] >= i) continue;  // the other operand must exist when the convolution runs
        p.emitted_by[j] = i;
        p.conv_add[size_t(i)] = int(j);
        break;
      }
    } else if (conv::IsInt8GlobalAvgPool(g, op)) {
      const int y = op.inputs[0], i = producer[size_t(y)];
      if (i < 0 || p.emitted_by[size_t(i)] >= 0 || consumers[size_t(y)].size() != 1 || g.IsOutput(y)) continue;
      // (y is int8, and its only reader is this pool: no add can be computed by the same conv.)
      const ir::Op& c = g.ops[size_t(i)];
      if (!conv::IsPointwise(g, c) || g.tensors[size_t(c.inputs[0])].dtype != ir::DType::I8) continue;
      p.emitted_by[j] = i;
      p.conv_pool[size_t(i)] = int(j);
    } else if (op.type == ir::OpType::Mul) {
      const int a = op.inputs[0], i = producer[size_t(a)];
      if (i < 0 || g.ops[size_t(i)].type != ir::OpType::Silu || p.emitted_by[size_t(i)] >= 0) continue;
      if (consumers[size_t(a)].size() != 1 || g.IsOutput(a) || op.inputs[1] == a) continue;
      if (g.tensors[size_t(op.inputs[1])].shape != g.tensors[size_t(a)].shape) continue;  // a broadcasting mul
      p.emitted_by[size_t(i)] = int(j);
      p.row_input[j] = i;
      // The gate (silu's input) and up (the mul's other operand) linears as one.
      const int gate = producer[size_t(g.ops[size_t(i)].inputs[0])], up = producer[size_t(op.inputs[1])];
      if (!o.pair_linears || gate < 0 || up < 0 || gate == up) continue;
      if (consumers[size_t(g.ops[size_t(i)].inputs[0])].size() != 1 || consumers[size_t(op.inputs[1])].size() != 1 ||
          p.emitted_by[size_t(gate)] >= 0 || p.emitted_by[size_t(up)] >= 0 ||
          !linear::CanPair(g, g.ops[size_t(gate)], g.ops[size_t(up)], o.max_storage_buffer_range))
        continue;
      p.emitted_by[size_t(std::max(gate, up))] = std::min(gate, up);
      p.pair_mul[size_t(std::min(gate, up))] = int(j);
      p.pair_gate[j] = gate;
      p.pair_up[j] = up;
    }
  }
  // A pointwise int8 convolution reading the output of a convolution that computes its depthwise
  // input (or that convolution's fused add's sum), after the first loop (the adds are placed).
  if (o.chain_convs && max_storage_buffers >= 6)  // + the chained weights and output
    for (size_t e = 0; e < n; ++e) {
      const ir::Op& op = g.ops[e];
      if (!fold.folded[e].empty() || p.emitted_by[e] >= 0 || !conv::IsPointwise(g, op)) continue;
      if (g.tensors[size_t(op.inputs[0])].dtype != ir::DType::I8 || g.tensors[size_t(op.outputs[0])].dtype != ir::DType::I8 ||
          op.conv2d.output_quant.scheme != ir::Scheme::Q8TO || p.conv_dw[e] >= 0 || p.conv_add[e] >= 0 || p.conv_pool[e] >= 0)
        continue;
      int src = producer[size_t(op.inputs[0])];
      if (src < 0) continue;
      if (g.ops[size_t(src)].type == ir::OpType::Add) {
        src = p.emitted_by[size_t(src)];
        if (src < 0 || g.ops[size_t(src)].type != ir::OpType::Conv2d || p.conv_add[size_t(src)] != producer[size_t(op.inputs[0])])
          continue;
      }
      if (p.conv_dw[size_t(src)] < 0 || p.conv_next[size_t(src)] >= 0 || p.conv_pool[size_t(src)] >= 0) continue;
      p.emitted_by[e] = src;
      p.conv_next[size_t(src)] = int(e);
    }
  return p;
}

}  // namespace vkqc
