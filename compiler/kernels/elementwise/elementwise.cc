#include "compiler/kernels/elementwise/elementwise.h"

#include <algorithm>

namespace vkqc::elementwise {

const char* VariantName(ir::OpType op) { return op == ir::OpType::Mul ? "mul_f32" : "silu_f32"; }

linear::DispatchParams ElementwiseDispatch(ir::OpType op, uint64_t count, const TargetProfile& p) {
  linear::DispatchParams d;
  d.shader = {"elementwise.comp", {op == ir::OpType::Mul ? "VKQC_OP_MUL" : "VKQC_OP_SILU"}};
  const uint32_t local = std::min<uint32_t>(128, p.max_compute_work_group_invocations);
  d.spec = {{0, local}, {1, uint32_t(count)}};
  d.local_size[0] = local;
  d.local_size[1] = d.local_size[2] = 1;
  linear::SplitGroups((count + local - 1) / local, p.max_compute_work_group_count[0], d.group_count);
  d.group_count[2] = 1;
  return d;
}

}  // namespace vkqc::elementwise
