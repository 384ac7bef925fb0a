#include "compiler/kernels/elementwise/elementwise.h"

#include <algorithm>

#include "compiler/kernels/lowering.h"

namespace vkqc::elementwise {

const char* VariantName(ir::OpType op) {
  switch (op) {
    case ir::OpType::Mul: return "mul_f32";
    case ir::OpType::Sigmoid: return "sigmoid_f32";
    case ir::OpType::HardSigmoid: return "hard_sigmoid_f32";
    case ir::OpType::HardSwish: return "hard_swish_f32";
    default: return "silu_f32";
  }
}

linear::DispatchParams ElementwiseDispatch(ir::OpType op, uint64_t count, const TargetProfile& p,
                                           const ir::UnaryAttrs& unary) {
  const char* define = "VKQC_OP_SILU";
  if (op == ir::OpType::Mul) define = "VKQC_OP_MUL";
  if (op == ir::OpType::Sigmoid) define = "VKQC_OP_SIGMOID";
  if (op == ir::OpType::HardSigmoid) define = "VKQC_OP_HARD_SIGMOID";
  if (op == ir::OpType::HardSwish) define = "VKQC_OP_HARD_SWISH";
  linear::DispatchParams d = kernels::FlatDispatch("elementwise.comp", {define}, count, 128, p);
  d.spec.push_back({1, uint32_t(count)});
  if (op == ir::OpType::HardSigmoid) {
    d.spec.push_back({2, kernels::FloatBits(unary.alpha)});
    d.spec.push_back({3, kernels::FloatBits(unary.beta)});
  }
  return d;
}

BroadcastDims MergeBroadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  BroadcastDims m;
  const size_t off = a.size() - b.size();
  uint64_t b_stride = 1;
  bool last_broadcast = false;
  for (size_t d = a.size(); d-- > 0;) {
    const int64_t ad = a[d], bd = d >= off ? b[d - off] : 1;
    if (ad == 1) continue;  // a single coordinate: nothing to index
    const bool broadcast = bd == 1;
    if (!m.dims.empty() && broadcast == last_broadcast) {
      m.dims.back() *= uint32_t(ad);
    } else {
      m.dims.push_back(uint32_t(ad));
      m.b_strides.push_back(broadcast ? 0u : uint32_t(b_stride));
      last_broadcast = broadcast;
    }
    b_stride *= uint64_t(bd);
  }
  return m;
}

linear::DispatchParams BroadcastMulDispatch(const BroadcastDims& m, uint64_t count, const TargetProfile& p) {
  linear::DispatchParams d = kernels::FlatDispatch("elementwise.comp", {"VKQC_OP_MUL_BCAST"}, count, 128, p);
  d.spec.push_back({1, uint32_t(count)});
  for (uint32_t i = 0; i < m.dims.size() && i < 8; ++i) {
    d.spec.push_back({4 + i, m.dims[i]});
    d.spec.push_back({12 + i, m.b_strides[i]});
  }
  return d;
}

}  // namespace vkqc::elementwise
