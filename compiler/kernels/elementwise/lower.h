// Elementwise lowering (kernels/lowering.h): mul (identical shapes, or b broadcast to a's), silu,
// sigmoid, hard_sigmoid, hard_swish, add (f32, or int8 with requantization).
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::elementwise {
const kernels::Family& Lowering();
}  // namespace vkqc::elementwise
