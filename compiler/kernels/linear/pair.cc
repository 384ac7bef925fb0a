#include "compiler/kernels/linear/pair.h"

#include <cstring>
#include <vector>

namespace vkqc::linear {
namespace {

bool Int4(ir::Scheme s) { return s == ir::Scheme::Q4GSW || s == ir::Scheme::Q4GAW || s == ir::Scheme::Q4GMW; }

// Interleaves the rows of two [n, per_row] arrays: row 2r = a's r, row 2r + 1 = b's r.
template <typename T>
std::vector<T> Interleave(const T* a, const T* b, int64_t n, int64_t per_row) {
  std::vector<T> out(size_t(2 * n * per_row));
  for (int64_t r = 0; r < n; ++r) {
    std::memcpy(out.data() + size_t(2 * r * per_row), a + r * per_row, size_t(per_row) * sizeof(T));
    std::memcpy(out.data() + size_t((2 * r + 1) * per_row), b + r * per_row, size_t(per_row) * sizeof(T));
  }
  return out;
}

}  // namespace

bool CanPair(const ir::Graph& g, const ir::Op& gate, const ir::Op& up, uint64_t max_range) {
  if (gate.type != ir::OpType::Linear || up.type != ir::OpType::Linear) return false;
  if (gate.inputs.size() != up.inputs.size() || gate.inputs[0] != up.inputs[0] || !(gate.linear == up.linear)) return false;
  if (gate.linear.fused_relu || gate.linear.fused_relu6 || gate.linear.output_quant.scheme == ir::Scheme::Q8TO) return false;
  const ir::Tensor& wg = g.tensors[size_t(gate.inputs[1])];
  const ir::Tensor& wu = g.tensors[size_t(up.inputs[1])];
  if (!wg.data || !wu.data || !wg.quant || !wu.quant || wg.shape != wu.shape || wg.shape.size() != 2) return false;
  const ir::Quant& qg = *wg.quant;
  const ir::Quant& qu = *wu.quant;
  if (qg.scheme != qu.scheme || qg.group_size != qu.group_size || qg.scales.size() != qu.scales.size() ||
      qg.zero_points.size() != qu.zero_points.size() || qg.mins.size() != qu.mins.size())
    return false;
  if (gate.inputs.size() > 2) {
    const ir::Tensor& bg = g.tensors[size_t(gate.inputs[2])];
    const ir::Tensor& bu = g.tensors[size_t(up.inputs[2])];
    if (!bg.data || !bu.data || bg.shape != bu.shape) return false;
  }
  const int yg = gate.outputs[0], yu = up.outputs[0];
  if (g.IsOutput(yg) || g.IsOutput(yu) || g.tensors[size_t(yg)].shape != g.tensors[size_t(yu)].shape ||
      g.tensors[size_t(yg)].dtype != ir::DType::F32 || g.tensors[size_t(yu)].dtype != ir::DType::F32)
    return false;
  // The packed region of 2N channels (PackLinear): weights, scales, zero points or minimums, sums, bias.
  const uint64_t n = uint64_t(wg.shape[0]), k = uint64_t(wg.shape[1]);
  const uint64_t kw = Int4(qg.scheme) ? PackedK8(int64_t(k)) : PackedK4(int64_t(k));
  const uint64_t bytes = 2 * n * (kw * 4 + qg.scales.size() / n * 4 + qg.zero_points.size() / n * 4 + qg.mins.size() / n * 4 + 8) + 16;
  return bytes <= max_range;
}

PackedLinear PackPair(const ir::Graph& g, const ir::Op& gate, const ir::Op& up) {
  const ir::Tensor& wg = g.tensors[size_t(gate.inputs[1])];
  const ir::Tensor& wu = g.tensors[size_t(up.inputs[1])];
  const ir::Quant& qg = *wg.quant;
  const ir::Quant& qu = *wu.quant;
  const int64_t n = wg.shape[0], k = wg.shape[1];
  std::vector<uint8_t> w;
  if (Int4(qg.scheme)) {  // two values per byte over the row-major [N, K] values, low nibble first
    w.assign(size_t((2 * n * k + 1) / 2), 0);
    const uint8_t* src[2] = {wg.data->data(), wu.data->data()};
    for (int64_t r = 0; r < 2 * n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const int64_t i = (r / 2) * k + c, o = r * k + c;
        const uint8_t v = (src[r % 2][i / 2] >> (4 * (i % 2))) & 0xF;
        w[size_t(o / 2)] |= uint8_t(v << (4 * (o % 2)));
      }
  } else {
    w = Interleave(wg.data->data(), wu.data->data(), n, k);
  }
  const int64_t groups = int64_t(qg.scales.size()) / n;
  const std::vector<float> scales = Interleave(qg.scales.data(), qu.scales.data(), n, groups);
  const std::vector<int32_t> zps = qg.zero_points.empty()
                                       ? std::vector<int32_t>{}
                                       : Interleave(qg.zero_points.data(), qu.zero_points.data(), n, groups);
  const std::vector<float> mins =
      qg.mins.empty() ? std::vector<float>{} : Interleave(qg.mins.data(), qu.mins.data(), n, groups);
  std::vector<float> bias;
  if (gate.inputs.size() > 2)
    bias = Interleave(reinterpret_cast<const float*>(g.tensors[size_t(gate.inputs[2])].data->data()),
                      reinterpret_cast<const float*>(g.tensors[size_t(up.inputs[2])].data->data()), n, 1);
  return PackLinear(qg.scheme, w.data(), 2 * n, k, qg.group_size, scales.data(), zps.empty() ? nullptr : zps.data(),
                    bias.empty() ? nullptr : bias.data(), mins.empty() ? nullptr : mins.data());
}

}  // namespace vkqc::linear
