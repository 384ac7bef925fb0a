// Elementwise float glue ops (mul, silu, sigmoid, hard_sigmoid, hard_swish): dispatch
// parameters of shaders/elementwise.comp. One invocation per value.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/graph/ir.h"
#include "compiler/kernels/linear/linear.h"
#include "compiler/profile/profile.h"

namespace vkqc::elementwise {

// `op` is OpType::Mul with identical shapes (bindings a, b, y), or one of Silu, Sigmoid,
// HardSigmoid (`unary` holds alpha, beta), HardSwish (bindings a, y).
linear::DispatchParams ElementwiseDispatch(ir::OpType op, uint64_t count, const TargetProfile& profile,
                                           const ir::UnaryAttrs& unary = {});
const char* VariantName(ir::OpType op);  // "mul_f32", "silu_f32", "sigmoid_f32", ...

// A broadcasting mul's index space: a's dimensions (innermost first) merged where b broadcasts
// alike (dimensions of size 1 dropped), with b's stride along each (0 where b broadcasts).
struct BroadcastDims {
  std::vector<uint32_t> dims, b_strides;
};
// `a` and `b` concrete shapes, b broadcastable to a (verified). At most 8 dimensions result for
// rank(a) <= 8.
BroadcastDims MergeBroadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// mul with b broadcast to a's shape (bindings a, b, y); `m` from MergeBroadcast (<= 8 dimensions).
linear::DispatchParams BroadcastMulDispatch(const BroadcastDims& m, uint64_t count, const TargetProfile& profile);

}  // namespace vkqc::elementwise
