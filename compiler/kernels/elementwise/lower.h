// Elementwise lowering (kernels/lowering.h): mul, silu, add (f32, or int8 with requantization).
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::elementwise {
const kernels::Family& Lowering();
}  // namespace vkqc::elementwise
