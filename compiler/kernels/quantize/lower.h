// quantize / dequantize lowering (kernels/lowering.h): the requantize left by the fold pass,
// convert.comp for f16 / i32 / per-channel conversions, and the f32 <-> int8 per-tensor and
// per-token kernels (quantize_*.comp, dequantize through conv::DequantizeDispatch).
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::quantize {
const kernels::Family& Lowering();
}  // namespace vkqc::quantize
