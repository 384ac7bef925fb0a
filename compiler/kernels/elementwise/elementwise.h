// Elementwise float glue ops (mul, silu): dispatch parameters. One invocation per value.
#pragma once
#include <cstdint>

#include "compiler/graph/ir.h"
#include "compiler/kernels/linear/linear.h"
#include "compiler/profile/profile.h"

namespace vkqc::elementwise {

// `op` is OpType::Mul (bindings a, b, y) or OpType::Silu (bindings a, y).
linear::DispatchParams ElementwiseDispatch(ir::OpType op, uint64_t count, const TargetProfile& profile);
const char* VariantName(ir::OpType op);  // "mul_f32", "silu_f32"

}  // namespace vkqc::elementwise
