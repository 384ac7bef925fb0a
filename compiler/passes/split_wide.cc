#include "compiler/passes/split_wide.h"

#include <algorithm>
#include <set>
#include <string>

#include "compiler/kernels/linear/linear.h"

namespace vkqc {
namespace {

constexpr int64_t kChannelStep = 64;  // parts hold whole multiples of this many channels (even: int4 rows stay byte-aligned)

// The channels of each part but the last, or 0 when not even kChannelStep channels fit.
int64_t ChannelsPerPart(const ir::Quant& q, int64_t n, int64_t k, uint64_t range) {
  if (linear::PackedLinearBytes(q.scheme, n, k, q.group_size) <= range) return n;
  int64_t lo = 0, hi = n / kChannelStep;  // in steps: the packed bytes grow with the channels
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (linear::PackedLinearBytes(q.scheme, mid * kChannelStep, k, q.group_size) <= range) lo = mid;
    else hi = mid - 1;
  }
  // As many parts as that takes, their channels evened out (fewer channels a part, same count).
  if (lo == 0) return 0;
  const int64_t parts = (n + lo * kChannelStep - 1) / (lo * kChannelStep);
  return ((n + parts - 1) / parts + kChannelStep - 1) / kChannelStep * kChannelStep;
}

template <typename T>
std::vector<T> Rows(const std::vector<T>& v, int64_t n, int64_t n0, int64_t n1) {
  if (v.empty()) return {};
  const size_t per = v.size() / size_t(n);
  return std::vector<T>(v.begin() + int64_t(per) * n0, v.begin() + int64_t(per) * n1);
}

int AddTensor(ir::Graph* g, ir::Tensor t) {
  g->tensors.push_back(std::move(t));
  return int(g->tensors.size() - 1);
}

// `base` + "/" + `p`, with "'" appended until no name in `taken` is it (a graph may already
// name a tensor or an op that way); the name is then taken.
std::string PartName(const std::string& base, int64_t p, std::set<std::string>* taken) {
  std::string name = base;
  name += '/';  // (not base + "/" + ...: GCC 12 warns -Wrestrict on that)
  name += std::to_string(p);
  while (!taken->insert(name).second) name += '\'';
  return name;
}

}  // namespace

std::vector<int32_t> SplitWideLinears(ir::Graph* g, uint64_t range) {
  bool split = false;
  std::set<std::string> op_names, tensor_names;  // the parts' names are new in each namespace
  for (const ir::Op& op : g->ops) op_names.insert(op.name);
  for (const ir::Tensor& t : g->tensors) tensor_names.insert(t.name);
  std::vector<ir::Op> ops;
  std::vector<int32_t> source;
  ops.reserve(g->ops.size());
  for (size_t i = 0; i < g->ops.size(); ++i) {
    ir::Op& op = g->ops[i];
    const ir::Tensor* wt = op.type == ir::OpType::Linear ? &g->tensors[size_t(op.inputs[1])] : nullptr;
    const int64_t per = wt && wt->quant ? ChannelsPerPart(*wt->quant, wt->shape[0], wt->shape[1], range) : 0;
    if (per == 0 || per >= wt->shape[0]) {
      ops.push_back(std::move(op));
      source.push_back(int32_t(i));
      continue;
    }
    const ir::Tensor w = *wt;  // a copy: the tensors grow below
    const int64_t n = w.shape[0], k = w.shape[1];
    split = true;
    const ir::Tensor y = g->tensors[size_t(op.outputs[0])];
    const int64_t bits = ir::DTypeBits(w.dtype);
    ir::Op concat;
    concat.name = op.name;
    concat.type = ir::OpType::Concat;
    concat.concat.axis = -1;
    if (y.dtype == ir::DType::I8) concat.concat.output_quant = op.linear.output_quant;
    concat.outputs = op.outputs;
    const int64_t parts = (n + per - 1) / per;
    for (int64_t p = 0; p < parts; ++p) {
      const int64_t n0 = p * per, n1 = std::min(n, n0 + per);
      ir::Tensor wp = w;
      wp.name = PartName(w.name, p, &tensor_names);
      wp.shape[0] = n1 - n0;
      // Rows of the IR's bytes: n0 * k * bits is a multiple of 8 (n0 a multiple of kChannelStep).
      const size_t b0 = size_t(n0 * k * bits / 8), b1 = std::min(size_t((n1 * k * bits + 7) / 8), w.data->size);
      wp.data->offset += b0;
      wp.data->size = b1 - b0;
      wp.quant->scales = Rows(w.quant->scales, n, n0, n1);
      wp.quant->zero_points = Rows(w.quant->zero_points, n, n0, n1);
      wp.quant->mins = Rows(w.quant->mins, n, n0, n1);
      ir::Op part = op;
      part.name = PartName(op.name, p, &op_names);
      part.inputs[1] = AddTensor(g, std::move(wp));
      if (op.inputs.size() > 2) {
        ir::Tensor bp = g->tensors[size_t(op.inputs[2])];
        bp.name = PartName(bp.name, p, &tensor_names);
        bp.shape = {n1 - n0};
        bp.data->offset += size_t(n0) * 4;
        bp.data->size = size_t(n1 - n0) * 4;
        part.inputs[2] = AddTensor(g, std::move(bp));
      }
      ir::Tensor yp = y;
      yp.name = PartName(y.name, p, &tensor_names);
      yp.shape.back() = n1 - n0;
      part.outputs = {AddTensor(g, std::move(yp))};
      part.compiler_note = "output channels " + std::to_string(n0) + ".." + std::to_string(n1 - 1) + " of '" + op.name +
                           "', whose packed weights (" + std::to_string(linear::PackedLinearBytes(w.quant->scheme, n, k, w.quant->group_size)) +
                           " bytes) exceed one binding (maxStorageBufferRange " + std::to_string(range) + ")";
      concat.inputs.push_back(part.outputs[0]);
      ops.push_back(std::move(part));
      source.push_back(-1);
    }
    concat.compiler_note = "joins the " + std::to_string(parts) + " parts of the linear '" + op.name + "' (" +
                           std::to_string(n) + " channels wider than one binding)";
    ops.push_back(std::move(concat));
    source.push_back(int32_t(i));
  }
  g->ops = std::move(ops);
  if (!split) source.clear();
  return source;
}

}  // namespace vkqc
